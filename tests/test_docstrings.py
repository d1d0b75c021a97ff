"""The examples in module docstrings run (pure modules of the game, agents and evaluation)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["mags_lib.game.phrasing", "mags_lib.game.rule_reader", "mags_lib.agents.prompt",
           "mags_lib.agents.role_prompts", "mags_lib.agents.baselines", "mags_lib.agents.loop",
           "mags_lib.evaluation.records", "mags_lib.evaluation.metrics", "mags_lib.graph_html",
           "mags_lib.agents.router", "mags_lib.apps.play", "mags_lib.summary",
           "mags_lib.objectives.rewards", "mags_lib.objectives.completions", "mags_lib.objectives.write_metrics",
           "mags_lib.objectives.reward_guard", "mags_lib.objectives.data", "mags_lib.actions.parser",
           "mags_lib.agents.option_order", "mags_lib.agents.base",
           "mags_lib.memory.dynamics", "mags_lib.memory.contradiction",
           "mags_lib.conversations.locomo",
           "mags_lib.conversations.persona_phrases",
           "mags_lib.conversations.persona_train_phrases", "mags_lib.evaluation.qa_metrics",
           "mags_lib.evaluation.evidence_recall", "mags_lib.conversations.types",
           "mags_lib.agents.open_answer", "mags_lib.agents.mem0",
           "mags_lib.synth.conversation_rows", "mags_lib.synth.chains",
           "mags_lib.evaluation.failure_stages", "mags_lib.agents.history_lines",
           "mags_lib.evaluation.conversation_qa"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
