"""The library's seams: no module outside `mags_lib/memory/` reaches into the memory's private
members (it uses `LiquidMemory`'s public methods, such as `edge_weight`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


def test_the_check_sees_a_private_use(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(agent, mem):\n    mem.__len__()\n    return agent.memory._weight({})\n")
    assert _private_memory_uses(bad) == ["bad.py:3: memory._weight"]


def _imports(package: str) -> set[str]:
    """Every mags_lib module a package imports (at module level or inside functions)."""
    found = set()
    for path in (ROOT / package).rglob("*.py") if (ROOT / package).is_dir() else [
            ROOT / f"{package}.py"]:
        found |= _module_imports(path)
    return {m for m in found if m.startswith("mags_lib.")}


@pytest.mark.parametrize("package,forbidden", [
    ("synth", ("mags_lib.train",)),  # the dataset sits beside training, not above it
    ("export", ("mags_lib.train",)),
    ("tasks", ("mags_lib.train", "mags_lib.synth", "mags_lib.evaluation", "mags_lib.agents")),
    ("checkpoints", ("mags_lib.train", "mags_lib.export", "mags_lib.evaluation")),
])
def test_packages_import_only_downwards(package, forbidden):
    bad = sorted(m for m in _imports(package) if m.startswith(forbidden))
    assert not bad, f"{package} imports {bad}: move the shared piece below both"


def test_nothing_below_the_apps_imports_them():
    """apps/ (chat, play, explorer helpers) is the top of the library: only `python -m
    mags_lib` (__main__.py) and notebooks reach it."""
    users = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
                   if "apps" not in p.relative_to(ROOT).parts and p.name != "__main__.py"
                   and any(m.startswith("mags_lib.apps") for m in _module_imports(p)))
    assert not users, f"{users} import mags_lib.apps: move what they need below it"


def _module_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found
