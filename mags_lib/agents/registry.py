"""Agents by name: `make_agent(name, llm, **cfg)` for the evaluation's string configs.

    agent = make_agent("mags_flat", llm, k=3, embedder=embedder)
    agent = make_agent("oracle", llm, env=env)        # or run_game attaches the env

Keyword arguments that are `AgentConfig` fields (k, prompt_format, ...) configure the shared
decision prompt; `embedder` and `memory` (a dict of `MemoryConfig` overrides) go to the memory
agents, `env` to the oracle and to `mags_scripted` (ground truth), `roles` ({"ask": llm,
"write": llm, "prompted": base llm}) and `loop` (a dict of `LoopConfig` overrides) to the closed-loop agents;
`ablate` names one mechanism (`MECHANISMS`) switched off in any memory agent, `edge_scorer` (a
`memory.edge_scorer.EdgeScorer`) replaces its similarity rule for initial edges; anything else
is an error naming the accepted keywords.

The agents, and what each may know:

* `bare`, `full_context`, `static_rag`, `static_rag_bm25`: the observations only;
* `mags` (and its read-path variants `mags_consolidated`, `mags_working`): the observations
  only; its trained ask and write models (`roles`) drive the memory; `mags_verbatim`: the same
  with every information turn stored as it came instead of by the write model;
  `mags_episodic`: `mags` that also keeps every information turn in the episodic block and
  recalls the question itself beside the ask model's queries;
* `mags_prompted`: the same loop with the untrained base model (`roles["prompted"]`) as ask
  and write model, few-shot;
* `mem0`: a Mem0-style prompted memory: the base model (`roles["prompted"]`, else the decision
  LLM) chooses ADD / UPDATE / DELETE / NONE against the nearest stored facts (`mem0.py`);
* `mags_scripted` and its ablations: **upper bound, perfect writer, game structure given**
  (the game's ground-truth rule each turn);
* `oracle`: the rules in force (the game's ground truth): the ceiling of the evaluation.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from mags_lib.agents.base import Agent, AgentConfig
from mags_lib.agents.baselines import (
    BareAgent,
    FullContextAgent,
    OracleAgent,
    StaticRagAgent,
    StaticRagBM25Agent,
)
from mags_lib.agents.loop import LoopConfig, MagsLoopAgent
from mags_lib.agents.scripted import ABLATIONS, MECHANISMS, ScriptedMagsAgent
from mags_lib.errors import MagsError
from mags_lib.memory.config import LOOP_MEMORY_DEFAULTS

BASELINES: dict[str, type[Agent]] = {"bare": BareAgent, "full_context": FullContextAgent,
                                     "static_rag": StaticRagAgent,
                                     "static_rag_bm25": StaticRagBM25Agent,
                                     "oracle": OracleAgent}
TRAINED_LOOP_AGENTS: tuple[str, ...] = ("mags", "mags_consolidated", "mags_working",
                                        "mags_verbatim", "mags_episodic")
"""The closed loop on MAGS's trained ask and write models (`roles["ask"]`, `roles["write"]`):
`mags`, and two variants of its read path: `mags_consolidated` (LoopConfig.context
'consolidated') and `mags_working` (one recent turn from the working-memory block in the answer
prompt, LoopConfig.working_lines = 1); and one of its write path, `mags_verbatim` (no write
model: every information turn stored as it came, LoopConfig.writer 'verbatim'), the ablation
that measures what the trained writer adds; and `mags_episodic`, the write model's facts plus
every information turn kept as it came in the episodic block, the question itself recalled
beside the ask model's queries (LoopConfig.keep_turns, recall_observation). Every one of them
recalls the observation beside the ask model's queries; all but `mags_episodic` refuse a
written fact that shares no content word with its turn (LoopConfig.grounding_words): on the
development sets (2026-11-30) both raised `mags` on the personas, the game and LoCoMo's conv-43,
and grounding_words lowered `mags_episodic` on the personas and LoCoMo. `mags_episodic` also
leaves out, for a question about now, a turn whose facts the write model's own `update` has all
superseded (LoopConfig.retired_turns 'updated'; rules R1c and R4 of 2026-12-01: stale answers
10 -> 3 of 48 on the development personas, conv-43 unchanged)."""
LOOP_AGENTS: tuple[str, ...] = (*TRAINED_LOOP_AGENTS, "mags_prompted")
PROMPTED_AGENTS: tuple[str, ...] = ("mem0", "mags_prompted")
"""Agents whose memory the untrained base model writes, prompted with examples: callers pass
it as `roles["prompted"]` (the evaluation runners load it), never the trained answer model."""
AGENT_NAMES: tuple[str, ...] = ("bare", "full_context", "static_rag", "static_rag_bm25",
                                "mem0", *LOOP_AGENTS, *ABLATIONS, "oracle")
UPPER_BOUNDS: tuple[str, ...] = (*ABLATIONS, "oracle")
"""Agents handed the game's ground truth: never "MAGS", reported as upper bounds."""
_CONFIG_KEYS = frozenset(f.name for f in fields(AgentConfig))
_EXTRA_KEYS = frozenset({"embedder", "memory", "env", "roles", "loop", "ablate",
                         "edge_scorer"})


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
    ablate = cfg.get("ablate")
    if ablate is not None and (ablate not in MECHANISMS or name in BASELINES):
        raise MagsError(f"cannot switch off {ablate!r} in agent {name!r}",
                        f"ablate one of {', '.join(MECHANISMS)} in a memory agent "
                        "(mags, mags_prompted, mags_scripted)")
    if name == "mem0":
        from mags_lib.agents.mem0 import Mem0Agent

        roles = cfg.get("roles") or {}
        agent = Mem0Agent(llm, config, writer=roles.get("prompted"), embedder=cfg.get("embedder"),
                          memory_config=_memory_config(name, cfg.get("memory") or {}))
    elif name in BASELINES:
        agent = (OracleAgent(llm, config, env=cfg.get("env")) if name == "oracle"
                 else BASELINES[name](llm, config))
        if name.startswith("static_rag") and cfg.get("embedder") is not None:
            agent.embedder = cfg["embedder"]
    elif name in LOOP_AGENTS:
        agent = _make_loop(name, llm, config, cfg)
    else:
        agent = _make_scripted(name, llm, config, cfg)
    if cfg.get("edge_scorer") is not None:
        if not hasattr(agent, "edge_scorer"):
            raise MagsError(f"agent {name!r} has no memory to give an edge scorer",
                            "pass edge_scorer to a memory agent (mags, mags_scripted)")
        agent.edge_scorer = cfg["edge_scorer"]
    agent.name = name
    return agent


def _memory_config(name: str, overrides: dict[str, Any]) -> Any:
    from mags_lib.memory import MemoryConfig

    try:
        return MemoryConfig.from_dict(overrides)
    except ValueError as exc:
        raise MagsError(f"bad memory config for agent {name!r}: {exc}",
                        "pass MemoryConfig field names and values in range") from exc


def _make_scripted(name: str, llm: Any, config: AgentConfig,
                   cfg: dict[str, Any]) -> ScriptedMagsAgent:
    variant = _ablated(ABLATIONS[name], cfg.get("ablate"))
    overrides = {**(cfg.get("memory") or {}), **variant.get("memory", {})}
    return ScriptedMagsAgent(llm, config, memory_config=_memory_config(name, overrides),
                             embedder=cfg.get("embedder"),
                             use_keys=variant.get("use_keys", True),
                             supersede=variant.get("supersede", True), env=cfg.get("env"))


def loop_settings(name: str, loop: dict[str, Any] | None = None) -> dict[str, Any]:
    """The LoopConfig fields closed-loop agent `name` sets: `loop` (the caller's overrides)
    over the agent's own defaults. Part of an evaluation's config id, so that a changed default
    replays the agent's games (`EvalConfig.config_id`).

    >>> loop_settings("mags_episodic", {"query_k": 10})["keep_turns"]
    True
    >>> loop_settings("mags_episodic")["retired_turns"], "retired_turns" in loop_settings("mags")
    ('updated', False)
    """
    out = dict(loop or {})
    if name == "mags_prompted":
        out.setdefault("few_shot", True)
        return out
    if name == "mags_consolidated":
        out.setdefault("context", "consolidated")
    if name == "mags_working":
        out.setdefault("working_lines", 1)
    if name == "mags_verbatim":
        out.setdefault("writer", "verbatim")
    if name == "mags_episodic":
        out.setdefault("keep_turns", True)
        out.setdefault("retired_turns", "updated")
    else:  # mags and its variants: chosen on the development sets (docs/design.md)
        out.setdefault("grounding_words", True)
    out.setdefault("recall_observation", True)
    return out


def trained_roles(name: str, loop: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The trained models agent `name` reads with `loop`'s overrides: ('ask', 'write') for
    `mags` and its variants, ('ask',) for a loop without a write model (`mags_verbatim`, or any
    variant given LoopConfig.writer 'verbatim' or 'none'), () for every other agent (baselines,
    `mags_prompted`, the scripted upper bounds).

    >>> trained_roles("mags"), trained_roles("mags_verbatim"), trained_roles("static_rag")
    (('ask', 'write'), ('ask',), ())
    >>> trained_roles("mags_episodic", {"writer": "verbatim"})
    ('ask',)
    """
    if name not in TRAINED_LOOP_AGENTS:
        return ()
    writer = loop_settings(name, loop).get("writer")
    return ("ask",) if writer in ("verbatim", "none") else ("ask", "write")


def _make_loop(name: str, llm: Any, config: AgentConfig, cfg: dict[str, Any]) -> MagsLoopAgent:
    """`mags`: the trained ask / write models of `roles` (missing ones are an error);
    `mags_prompted`: the untrained model `roles["prompted"]` (else the decision LLM) in the
    ask and write roles, with worked examples."""
    roles = cfg.get("roles") or {}
    loop_overrides = loop_settings(name, cfg.get("loop"))
    if name == "mags_prompted":
        ask_llm = write_llm = roles.get("prompted") or llm
    else:
        needed = trained_roles(name, cfg.get("loop"))
        missing = [r for r in needed if roles.get(r) is None]
        if missing:
            raise MagsError(f"agent {name!r} needs its trained {' and '.join(missing)} model(s)",
                            "pass roles={'ask': llm, 'write': llm} (EvalConfig.models loads "
                            "models/gguf/<role>-*.gguf from notebook 04; run notebooks 02-04), "
                            "or play 'mags_prompted' with the base model")
        ask_llm, write_llm = roles["ask"], roles.get("write")
    try:
        loop = LoopConfig(**loop_overrides)
    except (TypeError, MagsError) as exc:
        raise MagsError(f"bad loop config for agent {name!r}: {exc}",
                        "use LoopConfig field names") from exc
    if loop.judge and roles.get("judge") is None:
        raise MagsError(f"agent {name!r} has LoopConfig.judge on but no judge model",
                        "name one in EvalConfig.models['judge'] ('embedded', a .gguf path)")
    off = _ablated({}, cfg.get("ablate"))
    return MagsLoopAgent(llm, config, ask_llm=ask_llm, write_llm=write_llm, loop=loop,
                         judge_llm=roles.get("judge"),
                         memory_config=_memory_config(
                             name, {**LOOP_MEMORY_DEFAULTS, **(cfg.get("memory") or {}),
                                    **off.get("memory", {})}),
                         embedder=cfg.get("embedder"), supersede=off.get("supersede", True))


def _ablated(variant: dict[str, Any], mechanism: str | None) -> dict[str, Any]:
    """`variant` with `MECHANISMS[mechanism]` switched off on top (memory overrides merged)."""
    if mechanism is None:
        return variant
    off = MECHANISMS[mechanism]
    return {**variant, **off, "memory": {**variant.get("memory", {}), **off.get("memory", {})}}
