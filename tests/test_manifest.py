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
    assert first == {"smoke": True, "game": {"accuracy": 0.5}}
    run.config["conversations"] = {"personas": 1}
    run.save(judged={"write": {"n": 3}})
    last = json.loads((tmp_path / "13_x" / "metrics.json").read_text())
    assert last["game"] == {"accuracy": 0.5} and last["judged"] == {"write": {"n": 3}}
    config = json.loads((tmp_path / "13_x" / "config.json").read_text())
    assert config == {"game": {"seeds": [0]}, "conversations": {"personas": 1}}
    manifest = json.loads((tmp_path / "13_x" / "manifest.json").read_text())
    assert manifest["smoke"] is True and manifest["config"] == config
