"""The write model alone on a bank of phrasings, split by the bank's templates (a scripted fake
model, so the split can be checked against what it was told to get wrong)."""

from __future__ import annotations

import json

import pytest

from mags_lib.apps import bank_cli
from mags_lib.errors import MagsError
from mags_lib.evaluation.bank_writer import (
    bank_frames,
    frame_of,
    frames_markdown,
    judge_bank_writer,
    write_model,
)
from mags_lib.game.phrasing import bank_json
from mags_lib.llm import Completion
from mags_lib.synth import SynthConfig
from mags_lib.synth.chains import heldout_write_rows


class Writer:
    """Writes every observation as nothing, except where `add_if` is in it: then one fact."""

    name = "scripted-writer"

    def __init__(self, add_if: str = "\0"):
        self.add_if = add_if

    def chat(self, messages, **kw):
        seen = messages[-1]["content"]
        if self.add_if in seen:
            return Completion("<engram>\nadd Semantic: a fact (confidence: 0.9)\n")
        return Completion("<engram>\n")


def _bank(tmp_path, change: str):
    data = json.loads(bank_json("test", name="probe"))
    data["announce"]["change"] = [change]
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(data))
    return str(path)


def _two_write_models(tmp_path, monkeypatch):
    """The probe bank, a deployed write model (models/gguf/write-grpo-q8_0.gguf, no selected
    stage) and another GGUF, `tmp_path / "other writer.gguf"`: (bank path, gguf folder)."""
    gguf = tmp_path / "gguf"
    gguf.mkdir()
    (gguf / "write-grpo-q8_0.gguf").write_bytes(b"x")
    (tmp_path / "other writer.gguf").write_bytes(b"x")
    monkeypatch.setattr("mags_lib.paths.GGUF_DIR", gguf)
    monkeypatch.setattr("mags_lib.checkpoints.MODELS_DIR", tmp_path / "no_models")  # no selection
    return _bank(tmp_path, "Odd news, heard twice: {rule}"), gguf


def _rows(path: str) -> list[dict]:
    cfg = SynthConfig().resolved()
    return heldout_write_rows(cfg.split_seeds()["test"], cfg, 6, 0, phrasings=path)


def test_every_turn_of_a_bank_has_its_frame(tmp_path):
    path = _bank(tmp_path, "Odd news, heard twice: {rule}")
    report = judge_bank_writer(path, _rows(path), Writer())
    assert report["n"] == sum(f["n"] for f in report["frames"]) > 0
    labels = {f["frame"] for f in report["frames"]}
    assert "other" not in labels
    assert "announce/change: Odd news, heard twice: {rule}" in labels
    # a writer that writes nothing gets every turn with a gold "none" right and nothing else
    for f in report["frames"]:
        assert f["accuracy"] == pytest.approx(f["gold_ops"].get("none", 0) / f["n"])
    change = next(f for f in report["frames"] if f["frame"].startswith("announce/change"))
    assert change["errors"] == {"update -> none": change["n"]}
    text = frames_markdown(report)
    assert "| announce/change: Odd news, heard twice: {rule} |" in text
    assert "op confusion (gold -> chosen)" in text


def test_the_frame_a_writer_misreads_is_the_worst_row(tmp_path):
    path = _bank(tmp_path, "Odd news, heard twice: {rule}")
    frames = bank_frames(path)
    assert frame_of("Odd news, heard twice: the cat eats pears.", frames) \
        == "announce/change: Odd news, heard twice: {rule}"
    report = judge_bank_writer(path, _rows(path), Writer(add_if="Odd news"))
    worst = report["frames"][0]
    assert worst["frame"].startswith("announce/change") and worst["accuracy"] == 0.0
    assert set(worst["errors"]) == {"update -> add"}


def test_missing_write_model_names_the_fix(tmp_path):
    with pytest.raises(MagsError, match="not found"):
        write_model(str(tmp_path / "none.gguf"))


def test_cli_writer_keeps_one_report_per_write_model(tmp_path, monkeypatch, capsys):
    """The deployed write model's report is writer.json (what the README's bank line reads);
    judging another GGUF with --write-model writes writer-<stem>.json beside it and leaves the
    deployed model's report as it was."""
    path, gguf = _two_write_models(tmp_path, monkeypatch)
    loaded = []  # the path the CLI found is the one it loads (resolved once)
    monkeypatch.setattr("mags_lib.evaluation.bank_writer.load_write_model",
                        lambda p: loaded.append(p) or Writer())
    monkeypatch.setattr("mags_lib.paths.RESULTS_DIR", tmp_path / "results")
    folder = tmp_path / "results" / "game_bank" / "probe"

    assert bank_cli.main([path, "--writer", "--per-op", "3"]) == 0
    out = capsys.readouterr().out
    assert "Write model `write-grpo-q8_0.gguf` alone on bank `probe" in out
    deployed = json.loads((folder / "writer.json").read_text())
    assert deployed["model"] == "scripted-writer" and deployed["frames"]
    assert deployed["deployed"] is True and deployed["model_file"] == "write-grpo-q8_0.gguf"
    assert loaded == [gguf / "write-grpo-q8_0.gguf"]

    assert bank_cli.main([path, "--writer", "--per-op", "3", "--write-model",
                          str(tmp_path / "other writer.gguf")]) == 0
    assert "(not the deployed write model)" in capsys.readouterr().out
    other = json.loads((folder / "writer-other_writer.json").read_text())
    assert other["deployed"] is False and other["model_file"] == "other writer.gguf"
    assert json.loads((folder / "writer.json").read_text()) == deployed
    # the deployed model named by its path is still the deployed model
    assert bank_cli.main([path, "--writer", "--per-op", "3", "--write-model",
                          str(gguf / "write-grpo-q8_0.gguf")]) == 0
    assert sorted(p.name for p in folder.glob("writer*.json")) == [
        "writer-other_writer.json", "writer.json"]


def test_cli_writer_without_a_model_names_the_fix(tmp_path, monkeypatch, capsys):
    path = _bank(tmp_path, "Odd news, heard twice: {rule}")
    monkeypatch.setattr("mags_lib.paths.RESULTS_DIR", tmp_path / "results")
    assert bank_cli.main([path, "--writer", "--write-model", str(tmp_path / "x.gguf")]) == 2
    assert "--write-model" in capsys.readouterr().err
    assert not (tmp_path / "results" / "game_bank").exists()


def test_the_change_frame_probe_loads_and_tells_its_frames_apart():
    """configs/probes/change_frames.json (a development probe, docs/journal.md 2026-12-01):
    a valid bank whose templates are all distinct, so each turn has exactly one frame."""
    from mags_lib.game.phrasing import load_bank
    from mags_lib.paths import PROJ_ROOT

    path = str(PROJ_ROOT / "configs" / "probes" / "change_frames.json")
    probe = load_bank(path)
    assert len(probe.announce["change"]) == 14
    labels = [label.split(": ", 1)[1] for label, _ in bank_frames(path)]
    assert len(labels) == len(set(labels))


def test_cli_plays_another_write_model_into_its_own_folder(tmp_path, monkeypatch, capsys):
    """`--write-model` without --writer plays the bank with that write model in the loop; its
    games go to results/game_bank/<bank>/play-<stem>/, never where the README's bank line reads,
    and the deployed write model (named or 'auto') plays into the bank's own folder."""
    path, gguf = _two_write_models(tmp_path, monkeypatch)
    monkeypatch.setattr("mags_lib.paths.RESULTS_DIR", tmp_path / "results")
    calls = []

    def score_bank(bank, **kw):
        calls.append(kw)
        return {"out_dir": str(kw["out_dir"])}

    monkeypatch.setattr("mags_lib.evaluation.game_bank.score_bank", score_bank)
    monkeypatch.setattr("mags_lib.evaluation.game_bank.report", lambda m: "table")
    other = str(tmp_path / "other writer.gguf")
    assert bank_cli.main([path, "--agents", "mags", "--write-model", other]) == 0
    assert calls[-1]["models"] == {"ask": "auto", "write": other}
    assert calls[-1]["out_dir"] == tmp_path / "results" / "game_bank" / "probe" / \
        "play-other_writer"
    assert bank_cli.main([path, "--smoke", "--write-model", other]) == 0
    assert calls[-1]["out_dir"].parent.name == "probe_smoke"
    for deployed in ("auto", str(gguf / "write-grpo-q8_0.gguf")):
        assert bank_cli.main([path, "--write-model", deployed]) == 0
        assert calls[-1]["models"] is None and calls[-1]["out_dir"] is None
    assert bank_cli.main([path, "--write-model", str(tmp_path / "none.gguf")]) == 2
    assert "--write-model" in capsys.readouterr().err
