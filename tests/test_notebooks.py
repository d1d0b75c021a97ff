"""The notebooks are thin and runnable: structure checks (fast) and the SMOKE chain (slow)."""

from __future__ import annotations

import ast
import json
import os
import shutil
from pathlib import Path

import nbformat
import pytest

from mags_lib.paths import NOTEBOOKS_DIR, PROJ_ROOT, SEED_DATA_DIR
from mags_lib.pipeline import notebooks

EXPECTED = ["01_synthesize_dataset", "02_train_ask_model", "03_train_write_model",
            "04_export_gguf", "05_graph_dynamics", "06_evaluate_game", "07_ask_grpo_seeds",
            "08_write_objectives", "09_mechanisms", "10_textworld", "11_ask_objectives",
            "12_conversations", "13_test_splits", "14_transfer_matrix",
            "15_conversation_mechanisms"]
TOOLS = ["explore_memory"]  # interactive notebooks outside the papermill chain


def _code_cells(path: Path) -> list:
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def test_every_numbered_notebook_is_there():
    assert [p.stem for p in notebooks()] == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_is_thin_and_clean(name):
    path = NOTEBOOKS_DIR / f"{name}.ipynb"
    cells = _code_cells(path)
    params = cells[0]
    assert "parameters" in params.metadata.get("tags", []), "first code cell must be `parameters`"
    tree = ast.parse(params.source)
    assigned = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}
    assert "SMOKE" in assigned
    for node in tree.body:  # literals only, so papermill can override any of them
        assert isinstance(node, ast.Assign), ast.dump(node)
        ast.literal_eval(node.value)
    for cell in cells:
        assert not cell.get("outputs"), f"{name}: committed notebooks carry no outputs"
        for node in ast.walk(ast.parse(cell.source)):
            assert not isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Lambda), (
                f"{name}: a def/class/lambda in a notebook belongs in mags_lib")
    assert "assert" in cells[-1].source, f"{name}: the last cell is a sanity assert"


def test_notebook_sources_match_the_built_notebooks():
    """notebooks/src/*.py (jupytext percent scripts) are the editable sources; each .ipynb must
    be rebuilt from its source (`make notebooks`) and carry the papermill `parameters` tag."""
    import jupytext

    for name in [*EXPECTED, *TOOLS]:
        src = NOTEBOOKS_DIR / "src" / f"{name}.py"
        built = jupytext.read(src, fmt="py:percent")
        committed = nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)
        want = [(c.cell_type, c.source) for c in built.cells]
        have = [(c.cell_type, c.source) for c in committed.cells]
        assert want == have, f"rebuild {name}.ipynb from {src}: make notebooks"
        first = next(c for c in committed.cells if c.cell_type == "code")
        assert "parameters" in first.metadata.get("tags", []), f"{name}: tag the first cell"
    assert sorted(p.stem for p in (NOTEBOOKS_DIR / "src").glob("*.py")) == sorted(
        [*EXPECTED, *TOOLS]), "every source has a notebook, every notebook a source"


@pytest.mark.slow
def test_the_whole_chain_runs_in_smoke_mode(tmp_path, monkeypatch, capsys):
    """`make smoke` in a scratch MAGS_ROOT: every notebook runs and writes its results. The
    seconds each notebook took go to the test log (the chain is most of CI's time), so a
    slower run says which notebook grew."""
    root = tmp_path / "root"
    shutil.copytree(NOTEBOOKS_DIR, root / "notebooks")
    shutil.copytree(SEED_DATA_DIR, root / "data" / "seed")
    base = PROJ_ROOT / "models" / "base"
    if base.exists():  # reuse the GGUF -> torch conversion (same code path, minutes saved)
        shutil.copytree(base, root / "models" / "base")
    import subprocess
    import sys

    env = {**os.environ, "MAGS_ROOT": str(root), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "mags_lib.pipeline", "--smoke", "True"],
                          cwd=PROJ_ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for name in EXPECTED:
        out = root / "results" / name
        assert (out / f"{name}.ipynb").exists(), name
        assert (out / "metrics.json").exists(), name
    runs = json.loads((root / "results" / "pipeline.json").read_text())["runs"]
    line = ", ".join(f"{r['notebook'][:2]} {r.get('seconds') or 0:.0f}" for r in runs)
    with capsys.disabled():  # into the test log, past pytest's capture
        print(f"\nSMOKE chain, seconds per notebook: {line}")
