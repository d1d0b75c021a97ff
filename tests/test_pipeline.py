"""The pipeline's record: one entry per notebook, merged across `--only` runs; bad files survive."""

from __future__ import annotations

import json

from mags_lib import pipeline


def test_runs_of_single_notebooks_merge_into_one_record(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "RESULTS_DIR", tmp_path)
    path = tmp_path / "pipeline.json"
    path.write_text("{not json")  # a corrupt record is replaced, not a crash
    pipeline._record([{"notebook": "01_a.ipynb", "ok": True, "seconds": 3.0}], smoke=False)
    pipeline._record([{"notebook": "02_b.ipynb", "ok": False, "seconds": 1.0}], smoke=True)
    pipeline._record([{"notebook": "01_a.ipynb", "ok": True, "seconds": 5.0}], smoke=False)
    runs = json.loads(path.read_text())["runs"]
    assert [(r["notebook"], r["seconds"], r["smoke"]) for r in runs] == [
        ("01_a.ipynb", 5.0, False), ("02_b.ipynb", 1.0, True)]
    assert all("finished" in r for r in runs)


def test_notebooks_are_found_in_order_and_filtered(tmp_path):
    for name in ("02_b.ipynb", "01_a.ipynb", "scratch.ipynb", "1_bad.ipynb"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in pipeline.notebooks(tmp_path)] == ["01_a.ipynb", "02_b.ipynb"]
    assert [p.name for p in pipeline.notebooks(tmp_path, only=["02"])] == ["02_b.ipynb"]
