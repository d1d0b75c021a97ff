"""The library's seams: imports run down the layers of pyproject.toml's import-linter contract,
no module outside `mags_lib/memory/` reaches into the memory's private members (it uses
`LiquidMemory`'s public methods, such as `edge_weight`), and test files are named after what
they test."""

from __future__ import annotations

import ast
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "mags_lib"
MEMORY_NAMES = {"mem", "memory", "liquid", "lkg"}


def _private_memory_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            continue
        owner = node.value
        name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
        if name in MEMORY_NAMES:
            found.append(f"{path.name}:{node.lineno}: {name}.{node.attr}")
    return found


def test_no_module_outside_memory_touches_its_private_members():
    outside = [p for p in ROOT.rglob("*.py") if "memory" not in p.relative_to(ROOT).parts[:1]]
    assert outside, "found no modules to check"
    uses = [u for p in outside for u in _private_memory_uses(p)]
    assert not uses, "use LiquidMemory's public methods instead:\n" + "\n".join(uses)


def test_the_memory_helpers_use_only_its_stated_internal_interface():
    """Inside `memory/`, helper modules touch only the private members that `store.py` states
    (HELPER_INTERFACE), and every stated member exists and is used."""
    from mags_lib.memory.store import HELPER_INTERFACE, LiquidMemory

    helpers = [p for p in (ROOT / "memory").glob("*.py") if p.name != "store.py"]
    uses = {u.split(": ", 1)[1].split(".", 1)[1]: u for p in helpers
            for u in _private_memory_uses(p)}
    unstated = sorted(u for name, u in uses.items() if name not in HELPER_INTERFACE)
    assert not unstated, "state these in store.HELPER_INTERFACE, or use a public method:\n" + \
        "\n".join(unstated)
    memory = LiquidMemory()
    assert not [m for m in HELPER_INTERFACE if not hasattr(memory, m)], "stated but missing"
    assert sorted(set(HELPER_INTERFACE) - set(uses)) == [], "stated but unused"


def test_the_check_sees_a_private_use(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(agent, mem):\n    mem.__len__()\n    return agent.memory._weight({})\n")
    assert _private_memory_uses(bad) == ["bad.py:3: memory._weight"]


def _lint_imports(config: str) -> int:
    """import-linter's CLI entry, run in this process. It configures logging with `dictConfig`
    and the default `disable_existing_loggers=True`, which silences every logger that exists
    already (all of `mags_lib`'s, so a later test's `caplog` would see nothing): their
    `disabled` flags are put back afterwards."""
    from importlinter.cli import lint_imports

    loggers = [lg for lg in logging.Logger.manager.loggerDict.values()
               if isinstance(lg, logging.Logger)]
    before = {lg: lg.disabled for lg in loggers}
    try:
        return lint_imports(config_filename=config, no_cache=True)
    finally:
        for lg, disabled in before.items():
            lg.disabled = disabled


def test_running_the_linter_leaves_the_librarys_loggers_on():
    import mags_lib.train.resume  # noqa: F401  (creates its logger before the linter runs)

    assert _lint_imports(str(ROOT.parent / "pyproject.toml")) == 0
    assert not logging.getLogger("mags_lib.train.resume").disabled


def test_the_layers_contract_holds():
    """pyproject.toml's import-linter contract: every subpackage sits in a layer, and no module
    imports from a layer above its own (imports inside functions count)."""
    assert _lint_imports(str(ROOT.parent / "pyproject.toml")) == 0, \
        "run `lint-imports` for the offending import chain; move the shared piece below both"


def test_the_layers_contract_sees_an_upward_import(tmp_path, monkeypatch):
    """The same contract on a copy of the library with one upward import added fails."""
    import shutil

    shutil.copytree(ROOT, tmp_path / "mags_lib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT.parent / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "mags_lib" / "memory" / "upward.py").write_text(
        "def f():\n    from mags_lib.agents import registry\n    return registry\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    for name in [m for m in sys.modules if m == "mags_lib" or m.startswith("mags_lib.")]:
        monkeypatch.delitem(sys.modules, name)
    assert _lint_imports("pyproject.toml") == 1


def test_test_files_are_named_after_what_they_test():
    """tests/test_<package>[_<module>...].py: the first word names a package or module of
    mags_lib (or one of the repository-wide checks, or `tools` for a script of tools/)."""
    repo_wide = {"layers", "docstrings", "notebooks", "tools"}
    names = {p.stem for p in ROOT.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    tests = Path(__file__).parent.glob("test_*.py")
    odd = sorted(t.name for t in tests if not any(
        t.stem[5:] == n or t.stem[5:].startswith(n + "_") for n in names | repo_wide))
    assert not odd, f"{odd}: name each test file after the module it tests"
