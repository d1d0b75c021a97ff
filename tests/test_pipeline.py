"""The pipeline resumes: a notebook runs only when its inputs changed or its outputs are gone;
a re-run upstream re-runs its dependants; the record merges across runs and survives bad files.

Most tests replace papermill by a fake that writes the executed copy; one runs real kernels."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from mags_lib import pipeline
from mags_lib.code_graph import code_index, mags_imports
from mags_lib.pipeline_state import (
    DEPENDS_ON,
    PipelineConfig,
    expected_seconds,
    load_record,
    save_entry,
)


def _notebook(path: Path, *cells: str) -> Path:
    """A minimal nbformat-4 notebook: a `parameters` cell with SMOKE, then `cells`."""
    def cell(source: str, tags: list[str]) -> dict:
        return {"cell_type": "code", "execution_count": None, "metadata": {"tags": tags},
                "outputs": [], "source": source}

    nb = {"cells": [cell("SMOKE = False", ["parameters"]), *(cell(c, []) for c in cells)],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}, "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 4}
    path.write_text(json.dumps(nb))
    return path


@pytest.fixture
def chain(tmp_path) -> PipelineConfig:
    """Three notebooks, 03 reads 02 reads 01, and a two-module fake `mags_lib` that 01 imports."""
    package = tmp_path / "pkg" / "mags_lib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "used.py").write_text("def f():\n    from mags_lib import deep\n    return deep\n")
    (package / "deep.py").write_text("X = 1\n")
    (package / "unused.py").write_text("Y = 2\n")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    _notebook(notebooks / "01_a.ipynb", "from mags_lib.used import f\nx = 1")
    _notebook(notebooks / "02_b.ipynb", "y = 2")
    _notebook(notebooks / "03_c.ipynb", "z = 3")
    return PipelineConfig(notebooks_dir=notebooks, results_dir=tmp_path / "results",
                          root=tmp_path, package_dir=package, artefacts={}, external={}, reads={},
                          depends_on={"01": (), "02": ("01",), "03": ("02",)})


class FakePapermill:
    """Stands in for `pipeline._execute`: notes what ran, writes the executed copy, fails the
    notebooks named in `fail`."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.fail: set[str] = set()

    def __call__(self, nb: Path, out: Path, params: dict, kernel: str) -> str | None:
        self.ran.append(nb.stem[:2])
        if nb.stem[:2] in self.fail:
            return "cell 2: ValueError: boom"
        out.write_text(nb.read_text())
        return None


@pytest.fixture
def fake(monkeypatch) -> FakePapermill:
    executor = FakePapermill()
    monkeypatch.setattr(pipeline, "_execute", executor)
    return executor


def _run(fake: FakePapermill, cfg: PipelineConfig, smoke: bool = False, **kw) -> list[str]:
    fake.ran.clear()
    pipeline.run(smoke, cfg=cfg, **kw)
    return list(fake.ran)


def test_a_second_run_executes_nothing_and_says_why(chain, fake, capsys):
    assert _run(fake, chain) == ["01", "02", "03"]
    assert _run(fake, chain) == []
    out = capsys.readouterr().out
    assert "0 of 3 notebooks to run" in out
    assert out.count("up to date since") == 3
    runs = load_record(chain.record_path)["runs"]
    assert all(r["ok"] and r["fingerprint"] and r["inputs"]["params"] == {"SMOKE": False}
               for r in runs.values())


def test_a_changed_notebook_reruns_with_its_dependants_only(chain, fake, capsys):
    _run(fake, chain)
    _notebook(chain.notebooks_dir / "02_b.ipynb", "y = 20")
    assert _run(fake, chain) == ["02", "03"]
    out = capsys.readouterr().out
    assert "why: the notebook changed" in out
    assert "why: upstream re-ran or changed: 02_b" in out


def test_a_reader_of_files_stays_current_when_its_upstream_rewrites_the_same_bytes(
        chain, fake, capsys):
    data = chain.root / "data" / "a"
    data.mkdir(parents=True)
    (data / "rows.jsonl").write_text("1\n")
    cfg = replace(chain, reads={"02": {"01": ("data/a",)}})
    assert _run(fake, cfg) == ["01", "02", "03"]
    assert _run(fake, cfg, force=True, only=["01"]) == ["01"]
    assert _run(fake, cfg) == []  # 02 reads the same bytes; 03 reads 02, which did not re-run
    _notebook(cfg.notebooks_dir / "01_a.ipynb", "from mags_lib.used import f\nx = 2")
    assert _run(fake, cfg) == ["01"]  # 02 and 03 were planned, and skipped at their turn
    assert capsys.readouterr().out.count("what it reads of them is unchanged") == 2
    (data / "rows.jsonl").write_text("2\n")
    assert _run(fake, cfg) == ["02", "03"]
    assert "upstream re-ran or changed: 01_a" in capsys.readouterr().out


def test_a_parameter_given_runs_a_variant_that_never_passes_for_the_default(
        chain, fake, monkeypatch, capsys):
    """`--param`: papermill gets it, the record keeps it, dependants re-run, and a run without
    it runs the notebook again with its defaults."""
    _notebook(chain.notebooks_dir / "01_a.ipynb", "from mags_lib.used import f\nx = 1")
    nb = chain.notebooks_dir / "01_a.ipynb"
    cells = json.loads(nb.read_text())
    cells["cells"][0]["source"] = "SMOKE = False\nSHARE = 0.0  # a share\nNAME: str = 'a'"
    nb.write_text(json.dumps(cells))
    seen: dict[str, dict] = {}
    real = fake.__call__

    def recording(nb, out, params, kernel):
        seen[nb.stem[:2]] = params
        return real(nb, out, params, kernel)
    monkeypatch.setattr(pipeline, "_execute", recording)
    assert _run(fake, chain) == ["01", "02", "03"] and seen["01"] == {"SMOKE": False}
    variant = {"01": {"SHARE": 0.5, "NAME": "b"}}
    assert _run(fake, chain, params=variant) == ["01", "02", "03"]
    assert seen["01"] == {"SMOKE": False, "SHARE": 0.5, "NAME": "b"}
    assert seen["02"] == {"SMOKE": False}  # another notebook's parameters stay its own
    out = capsys.readouterr().out
    assert "SHARE=0.5" in out and "parameters SHARE=None->0.5" in out
    assert load_record(chain.record_path)["runs"]["01_a.ipynb"]["inputs"]["params"]["SHARE"] == 0.5
    assert _run(fake, chain, params=variant) == []
    assert _run(fake, chain) == ["01", "02", "03"]  # back to the defaults
    assert "parameters NAME='b'->(default), SHARE=0.5->(default)" in capsys.readouterr().out
    with pytest.raises(pipeline.MagsError, match="(?s)no parameter 'SHAER'.*SHARE, NAME"):
        pipeline.run(False, cfg=chain, params={"01": {"SHAER": 1}})
    with pytest.raises(pipeline.MagsError, match="use --smoke"):
        pipeline.run(False, cfg=chain, params={"01": {"SMOKE": True}})
    with pytest.raises(pipeline.MagsError, match="notebook 01, which is not among"):
        pipeline.run(False, cfg=chain, only=["02"], params={"01": {"SHARE": 1}})


def test_parameters_on_the_command_line_are_checked():
    assert pipeline.parse_params(["01:X=[1, 2]", "01:Y=abc", "02:Z=null"]) == {
        "01": {"X": [1, 2], "Y": "abc"}, "02": {"Z": None}}
    for bad in ("1:X=2", "01:X", "01-X=2", "01:2X=1"):
        with pytest.raises(pipeline.MagsError, match="NN:NAME=VALUE"):
            pipeline.parse_params([bad])
    assert pipeline.main(["--param", "01:X"]) == 2  # said on stderr, nothing run
    from mags_lib.paths import NOTEBOOKS_DIR
    from mags_lib.pipeline_state import parameter_names

    names = parameter_names(NOTEBOOKS_DIR / "01_synthesize_dataset.ipynb")
    assert names[0] == "SMOKE" and {"WRITER_FRAME_SHARE", "PERSONA_CUE_PHRASES",
                                    "WRITER_CONTRAST_SHARE", "PERSONA_CONTRAST_SHARE"} <= set(names)


def test_a_record_from_before_a_notebook_read_files_holds_until_its_upstream_reruns(
        chain, fake, capsys):
    """A notebook recorded with its upstream by run id (before `READS` named what it reads)
    is not re-run when READS starts to cover it: the upstream's run id is the recorded one, so
    nothing upstream re-ran. Once the upstream re-runs, the notebook runs once (the old record
    does not say what it read), and from then on the files decide; an upstream that is about
    to run is never taken for the recorded one."""
    data = chain.root / "data" / "a"
    data.mkdir(parents=True)
    (data / "rows.jsonl").write_text("1\n")
    assert _run(fake, chain) == ["01", "02", "03"]  # reads={}: 02 records 01's run id
    cfg = replace(chain, reads={"02": {"01": ("data/a",)}})
    assert _run(fake, cfg) == []
    assert capsys.readouterr().out.count("up to date since") == 3
    # once 01 re-runs, the old record cannot tell what 02 read: 02 runs, and records the bytes
    _notebook(cfg.notebooks_dir / "01_a.ipynb", "from mags_lib.used import f\nx = 2")
    assert _run(fake, cfg) == ["01", "02", "03"]
    _notebook(cfg.notebooks_dir / "01_a.ipynb", "from mags_lib.used import f\nx = 3")
    assert _run(fake, cfg) == ["01"]  # 01 wrote the same rows: 02 and 03 skipped at their turn
    (data / "rows.jsonl").write_text("2\n")
    assert _run(fake, cfg) == ["02", "03"]
    # with the old form only (no READS), a pending upstream still re-runs its dependants
    _notebook(cfg.notebooks_dir / "01_a.ipynb", "from mags_lib.used import f\nx = 4")
    assert _run(fake, chain) == ["01", "02", "03"]


def test_the_training_notebooks_read_the_data_folders_of_their_roles():
    """READS stands for notebook 01 by content only where that is all a notebook reads of it:
    notebook 02 the ask and answer rows, notebook 03 the write rows (and the ask rows its
    optional mixed model trains on), notebook 04 the held-out prompts of the three, each a
    folder notebook 01 writes."""
    from mags_lib.pipeline_state import READS
    from mags_lib.train.roles import ROLE_TASKS

    def tasks(*roles: str) -> set[str]:
        return {f"data/synth/{t}" for r in roles for t in ROLE_TASKS[r]}

    assert set(READS["02"]["01"]) == tasks("ask", "answer")
    assert set(READS["03"]["01"]) == tasks("write", "mixed")
    assert set(READS["04"]["01"]) == tasks("ask", "write", "answer")  # its held-out prompts
    assert "02" not in READS["03"]  # 03's mixed model reads 02's table: by run id


def test_a_markdown_edit_does_not_count(chain, fake):
    _run(fake, chain)
    path = chain.notebooks_dir / "03_c.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "A note."})
    path.write_text(json.dumps(nb))
    assert _run(fake, chain) == []


def test_smoke_and_full_runs_never_satisfy_each_other(chain, fake):
    _run(fake, chain, smoke=False)
    assert _run(fake, chain, smoke=True) == ["01", "02", "03"]
    assert _run(fake, chain, smoke=True) == []
    assert _run(fake, chain, smoke=False) == ["01", "02", "03"]


def test_force_runs_everything_and_only_selects(chain, fake):
    _run(fake, chain)
    assert _run(fake, chain, force=True) == ["01", "02", "03"]
    assert _run(fake, chain, force=True, only=["02"]) == ["02"]
    assert _run(fake, chain) == ["03"]  # 02 re-ran, so 03 is stale now
    assert _run(fake, chain, only=["03"]) == []


def test_missing_outputs_rerun_the_notebook_that_wrote_them(chain, fake, capsys):
    import shutil

    cfg = replace(chain, artefacts={"01": ("data/synth/*.jsonl",)})
    (cfg.root / "data" / "synth").mkdir(parents=True)
    (cfg.root / "data" / "synth" / "rows.jsonl").write_text("{}\n")
    _run(fake, cfg)
    shutil.rmtree(cfg.results_dir / "02_b")
    assert _run(fake, cfg) == ["02", "03"]
    assert "why: outputs missing: results/02_b/02_b.ipynb" in capsys.readouterr().out
    (cfg.root / "data" / "synth" / "rows.jsonl").unlink()
    assert _run(fake, cfg) == ["01", "02", "03"]


def test_a_failed_notebook_stops_the_chain_and_runs_again(chain, fake):
    _run(fake, chain)
    _notebook(chain.notebooks_dir / "02_b.ipynb", "y = 20")
    fake.fail = {"02"}
    with pytest.raises(SystemExit, match="02_b.ipynb failed in cell 2: ValueError: boom"):
        _run(fake, chain)
    assert fake.ran == ["02"]
    runs = load_record(chain.record_path)["runs"]
    assert runs["02_b.ipynb"]["ok"] is False and "boom" in runs["02_b.ipynb"]["error"]
    fake.fail = set()
    assert _run(fake, chain) == ["02", "03"]


def test_a_killed_run_counts_as_failed(chain, fake, monkeypatch):
    _run(fake, chain)

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "_execute", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pipeline.run(False, force=True, cfg=chain)
    entry = load_record(chain.record_path)["runs"]["01_a.ipynb"]
    assert entry["ok"] is False and "did not finish" in entry["error"]
    monkeypatch.setattr(pipeline, "_execute", fake)
    assert _run(fake, chain) == ["01", "02", "03"]


def test_only_the_mags_lib_code_a_notebook_imports_counts(chain, fake, capsys):
    _run(fake, chain)
    (chain.package_dir / "unused.py").write_text("Y = 3\n")
    assert _run(fake, chain) == []
    (chain.package_dir / "deep.py").write_text("X = 2\n")  # imported inside used.f
    assert _run(fake, chain) == ["01", "02", "03"]
    assert "why: mags_lib code it imports changed" in capsys.readouterr().out


def test_comments_docstrings_and_help_strings_do_not_count_as_code(chain, fake):
    _run(fake, chain)
    (chain.package_dir / "deep.py").write_text(
        '"""The deep module."""\n\nX = (1)  # one\nF = dict(metadata={"help": "x"})\n')
    assert _run(fake, chain) == ["01", "02", "03"]  # F is new code
    (chain.package_dir / "deep.py").write_text(
        '"""Reworded."""\n\n# a comment\nX = 1\nF = dict(metadata={"help": "y z"})\n')
    assert _run(fake, chain) == []


def test_a_record_from_before_code_counted_by_its_syntax_tree_still_holds(chain, fake):
    """Records written before 2026-12-02 hash the code by its bytes: they hold while the bytes
    are the same, so the switch re-ran nothing; once the bytes change, even in a comment, the
    old record cannot tell, and the notebook runs (and is recorded the new way)."""
    import hashlib

    from mags_lib.code_graph import code_digest
    from mags_lib.pipeline_state import digest

    _run(fake, chain)
    record = json.loads(chain.record_path.read_text())
    h = hashlib.sha256()  # the code digest as the old code computed it, by hand
    for name in ("__init__.py", "deep.py", "used.py"):
        h.update(name.encode() + b"\0" + (chain.package_dir / name).read_bytes())
    for entry in record["runs"]:  # as the old code wrote them
        if "01_a" in entry["notebook"]:
            entry["inputs"]["code"] = h.hexdigest()[:16]
            assert entry["inputs"]["code"] != code_digest(
                code_index(chain.package_dir), {"mags_lib", "mags_lib.used", "mags_lib.deep"})
            entry["fingerprint"] = digest(entry["inputs"])
    chain.record_path.write_text(json.dumps(record))
    assert _run(fake, chain) == []
    (chain.package_dir / "deep.py").write_text("X = 1  # the same code, other bytes\n")
    assert _run(fake, chain) == ["01", "02", "03"]
    (chain.package_dir / "deep.py").write_text("X = 1  # and now the new record can tell\n")
    assert _run(fake, chain) == []


def test_an_undeclared_notebook_depends_on_every_earlier_one(chain, fake):
    cfg = replace(chain, depends_on={"02": (), "03": ("01",)})
    _run(fake, cfg)
    _notebook(cfg.notebooks_dir / "02_b.ipynb", "y = 20")
    assert _run(fake, cfg) == ["02"]  # 03 reads 01 only
    assert _run(fake, replace(cfg, depends_on={})) == ["02", "03"]  # the map changed: 03 too


def test_the_progress_line_estimates_the_finish_from_the_last_runs(chain, fake, capsys):
    chain.results_dir.mkdir()
    chain.record_path.write_text(json.dumps({"runs": [  # the record's older shape
        {"notebook": name, "ok": True, "seconds": seconds, "smoke": False,
         "finished": "2026-11-26T10:00:00+00:00"}
        for name, seconds in (("01_a.ipynb", 600.0), ("02_b.ipynb", 1306.0))]}))
    _run(fake, chain)
    out = capsys.readouterr().out
    assert "[pipeline] 1/3 01_a (SMOKE=False) ... last run 600 s, expected done ~" in out
    assert "3 to run, all done ~" in out and "(+1 untimed)" in out
    assert "why: no fingerprint recorded" in out
    assert "2/3 02_b (SMOKE=False) ... last run 1306 s" in out
    assert "3/3 03_c (SMOKE=False) ... no earlier run in this mode to time it by" in out


def test_the_progress_line_promises_no_finish_when_nothing_left_is_timed(chain, fake, capsys):
    _run(fake, chain)  # SMOKE=False runs: a SMOKE run has nothing to time it by
    capsys.readouterr()
    pipeline.run(True, cfg=chain)
    out = capsys.readouterr().out
    assert "1/3 01_a (SMOKE=True) ... no earlier run in this mode to time it by; 3 to run, " \
           "none timed yet" in out and "all done" not in out


def test_records_merge_per_notebook_and_keep_each_modes_time(tmp_path):
    path = tmp_path / "pipeline.json"
    path.write_text("{not json")  # a corrupt record is replaced, not a crash
    save_entry(path, "runs", {"notebook": "01_a.ipynb", "ok": True, "seconds": 3.0, "smoke": False})
    save_entry(path, "runs", {"notebook": "02_b.ipynb", "ok": False, "seconds": 1.0, "smoke": True})
    save_entry(path, "runs", {"notebook": "01_a.ipynb", "ok": True, "seconds": 5.0, "smoke": True})
    save_entry(path, "steps", {"step": "bench", "ok": True, "seconds": 2.0, "smoke": False})
    data = json.loads(path.read_text())
    assert [(r["notebook"], r["seconds"], r["smoke"]) for r in data["runs"]] == [
        ("01_a.ipynb", 5.0, True), ("02_b.ipynb", 1.0, True)]
    assert all("finished" in r for r in data["runs"])
    first = data["runs"][0]
    assert expected_seconds(first, smoke=False) == 3.0 and expected_seconds(first, smoke=True) == 5.0
    assert [s["step"] for s in data["steps"]] == ["bench"]


def test_notebooks_are_found_in_order_and_filtered(tmp_path):
    for name in ("02_b.ipynb", "01_a.ipynb", "scratch.ipynb", "1_bad.ipynb"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in pipeline.notebooks(tmp_path)] == ["01_a.ipynb", "02_b.ipynb"]
    assert [p.name for p in pipeline.notebooks(tmp_path, only=["02"])] == ["02_b.ipynb"]


def test_imports_are_found_in_every_form():
    source = ("import os, mags_lib.paths as p\nfrom mags_lib import (  # why (it is)\n"
              "    manifest,\n    plots as pl,\n)\n%matplotlib inline\n"
              "def f():\n    from mags_lib.train.roles import RoleTrainConfig\n"
              "# from mags_lib import commented_out\n")
    assert mags_imports(source) == {
        "mags_lib.paths", "mags_lib", "mags_lib.manifest", "mags_lib.plots", "mags_lib.train.roles",
        "mags_lib.train.roles.RoleTrainConfig"}


def test_data_files_belong_to_their_package(tmp_path):
    (tmp_path / "mags_lib" / "actions" / "grammars").mkdir(parents=True)
    for init in ("mags_lib/__init__.py", "mags_lib/actions/__init__.py"):
        (tmp_path / init).write_text("")
    (tmp_path / "mags_lib" / "actions" / "grammars" / "recall.gbnf").write_text("root ::= x")
    index = code_index(tmp_path / "mags_lib")
    assert [p.name for p in index.files["mags_lib.actions"]] == ["__init__.py", "recall.gbnf"]


def test_the_declared_map_covers_the_real_notebooks_and_points_back():
    found = [p.stem[:2] for p in pipeline.notebooks()]
    assert found and set(found) <= set(DEPENDS_ON)
    assert all(d < n for n, deps in DEPENDS_ON.items() for d in deps)


def test_a_guarded_step_runs_once_per_change_of_its_inputs(chain, fake, tmp_path, capsys):
    out = tmp_path / "bench.json"
    command = [sys.executable, "-c", f"open({str(out)!r}, 'w').write('{{}}')", "--out", str(out)]
    step = lambda cmd=command: pipeline.run_step("bench", cmd, after=["01"], cfg=chain)  # noqa: E731
    assert step() == 0 and out.exists()
    assert step() == 0
    assert "step bench: up to date since" in capsys.readouterr().err
    out.unlink()
    assert step() == 0 and out.exists()  # a missing --out file re-runs it
    _run(fake, chain, force=True, only=["01"])
    assert step() == 0
    assert "upstream re-ran or changed: 01" in capsys.readouterr().err
    assert step([sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert step([sys.executable, "-c", "raise SystemExit(3)"]) == 3  # failed: runs again
    assert load_record(chain.record_path)["steps"]["bench"]["error"] == "exit status 3"


def test_the_command_line_needs_a_command_for_a_step():
    with pytest.raises(SystemExit):
        pipeline.main(["--step", "bench"])


def _kernel_installed() -> bool:
    if importlib.util.find_spec("papermill") is None:
        return False
    from jupyter_client.kernelspec import find_kernel_specs

    return "python3" in find_kernel_specs()


@pytest.mark.skipif(not _kernel_installed(), reason="papermill or the python3 kernel missing")
def test_real_notebooks_run_once_with_smoke_injected(chain):
    cfg = chain
    _notebook(cfg.notebooks_dir / "01_a.ipynb", "assert SMOKE is True")
    assert [r["ok"] for r in pipeline.run(True, only=["01", "02"], cfg=cfg)] == [True, True]
    executed = json.loads((cfg.results_dir / "01_a" / "01_a.ipynb").read_text())
    assert any("SMOKE = True" in "".join(c["source"]) for c in executed["cells"])
    assert pipeline.run(True, only=["01", "02"], cfg=cfg) == []
    nb = cfg.notebooks_dir / "02_b.ipynb"  # a --param reaches a real kernel
    _notebook(nb, "assert (SHARE, SMOKE) == (0.5, True)")
    cells = json.loads(nb.read_text())
    cells["cells"][0]["source"] = "SMOKE = False\nSHARE = 0.0"
    nb.write_text(json.dumps(cells))
    assert [r["ok"] for r in pipeline.run(True, only=["02"], cfg=cfg,
                                          params={"02": {"SHARE": 0.5}})] == [True]
