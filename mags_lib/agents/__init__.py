"""Game-playing agents that share one LLM and one decision prompt and differ only in memory.

    from mags_lib.agents import make_agent, AGENT_NAMES
    agent = make_agent("mags", llm, k=3)
    agent.reset(seed=0)
    agent.observe(obs)                      # every turn
    decision = agent.act(obs)               # decision turns: .action, .recalled, .prompt

Modules: `base.py` (Agent, AgentConfig, Decision), `prompt.py` (the decision prompt and its
grammar), `role_prompts.py` (the ask / write prompts, shared with dataset synthesis),
`router.py` (which roles handle an observation), `baselines.py` (bare, full_context,
static_rag, static_rag_bm25, oracle), `mags.py` (the memory agent base and `mags_scripted`, the
upper bound handed the game's ground truth, with its ablations), `loop.py` (MAGS: the closed
loop of trained ask and write models, and `mags_prompted`), `registry.py` (`make_agent`).
Stand-in LLMs that read the game's rules perfectly, for tests and notebook 05, live beside the
game (`mags_lib.game.rule_reader`), since they know its structure.

No module here imports from `mags_lib.game` beyond the `Observation` type (a test checks it):
agents read the observation as it came; only the oracle and `mags_scripted` read ground truth,
through the env they are attached to.
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
from mags_lib.agents.mags import (
    ABLATIONS,
    MECHANISMS,
    MemoEmbedder,
    MemoryAgent,
    NeverContradicts,
    ScriptedMagsAgent,
)
from mags_lib.agents.prompt import PROMPT_FORMATS, decide, options_grammar
from mags_lib.agents.registry import AGENT_NAMES, LOOP_AGENTS, UPPER_BOUNDS, make_agent

__all__ = [
    "ABLATIONS", "AGENT_NAMES", "LOOP_AGENTS", "MECHANISMS", "PROMPT_FORMATS", "UPPER_BOUNDS", "Agent",
    "AgentConfig", "BareAgent", "Decision", "FullContextAgent", "LoopConfig", "MagsLoopAgent",
    "MemoEmbedder", "MemoryAgent", "NeverContradicts", "OracleAgent", "ScriptedMagsAgent",
    "StaticRagAgent", "StaticRagBM25Agent", "decide", "make_agent", "options_grammar",
    "oracle_rules", "recalled",
]
