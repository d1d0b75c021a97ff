"""The transfer matrix: one-sided write models (trained once, reused by fingerprint) and every
writer judged on every task's held-out rows (scripted fake models; no training here)."""

from __future__ import annotations

import json

import pytest

from mags_lib.errors import MagsError
from mags_lib.evaluation.transfer import row_group, transfer_markdown, transfer_matrix
from mags_lib.llm import Completion
from mags_lib.objectives.data import write_jsonl
from mags_lib.synth import SynthConfig
from mags_lib.synth.chains import heldout_write_rows
from mags_lib.synth.conversation_rows import locomo_judge_rows, persona_judge_rows
from mags_lib.train import transfer as T


class Scripted:
    """Answers a prompt with the row's gold completion where it knows it, else stores nothing."""

    def __init__(self, rows=()):
        self.table = {r["prompt"][-1]["content"]: r["completion"][0]["content"] for r in rows}

    def chat(self, messages, **kw):
        text = self.table.get(messages[-1]["content"], "<engram>\n</engram>")
        return Completion(text.removesuffix("</engram>"), finish_reason="stop")


def _row(op: str, source: str | None = None) -> dict:
    gold = {"op": op, "ops": [], "observation": "x"} | ({"source": source} if source else {})
    return {"task": "write", "prompt": [{"role": "user", "content": f"{op} {source}"}],
            "completion": [{"role": "assistant", "content": "<engram>\n</engram>"}],
            "gold": gold, "game_seed": 1}


# ----- the rows judged ------------------------------------------------------------------------

def test_game_rows_come_from_the_bank_asked_for_and_never_the_training_one():
    cfg = SynthConfig(smoke=True).resolved()
    seeds = cfg.split_seeds()["test"][:1]
    dev = heldout_write_rows(seeds, cfg, 2)
    test = heldout_write_rows(seeds, cfg, 2, phrasings="test")
    assert {r["gold"]["phrasings"] for r in dev} == {"heldout"}
    assert {r["gold"]["phrasings"] for r in test} == {"test"}
    assert {r["gold"]["observation"] for r in dev} != {r["gold"]["observation"] for r in test}
    with pytest.raises(MagsError, match="never trained on"):
        heldout_write_rows(seeds, cfg, 2, phrasings="train")


def test_locomo_rows_are_empty_without_the_file_and_a_wrong_path_is_named(tmp_path,
                                                                          monkeypatch):
    import mags_lib.conversations.locomo as locomo

    monkeypatch.delenv("MAGS_LOCOMO", raising=False)
    monkeypatch.setattr(locomo, "locomo_path", lambda explicit=None: None)
    assert locomo_judge_rows("test", 1, 5) == []
    monkeypatch.undo()
    monkeypatch.setenv("MAGS_LOCOMO", str(tmp_path / "absent.json"))
    with pytest.raises(MagsError, match="absent.json"):
        locomo_judge_rows("test", 1, 5)


@pytest.mark.skipif(not __import__("mags_lib.tasks.registry", fromlist=["get_task"])
                    .get_task("locomo").available(), reason="LoCoMo file absent")
def test_locomo_rows_are_test_conversations_sampled_and_prompted_as_in_play():
    rows = locomo_judge_rows("test", 1, 10)
    assert len(rows) == 10 and {r["gold"]["conversation"] for r in rows} == {"conv-44"}
    assert [r["gold"]["turn"] for r in rows] == sorted(r["gold"]["turn"] for r in rows)
    assert {r["gold"]["op"] for r in rows} <= {"add", "none"}
    assert rows == locomo_judge_rows("test", 1, 10)  # seeded


# ----- the matrix -----------------------------------------------------------------------------

def test_matrix_scores_each_writer_on_each_surface_with_paired_differences():
    two = persona_judge_rows("test", 2)["write"]
    persona = two[:15] + two[-15:]  # rows of both conversations
    game = heldout_write_rows(SynthConfig(smoke=True).resolved().split_seeds()["test"][:2],
                              SynthConfig(smoke=True).resolved(), 3)
    writers = {"mix": Scripted(persona + game), "game": Scripted(game), "lazy": Scripted()}
    got = transfer_matrix(writers, {"game": game, "persona": persona, "locomo": []})
    cells = got["cells"]
    assert got["skipped"] == ["locomo"] and got["surfaces"] == {"game": len(game),
                                                                "persona": 30}
    assert cells["mix"]["game"]["op_accuracy"] == cells["mix"]["persona"]["op_accuracy"] == 1.0
    assert cells["game"]["game"]["op_accuracy"] == 1.0
    lazy = cells["lazy"]["persona"]
    share_none = sum(r["gold"]["op"] == "none" for r in persona) / 30
    assert lazy["op_accuracy"] == pytest.approx(share_none) and lazy["dropped"] == 1.0
    assert cells["game"]["persona"]["op_accuracy"] == pytest.approx(share_none)
    assert cells["lazy"]["persona"]["groups"] == 2
    lo, hi = lazy["op_ci95"]
    assert lo <= share_none <= hi
    diff = got["differences"]["lazy"]["persona"]
    assert diff["difference"] == pytest.approx(share_none - 1.0)
    assert diff["ci95"][1] <= 0 and "mix" not in got["differences"]
    assert json.loads(json.dumps(got)) == got  # saved as JSON as it is
    text = transfer_markdown(got, {"game": "game only"})
    assert "| game only |" in text and "Not judged (no rows): locomo" in text
    assert "Paired difference to `mix`" in text and "update:" in text
    lazy_row = next(ln for ln in text.split("\n") if ln.startswith("| lazy | 0.333"))
    assert lazy_row.count("bal. 0.333") == 2 and f"| {share_none:.3f} [" in lazy_row


def test_row_groups_are_conversations_or_games():
    assert row_group(_row("add", "persona") | {"gold": {"conversation": "c1"}}) == "c1"
    assert row_group(_row("add")) == "game-1"


def test_markdown_says_when_nothing_was_judged():
    assert "No transfer matrix" in transfer_markdown(transfer_matrix({}, {"a": []}))


# ----- one-sided training, reused by fingerprint ----------------------------------------------

def _data(tmp_path):
    rows = [_row(op, s) for op in ("add", "none") for s in ("persona", None, "locomo")] * 2
    for split in ("train", "val"):
        write_jsonl(tmp_path / "data" / "write" / f"{split}.jsonl", rows)
    return str(tmp_path / "data")


def test_side_configs_keep_one_side_and_train_once(tmp_path, monkeypatch):
    from dataclasses import replace

    import mags_lib.train.stages as stages

    data = _data(tmp_path)
    cfg = replace(T.side_config("conversations", sft_steps=3, grpo_steps=1,
                                models_dir=tmp_path / "m"), data_dir=data)
    assert cfg.sources == ["persona", "locomo"] and cfg.sft.max_steps == 3
    with pytest.raises(MagsError, match="unknown transfer side"):
        T.side_config("poetry")
    calls = []

    class Report:
        def table(self):
            return [{"stage": "sft"}]

        def metrics(self):
            return {"stages": {}, "data": {"n": {"train": 8}}}

    def fake_train(c):
        calls.append(c)
        for stage in ("sft", "grpo"):
            (c.model_dir(stage)).mkdir(parents=True, exist_ok=True)
            (c.model_dir(stage) / "config.json").write_text("{}")
        from mags_lib.checkpoints import write_selection

        write_selection("write", "sft", "test", c.model_dir("sft"), c.models_dir)
        return Report()

    monkeypatch.setattr(stages, "train_role", fake_train)
    first = T.train_side(cfg)
    assert not first["reused"] and first["stage"] == "sft" and len(calls) == 1
    assert first["metrics"]["data"]["n"]["train"] == 8
    again = T.train_side(replace(cfg, torch_threads=1))  # threads do not change the model
    assert again["reused"] and len(calls) == 1 and again["fingerprint"] == first["fingerprint"]
    T.train_side(cfg.with_steps(4))  # another configuration: trained again
    assert len(calls) == 2
    T.train_side(cfg.with_steps(4), resume=False)
    assert len(calls) == 3
    (tmp_path / "m" / "write-sft" / "config.json").unlink()  # the model is gone: retrained
    T.train_side(cfg.with_steps(4))
    assert len(calls) == 4
    (tmp_path / "m" / T.STAMP).write_text("{broken")
    assert T.trained(cfg.with_steps(4)) is None


def test_one_pass_steps_show_each_side_its_rows_as_the_mix_did(tmp_path):
    from dataclasses import replace

    data = _data(tmp_path)  # 4 rows of each source: game (unnamed), persona, locomo
    mix = {"game": 3, "persona": 1}

    def side(name):
        cfg = replace(T.side_config(name, source_repeats=mix, models_dir=tmp_path / name),
                      data_dir=data)
        cfg.sft = replace(cfg.sft, per_device_train_batch_size=4)
        return cfg

    game, talk = side("game"), side("conversations")
    assert game.source_repeats == {"game": 3} and talk.source_repeats == {"persona": 1}
    assert T.one_pass_steps(game) == 3  # 4 game rows x 3 = 12, at 4 a step
    assert T.one_pass_steps(talk) == 2  # 4 persona + 4 locomo rows
    assert T.one_pass_steps(game.with_steps(99)) == 3  # the count ignores the steps set
    assert T.fingerprint(game) != T.fingerprint(replace(game, source_repeats={}))
    # matched to the mix's recorded steps: 20 rows (12 game + 4 persona + 4 locomo) at 4 a step
    recorded = {"sources": ["game", "persona", "locomo"], "source_repeats": mix,
                "sft": {"max_steps": 5}}  # one pass
    assert T.matched_steps(game, recorded) == 3 and T.matched_steps(talk, recorded) == 2
    assert T.matched_steps(game, {**recorded, "sources": None}) == 3  # None: every source
    twice = {**recorded, "sft": {"max_steps": 10}}  # two passes: each side twice as long
    assert T.matched_steps(game, twice) == 6 and T.matched_steps(talk, twice) == 4
    with pytest.raises(MagsError, match="not on the transfer sides"):
        T.matched_steps(game, {**recorded, "sources": ["game"]})
    with pytest.raises(MagsError, match="no sft.max_steps"):
        T.matched_steps(game, {**recorded, "sft": {}})
