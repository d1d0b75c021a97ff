"""The examples in docstrings run: every `mags_lib` module whose source holds a `>>>` example.

The modules are found, not listed: a hand-kept list left 38 modules' examples unrun (among them
`agents.turn_lines` and `agents.registry`) until 2026-12-01.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import mags_lib

ROOT = Path(mags_lib.__file__).parent


def modules_with_examples() -> list[str]:
    """Dotted names of the package's modules whose source has a docstring example."""
    names = []
    for path in sorted(ROOT.rglob("*.py")):
        if ">>> " not in path.read_text(encoding="utf-8"):
            continue
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = modules_with_examples()


def test_the_modules_are_found():
    """Discovery itself can fail quietly (a moved package, an empty glob): these must be in."""
    for name in ("mags_lib.agents.loop", "mags_lib.agents.turn_lines", "mags_lib.memory.engram",
                 "mags_lib.evaluation.conversation_study", "mags_lib.summary"):
        assert name in MODULES
    assert len(MODULES) >= 70


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
