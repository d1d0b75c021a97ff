"""Run manifests and runs written part by part."""

from __future__ import annotations

import json

from mags_lib import paths
from mags_lib.manifest import PartialRun


def test_a_partial_run_keeps_each_finished_part(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    run = PartialRun("13_x", config={"game": {"seeds": [0]}}, metrics={"smoke": True}, smoke=True)
    run.save({"game": {"accuracy": 0.5}})
    first = json.loads((tmp_path / "13_x" / "metrics.json").read_text())
    assert first == {"smoke": True, "game": {"accuracy": 0.5}, "partial": True}
    run.config["conversations"] = {"personas": 1}
    run.save(judged={"write": {"n": 3}})
    last = json.loads((tmp_path / "13_x" / "metrics.json").read_text())
    assert last["game"] == {"accuracy": 0.5} and last["judged"] == {"write": {"n": 3}}
    config = json.loads((tmp_path / "13_x" / "config.json").read_text())
    assert config == {"game": {"seeds": [0]}, "conversations": {"personas": 1}}
    manifest = json.loads((tmp_path / "13_x" / "manifest.json").read_text())
    assert manifest["smoke"] is True and manifest["config"] == config


def _metrics(folder):
    return json.loads((folder / "metrics.json").read_text())


def test_a_stopped_rerun_keeps_the_last_complete_run_until_it_finishes(tmp_path, monkeypatch):
    """A rerun stopped partway used to replace a complete metrics.json with its first parts
    (notebook 13 lost a 20-minute result this way); now the complete run is kept aside, the
    summary shows it, and only `finish` lets the new run replace it."""
    from mags_lib import summary

    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    folder = tmp_path / "13_x"
    first = PartialRun("13_x", metrics={"smoke": False})
    assert first.kept is None  # nothing complete to keep on a first run
    first.save(game={"accuracy": 0.9})
    (folder / "game").mkdir()
    (folder / "game" / "seed0.json").write_text("complete game")
    first.finish(targets={"met": 9})
    assert _metrics(folder) == {"smoke": False, "game": {"accuracy": 0.9}, "targets": {"met": 9}}
    assert not (folder / "last_complete").exists()

    rerun = PartialRun("13_x", metrics={"smoke": False})  # stopped after its first part
    (folder / "game" / "seed0.json").write_text("rerun, half written")
    rerun.save(game={"accuracy": 0.1})
    assert _metrics(folder)["partial"] is True and "targets" not in _metrics(folder)
    kept = folder / "last_complete"
    assert _metrics(kept)["targets"] == {"met": 9}
    assert (kept / "game" / "seed0.json").read_text() == "complete game"
    shown = summary._load_run(tmp_path, "13_x")
    assert shown["game"] == {"accuracy": 0.9} and shown["shown_kept_run"] is True
    assert "stopped partway" in " ".join(summary._run_note(shown, "13"))

    again = PartialRun("13_x", metrics={"smoke": False})  # a second stopped rerun: keep the same
    again.save(game={"accuracy": 0.2})
    assert _metrics(kept)["game"] == {"accuracy": 0.9} and not (kept / "last_complete").exists()

    last = PartialRun("13_x", metrics={"smoke": False})
    last.save(game={"accuracy": 0.95})
    last.finish(targets={"met": 10})
    assert _metrics(folder) == {"smoke": False, "game": {"accuracy": 0.95}, "targets": {"met": 10}}
    assert not kept.exists()
    assert "shown_kept_run" not in summary._load_run(tmp_path, "13_x")


def test_a_partial_run_without_a_kept_one_is_shown_as_partial(tmp_path, monkeypatch):
    from mags_lib import summary

    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    PartialRun("13_x", metrics={"smoke": False}).save(game={"accuracy": 0.5})
    shown = summary._load_run(tmp_path, "13_x")
    assert shown["game"] == {"accuracy": 0.5}
    assert summary._run_note(shown, "13") == [
        "_A partial run: notebook 13 stopped before its last part._"]
