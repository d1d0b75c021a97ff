"""The answer model's order: rows written in every order (`chains.order_twins`,
`SynthConfig.answer_all_orders`) and the order probe (`evaluation/answer_order.py`)."""

from __future__ import annotations

import re

import pytest

from mags_lib.agents.option_order import text_order
from mags_lib.errors import MagsError
from mags_lib.evaluation.answer_order import order_probe, place, row_parts, summarize
from mags_lib.game import generate_episode
from mags_lib.objectives.data import load_jsonl
from mags_lib.synth import SynthConfig, synthesize
from mags_lib.synth.chains import episode_rows, game_config, order_twins


@pytest.fixture(scope="module")
def answer_rows():
    cfg = SynthConfig(surfaces=["varied"])
    rows = episode_rows(generate_episode(game_config(cfg, 4_343, 0)), cfg)[0]["answer"]
    assert {r["gold"]["prompt_format"] for r in rows} == {"completion", "chat"}
    return rows


def test_every_answer_row_is_rebuilt_from_its_prompt(answer_rows):
    """row_parts gives back the lines and question each row's prompt was made of (both
    formats), and refuses a prompt that was not made so."""
    for row in answer_rows:
        lines, question, fmt = row_parts(row)
        assert question == row["gold"]["observation"] and fmt == row["gold"]["prompt_format"]
        assert all(line in row["prompt"][-1]["content"] for line in lines)
    tampered = {**answer_rows[0], "prompt": [{"role": "user", "content": "Feed it."}]}
    assert row_parts(tampered) is None


def test_order_twins_move_each_option_through_each_place_and_keep_all_else(answer_rows):
    for row in answer_rows:
        twins = order_twins(row)
        options = row["gold"]["options"]
        assert twins[0] is row and len(twins) == len(options)
        firsts = [text_order(t["gold"]["observation"], options)[0] for t in twins]
        assert sorted(firsts) == sorted(options)  # each option named first once
        for t in twins:
            assert t["completion"] == row["completion"]
            kept = {k: v for k, v in t["gold"].items() if k != "order_rotation"}
            assert {**kept, "observation": None} == {**row["gold"], "observation": None}
            lines, question, _ = row_parts(t)
            assert question == t["gold"]["observation"] and lines == row_parts(row)[0]
    alone = {**answer_rows[0], "gold": {**answer_rows[0]["gold"], "observation": "elsewhere"}}
    assert order_twins(alone) == [alone]


def test_answer_all_orders_writes_train_rows_in_every_order_and_leaves_val_test(tmp_path):
    tiny = dict(smoke=True, n_train_games=2, episode_length=60, expand=False,
                max_rows={"ask": 12, "write": 12, "answer": 12}, max_eval_rows=6)
    runs = {}
    for flag in (False, True):
        out = tmp_path / str(flag)
        synthesize(SynthConfig(**tiny, answer_all_orders=flag), out_dir=out)
        runs[flag] = {s: load_jsonl(out / "answer" / f"{s}.jsonl", task="answer")[0]
                      for s in ("train", "val", "test")}
    off, on = runs[False], runs[True]
    assert on["val"] == off["val"] and on["test"] == off["test"]
    assert on["train"] == [t for r in off["train"] for t in order_twins(r)]
    assert len(on["train"]) > len(off["train"])


class PlaceLLM:
    """Scores an `<answer>` continuation: `note` for the option a memory line says the creature
    eats, `last` for the option the question names last."""

    def __init__(self, note: float, last: float):
        self.note, self.last = note, last

    def score(self, prompt: str, continuations: list[str]) -> list[float]:
        *notes, question, _stem = prompt.removesuffix("<answer>").split("\n")
        items = [c.removesuffix("</answer>") for c in continuations]
        named_last = max(items, key=lambda i: re.search(rf"\b{i}\b", question).start())
        return [self.note * any(f"only the {i}" in n for n in notes) + self.last * (i == named_last)
                for i in items]


def test_the_probe_measures_a_bias_for_the_last_named_option(answer_rows):
    biased = order_probe(PlaceLLM(note=2.0, last=3.0), answer_rows).summary
    blind = order_probe(PlaceLLM(note=2.0, last=0.0), answer_rows).summary
    assert biased["rows"] == blind["rows"] > 5 and biased["skipped_rows"] == {"chat format": sum(
        r["gold"]["prompt_format"] == "chat" for r in answer_rows)}
    assert biased["by_place"]["last"]["accuracy"] == 1.0  # the right item named last: right
    assert biased["by_place"]["first"]["accuracy"] == 0.0  # named first: the last one chosen
    assert biased["consistent"] == 0.0 and biased["no_rule_last_named"] in (None, 1.0)
    assert blind["consistent"] == 1.0
    assert blind["by_place"]["first"] == blind["by_place"]["last"]
    assert blind["by_memory"]["gold"]["all"]["accuracy"] > 0.8  # (other rules' lines confuse it)
    # the mean over the rotations gives each option the last place equally often: the debiased
    # choice of the biased scorer is the order-blind one's
    assert biased["debiased"] == blind["debiased"]


def test_the_probe_refuses_rows_it_cannot_rotate(answer_rows):
    chat = [r for r in answer_rows if r["gold"]["prompt_format"] == "chat"]
    with pytest.raises(MagsError, match="no answer row"):
        order_probe(PlaceLLM(1.0, 0.0), chat)


def test_place_and_summary_by_hand():
    assert place("Give the b, the c or the a?", ("a", "b", "c"), "a") == "last"
    assert place("Give the b, the c or the a?", ("a", "b", "c"), "c") == "middle"
    assert place("Give the b?", ("a", "b"), "a") is None
    recs = [{"row": 0, "memory": "none", "place": "first", "choice": "b", "correct": False,
             "chosen_place": "last", "n_options": 2},
            {"row": 0, "memory": "none", "place": "last", "choice": "a", "correct": True,
             "chosen_place": "last", "n_options": 2},
            {"row": 1, "memory": "gold", "place": "first", "choice": "c", "correct": True,
             "chosen_place": "first", "n_options": 3}]
    s = summarize(recs)
    assert s["no_rule_last_named"] == 1.0 and s["no_rule_last_named_chance"] == 0.5
    assert s["consistent"] == 0.5 and s["accuracy"] == round(2 / 3, 4)
    assert s["first_minus_last"] == -0.5
