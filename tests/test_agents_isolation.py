"""No agent reads a task's structure: agents get the observation as it came.

No module of `mags_lib.agents` imports a task (`mags_lib.game`, `mags_lib.conversations`, a
task module of `mags_lib.tasks`); the task interface (`mags_lib.tasks.base`: what an
observation is, and which legal action an answer names) is all they take. The oracle and `mags_scripted` read ground truth through
the env they are attached to (`env.ground_truth()`, `env.current_rules()`), never by importing
the game. Ground truth may score an agent, never feed one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mags_lib.agents

AGENTS_DIR = Path(mags_lib.agents.__file__).parent
TASK_PACKAGES = ("mags_lib.game", "mags_lib.conversations", "mags_lib.tasks")
INTERFACE = "mags_lib.tasks.base"
# the ground-truth readers (the upper bounds) name the truth's fields they read
TRUTH_FIELDS = {"scripted.py": {"rule_key"}}
# names of the senseless game's structure that no agent or prompt module may mention
FORBIDDEN_WORDS = ("parse_rule", "RULE_PATTERN", "DECIDE_PATTERN", "RULE_TEMPLATE", "rule_key",
                   "phrasing", "vocab", "senseless", "eats only", "is offered", "turns, the")


def _modules() -> list[Path]:
    return sorted(AGENTS_DIR.glob("*.py"))


def _game_imports(tree: ast.AST) -> list[tuple[str, str]]:
    """(module, name) of every import from a task package other than the task interface."""
    found = []
    for node in ast.walk(tree):
        module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
        if module.startswith(TASK_PACKAGES) and module != INTERFACE:
            found += [(module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, "*") for a in node.names
                      if a.name.startswith(TASK_PACKAGES) and a.name != INTERFACE]
    return found


def test_the_agents_package_has_the_modules_this_test_reads():
    names = {p.stem for p in _modules()}
    assert {"base", "baselines", "loop", "memory_agent", "prompt", "role_prompts", "router",
            "scripted"} <= names


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_agent_modules_import_no_task_only_the_task_interface(path):
    tree = ast.parse(path.read_text())
    bad = _game_imports(tree)
    assert not bad, f"{path.name} imports a task's structure: {bad}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_agent_modules_do_not_restate_the_games_templates(path):
    code = path.read_text()
    # docstrings may show an example rule; code (strings included) must not hold the template
    tree = ast.parse(code)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef)
                  and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
               and isinstance(n.value, str) and id(n) not in docstrings]
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    names += [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    hits = [w for w in FORBIDDEN_WORDS if any(w in s for s in strings) or w in names]
    hits = [w for w in hits if w not in TRUTH_FIELDS.get(path.name, set())]
    assert not hits, f"{path.name} mentions the game's structure: {hits}"


def test_the_check_catches_a_module_that_reads_the_game():
    leaky = ast.parse("from mags_lib.game.senseless import parse_rule\nimport mags_lib.game.vocab")
    assert _game_imports(leaky) == [("mags_lib.game.senseless", "parse_rule"),
                                    ("mags_lib.game.vocab", "*")]
    also = ast.parse("from mags_lib.conversations.types import QA\n"
                     "from mags_lib.tasks.base import Observation\n"
                     "from mags_lib.game.base import Observation")
    assert _game_imports(also) == [("mags_lib.conversations.types", "QA"),
                                   ("mags_lib.game.base", "Observation")]
