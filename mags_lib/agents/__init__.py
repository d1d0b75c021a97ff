"""Game-playing agents that share one LLM and one decision prompt and differ only in memory.

    from mags_lib.agents import make_agent, AGENT_NAMES
    agent = make_agent("mags", llm, k=3)
    agent.reset(seed=0)
    agent.observe(obs)                      # every turn
    decision = agent.act(obs)               # decision turns: .action, .recalled, .prompt

Modules: `base.py` (Agent, AgentConfig, Decision), `prompt.py` (the decision prompt and its
grammar), `baselines.py` (bare, full_context, static_rag, oracle), `mags.py` (the LiquidMemory
agent and its ablations), `registry.py` (`make_agent`), `fake.py` (`RuleReaderLLM`, a stand-in
LLM that reads the rules perfectly, for tests).
"""

from mags_lib.agents.base import Agent, AgentConfig, Decision, recalled
from mags_lib.agents.baselines import (
    BareAgent,
    FullContextAgent,
    OracleAgent,
    StaticRagAgent,
    oracle_rules,
)
from mags_lib.agents.mags import ABLATIONS, MagsAgent, MemoEmbedder, NeverContradicts
from mags_lib.agents.prompt import PROMPT_FORMATS, decide, options_grammar
from mags_lib.agents.registry import AGENT_NAMES, make_agent

__all__ = [
    "ABLATIONS", "AGENT_NAMES", "PROMPT_FORMATS", "Agent", "AgentConfig", "BareAgent", "Decision",
    "FullContextAgent", "MagsAgent", "MemoEmbedder", "NeverContradicts", "OracleAgent",
    "StaticRagAgent", "decide", "make_agent", "options_grammar", "oracle_rules", "recalled",
]
