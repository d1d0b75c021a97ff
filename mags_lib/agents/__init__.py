"""Agents that differ only in memory, one interface for every task: the senseless game,
conversations (a person's changing facts, LoCoMo) and TextWorld.

An agent reads each observation as it came and, asked, returns its memory lines; it never learns
which task it is in. On a game's decision turns one decision prompt chooses a legal action from
those lines (`prompt.decide`); a conversation's question is answered in free text from them
(`open_answer`), one prompt for every agent.

    from mags_lib.agents import make_agent, AGENT_NAMES
    agent = make_agent("mags", llm, k=3)
    agent.reset(seed=0)
    agent.observe(obs)                      # every turn
    decision = agent.act(obs)               # decision turns: .action, .recalled, .prompt

Modules: `base.py` (Agent, AgentConfig, Decision), `prompt.py` (the decision prompt and its
grammar), `option_order.py` (choosing among legal actions without the answer model's order
bias), `open_answer.py` (the free-text answer from memory lines), `role_prompts.py` (the ask /
write prompts, shared with dataset synthesis), `router.py` (which roles handle an observation),
`baselines.py` (bare, full_context, static_rag, static_rag_bm25, oracle), `memory_agent.py`
(`MemoryAgent`, the base of the agents over a `LiquidMemory`), `loop.py` (MAGS: the closed loop
of trained ask and write models, its variants, and `mags_prompted`), `mem0.py` (a Mem0-style
prompted memory), `scripted.py` (`mags_scripted`, an upper bound handed the game's ground truth,
never MAGS, with its ablations, and `MECHANISMS`), `registry.py` (`make_agent`).
Stand-in LLMs that read the game's rules perfectly, for tests and notebook 05, live beside the
game (`mags_lib.game.rule_reader`), since they know its structure.

No module here imports a task (`mags_lib.game`, `mags_lib.conversations`): the task interface
`mags_lib.tasks.base` (`Observation`, `match_action`) is all they take (import-linter's
"agents name no task" contract and a test check it); only the oracle and `mags_scripted` read
ground truth, through the env they are attached to.
"""

from mags_lib.agents.base import Agent, AgentConfig, Decision, recalled
from mags_lib.agents.baselines import (
    BareAgent,
    FullContextAgent,
    OracleAgent,
    StaticRagAgent,
    StaticRagBM25Agent,
    oracle_rules,
)
from mags_lib.agents.loop import LoopConfig, MagsLoopAgent
from mags_lib.agents.memory_agent import MemoryAgent, NeverContradicts
from mags_lib.agents.prompt import PROMPT_FORMATS, decide, options_grammar
from mags_lib.agents.registry import AGENT_NAMES, LOOP_AGENTS, UPPER_BOUNDS, make_agent
from mags_lib.agents.scripted import ABLATIONS, MECHANISMS, ScriptedMagsAgent
from mags_lib.embed import MemoEmbedder  # one cache per evaluation, shared by its agents

__all__ = [
    "ABLATIONS", "AGENT_NAMES", "LOOP_AGENTS", "MECHANISMS", "PROMPT_FORMATS", "UPPER_BOUNDS", "Agent",
    "AgentConfig", "BareAgent", "Decision", "FullContextAgent", "LoopConfig", "MagsLoopAgent",
    "MemoEmbedder", "MemoryAgent", "NeverContradicts", "OracleAgent", "ScriptedMagsAgent",
    "StaticRagAgent", "StaticRagBM25Agent", "decide", "make_agent", "options_grammar",
    "oracle_rules", "recalled",
]
