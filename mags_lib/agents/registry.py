"""Agents by name: `make_agent(name, llm, **cfg)` for the evaluation's string configs.

    agent = make_agent("mags_flat", llm, k=3, embedder=embedder)
    agent = make_agent("oracle", llm, env=env)        # or run_game attaches the env

Keyword arguments that are `AgentConfig` fields (k, prompt_format, ...) configure the shared
decision prompt; `embedder` and `memory` (a dict of `MemoryConfig` overrides) go to the MAGS
agents, `env` to the oracle; anything else is an error naming the accepted keywords.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from mags_lib.agents.base import Agent, AgentConfig
from mags_lib.agents.baselines import BareAgent, FullContextAgent, OracleAgent, StaticRagAgent
from mags_lib.agents.mags import ABLATIONS, MagsAgent
from mags_lib.errors import MagsError

BASELINES: dict[str, type[Agent]] = {"bare": BareAgent, "full_context": FullContextAgent,
                                     "static_rag": StaticRagAgent, "oracle": OracleAgent}
AGENT_NAMES: tuple[str, ...] = ("bare", "full_context", "static_rag", "mags", "oracle",
                                "mags_no_hebbian", "mags_no_decay", "mags_flat",
                                "mags_no_contradiction")
_CONFIG_KEYS = frozenset(f.name for f in fields(AgentConfig))
_EXTRA_KEYS = frozenset({"embedder", "memory", "env"})


def make_agent(name: str, llm: Any, **cfg: Any) -> Agent:
    """A fresh agent called `name` (see `AGENT_NAMES`) on `llm`."""
    if name not in AGENT_NAMES:
        raise MagsError(f"unknown agent {name!r}",
                        f"use one of the known agents: {', '.join(AGENT_NAMES)}")
    unknown = sorted(set(cfg) - _CONFIG_KEYS - _EXTRA_KEYS)
    if unknown:
        raise MagsError(f"make_agent got unknown keywords {unknown}",
                        f"use AgentConfig fields {sorted(_CONFIG_KEYS)} or "
                        f"{sorted(_EXTRA_KEYS)}")
    config = AgentConfig(**{k: v for k, v in cfg.items() if k in _CONFIG_KEYS})
    if name in BASELINES:
        agent = (OracleAgent(llm, config, env=cfg.get("env")) if name == "oracle"
                 else BASELINES[name](llm, config))
    else:
        agent = _make_mags(name, llm, config, cfg.get("embedder"), cfg.get("memory") or {})
    agent.name = name
    return agent


def _make_mags(name: str, llm: Any, config: AgentConfig, embedder: Any,
               memory: dict[str, Any]) -> MagsAgent:
    from mags_lib.memory import MemoryConfig

    variant = ABLATIONS[name]
    overrides = {**memory, **variant.get("memory", {})}
    try:
        memory_config = MemoryConfig.from_dict(overrides)
    except ValueError as exc:
        raise MagsError(f"bad memory config for agent {name!r}: {exc}",
                        "pass MemoryConfig field names and values in range") from exc
    return MagsAgent(llm, config, memory_config=memory_config, embedder=embedder,
                     use_keys=variant.get("use_keys", True),
                     supersede=variant.get("supersede", True))
