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


def test_cli_writer_writes_its_report(tmp_path, monkeypatch, capsys):
    path = _bank(tmp_path, "Odd news, heard twice: {rule}")
    monkeypatch.setattr("mags_lib.evaluation.bank_writer.write_model", lambda spec: Writer())
    monkeypatch.setattr("mags_lib.paths.RESULTS_DIR", tmp_path / "results")
    assert bank_cli.main([path, "--writer", "--per-op", "3"]) == 0
    out = capsys.readouterr().out
    assert "alone on bank `probe" in out
    saved = json.loads((tmp_path / "results" / "game_bank" / "probe" / "writer.json").read_text())
    assert saved["model"] == "scripted-writer" and saved["frames"]


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
