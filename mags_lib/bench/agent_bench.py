"""Per-turn latency and prompt tokens of a whole agent in play, as the game grows.

    python -m mags_lib.bench agent [--turns 50,200,1000] [--agents mags,full_context]
                                   [--window 25] [--out results/bench/agent.json]

One game per agent, as long as the largest mark, on the varied surface with the decision LLM
and role models notebook 06 uses (the trained GGUFs of notebook 04 when they are there, else
the embedded base model for every role, said so in the JSON). Every turn is timed around the
agent's own calls (`observe`, and `act` on a decision), split by stage: route, write recall,
write (the write model), apply + step (memory), perceive (the working-memory block), ask
(the ask model), recall, answer (the decision LLM). At each mark the `window` turns up to it
give p50 / p95 seconds per turn (all turns, decision turns alone, the other turns alone, and
how many of the window were decisions) and mean prompt tokens per turn, so one sees whether a
turn
costs the same at turn 1,000 as at turn 50 (MAGS) or grows with the transcript (full context,
until its window is full).

The generation cache is off here (a cached answer would time the cache, not the model).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

STAGES = ("route", "write_recall", "write", "apply_step", "perceive", "ask", "recall", "answer")


@dataclass
class AgentBenchConfig:
    turns: list[int] = field(default_factory=lambda: [50, 200, 1000], metadata={
        "help": "marks: turn counts at which per-turn latency is reported (the game is as "
                "long as the largest)"})
    agents: list[str] = field(default_factory=lambda: ["mags", "full_context"], metadata={
        "help": "agents to time (registry names)"})
    window: int = field(default=25, metadata={
        "help": "turns up to each mark whose timings are summarised"})
    seed: int = field(default=0, metadata={"help": "game seed"})
    surface: str = field(default="varied", metadata={"help": "game surface"})
    decision_llm: str = field(default="auto", metadata={
        "help": "'auto' (the trained answer model of notebook 04, else the base model), "
                "'embedded' or a .gguf path"})
    models: dict[str, str] = field(default_factory=lambda: {"ask": "auto", "write": "auto"},
                                   metadata={"help": "the closed loop's role models, as in "
                                             "EvalConfig.models ('auto' falls back to the "
                                             "embedded base model here)"})
    context_window: int = field(default=512, metadata={"help": "full_context's window"})
    debias_order: bool = field(default=True, metadata={
        "help": "decide as the evaluation does (EvalConfig.debias_order): each option scored "
                "over every order of the options; False: one greedy answer"})
    threads: int | None = field(default=None, metadata={"help": "llama.cpp threads"})


class _Timed:
    """Wraps an agent: times `observe` and `act`, everything else passes through."""

    def __init__(self, agent: Any):
        self.__dict__["agent"] = agent
        self.__dict__["turns"] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.agent, name, value)

    def observe(self, obs: Any, reward: Any = None, info: Any = None) -> None:
        t0 = time.perf_counter()
        self.agent.observe(obs, reward=reward, info=info)
        stages = dict(getattr(self.agent, "last_timing", {}) or {})
        tokens = dict(getattr(self.agent, "last_tokens", {}) or {})
        self.turns.append({"turn": obs.turn, "decision": bool(obs.legal_actions),
                           "observe_s": time.perf_counter() - t0, "stages": stages,
                           "tokens": tokens})

    def act(self, obs: Any) -> Any:
        t0 = time.perf_counter()
        decision = self.agent.act(obs)
        row = self.turns[-1]
        row["act_s"] = time.perf_counter() - t0
        row["stages"].update({k: v for k, v in (getattr(self.agent, "last_timing", {}) or {})
                              .items() if k in ("ask", "recall")})
        row["stages"]["answer"] = decision.llm_seconds
        row["tokens"]["answer"] = decision.prompt_tokens
        return decision


def _percentiles(values: list[float]) -> dict[str, float | None]:
    import numpy as np

    if not values:
        return {"p50_s": None, "p95_s": None}
    arr = np.asarray(values)
    return {"p50_s": round(float(np.percentile(arr, 50)), 4),
            "p95_s": round(float(np.percentile(arr, 95)), 4)}


def summarise_turns(turns: list[dict[str, Any]], marks: list[int],
                    window: int) -> list[dict[str, Any]]:
    """Per mark: latency percentiles of the `window` turns up to it, by stage, and tokens.

    >>> rows = [{"turn": t, "decision": t % 2 == 0, "observe_s": 0.1,
    ...          **({"act_s": 0.2} if t % 2 == 0 else {}), "stages": {}, "tokens": {"write": 10}}
    ...         for t in range(10)]
    >>> out = summarise_turns(rows, [10], 4)[0]
    >>> out["turns_timed"], out["turn_s"]["p50_s"], out["decision_turn_s"]["p50_s"]
    (4, 0.2, 0.3)
    >>> out["decisions_timed"], out["other_turn_s"]["p50_s"]
    (2, 0.1)
    """
    out = []
    from mags_lib.progress import progress

    for mark in progress(marks, "turn marks"):
        rows = [r for r in turns if mark - window <= r["turn"] < mark]
        totals = [r["observe_s"] + r.get("act_s", 0.0) for r in rows]
        decisions = [r["observe_s"] + r.get("act_s", 0.0) for r in rows if r["decision"]]
        others = [r["observe_s"] + r.get("act_s", 0.0) for r in rows if not r["decision"]]
        stages = {s: _percentiles([r["stages"][s] for r in rows if s in r["stages"]])
                  for s in STAGES if any(s in r["stages"] for r in rows)}
        tokens = [sum(r["tokens"].values()) for r in rows]
        out.append({"turn": mark, "turns_timed": len(rows), "turn_s": _percentiles(totals),
                    "decisions_timed": len(decisions),
                    "decision_turn_s": _percentiles(decisions),
                    "other_turn_s": _percentiles(others), "stages": stages,
                    "prompt_tokens_per_turn": round(sum(tokens) / len(tokens), 1) if tokens
                    else None})
    return out


def role_model_paths(cfg: AgentBenchConfig) -> tuple[dict[str, str], str]:
    from mags_lib.checkpoints import final_model_name
    from mags_lib.evaluation.answer_model import find_gguf

    paths, notes = {}, []
    for role in ("ask", "write"):
        spec = cfg.models.get(role, "auto")
        if spec == "auto":
            found = find_gguf(final_model_name(role))
            spec = str(found) if found else "embedded"
            if not found:
                notes.append(f"no trained {role} model: the embedded base model plays it")
        paths[role] = spec
    return paths, "; ".join(notes)


def bench_agent(cfg: AgentBenchConfig) -> dict[str, Any]:
    """Play and time every agent of `cfg`; see the module docstring."""
    from mags_lib.agents import MemoEmbedder, make_agent
    from mags_lib.bench.timing import machine_info
    from mags_lib.embed import default_embedder
    from mags_lib.evaluation.answer_model import decision_llm_settings
    from mags_lib.evaluation.runner import run_game
    from mags_lib.game import GameConfig, SenselessGame
    from mags_lib.llm import LLMConfig, load_llm
    from mags_lib.progress import counter
    from mags_lib.rss import peak_rss_mb

    decision = decision_llm_settings(cfg.decision_llm)
    base = LLMConfig(model=decision["model"], n_ctx=1024, cache=False, n_threads=cfg.threads)
    llm = load_llm(base)
    paths, note = role_model_paths(cfg)
    loaded: dict[str, Any] = {}
    roles = {}
    for role, path in paths.items():
        if path not in loaded:
            loaded[path] = llm if path == decision["model"] else load_llm(replace(base,
                                                                                  model=path))
        roles[role] = loaded[path]
    embedder = MemoEmbedder(default_embedder())
    length = max(cfg.turns)
    results = {}
    for name in cfg.agents:
        env = SenselessGame(GameConfig(seed=cfg.seed, episode_length=length,
                                       surface=cfg.surface))
        agent = _Timed(make_agent(name, llm, k=3, embedder=embedder, env=env, roles=roles,
                                  answer_tags=decision["answer_tags"],
                                  debias_order=cfg.debias_order,
                                  context_window=cfg.context_window))
        t0 = time.perf_counter()
        bar = counter(f"{name}: turns", total=length)
        game = run_game(agent, env, cfg.seed, name=name,
                        on_turn=lambda *_, bar=bar: bar.update(1))  # minutes at 1,000 turns
        bar.close()
        results[name] = {"marks": summarise_turns(agent.turns, cfg.turns, cfg.window),
                         "accuracy": round(game.accuracy, 4), "turns": game.n_turns,
                         "seconds": round(time.perf_counter() - t0, 1)}
    return {"config": asdict(cfg), "decision_llm": decision["model"], "role_models": paths,
            "note": note, "agents": results, "targets": agent_targets(results),
            "peak_rss_mb": round(peak_rss_mb(), 1), "machine": machine_info()}


def agent_targets(results: dict[str, Any], p50_limit: float = 1.0) -> dict[str, Any]:
    """mags: p50 seconds per turn at most `p50_limit` at every mark, and flat: each kind of
    turn (decision turns, the other turns) at the last mark within 1.5x the same kind at the
    first. A window's p50 over all its turns (`mags_flat_pooled`) also moves with its share of
    decision turns, which cost about 2.5 times an information turn; marks that do not split the
    kinds (older runs) are judged pooled. full_context: prompt tokens per turn at the last mark
    against the first.

    >>> marks = [{"turn_s": {"p50_s": 0.34}, "decision_turn_s": {"p50_s": 0.79},
    ...           "other_turn_s": {"p50_s": 0.31}},
    ...          {"turn_s": {"p50_s": 0.67}, "decision_turn_s": {"p50_s": 0.79},
    ...           "other_turn_s": {"p50_s": 0.32}}]
    >>> out = agent_targets({"mags": {"marks": marks}})
    >>> out["mags_flat"], out["mags_flat_pooled"], out["mags_p50_by_kind"]["decision"]
    (True, False, [0.79, 0.79])
    """
    out: dict[str, Any] = {}
    mags = results.get("mags")
    if mags:
        p50 = [m["turn_s"]["p50_s"] for m in mags["marks"] if m["turn_s"]["p50_s"] is not None]
        out["mags_p50_s"] = p50
        out["mags_p50_at_most_1s"] = bool(p50) and max(p50) <= p50_limit
        out["mags_flat_pooled"] = len(p50) > 1 and p50[-1] <= 1.5 * p50[0]
        by_kind = {kind: [m[key]["p50_s"] for m in mags["marks"]
                          if (m.get(key) or {}).get("p50_s") is not None]
                   for kind, key in (("decision", "decision_turn_s"), ("other", "other_turn_s"))}
        split = all(len(v) == len(mags["marks"]) > 1 for v in by_kind.values())
        if split:
            out["mags_p50_by_kind"] = by_kind
        out["mags_flat"] = (all(v[-1] <= 1.5 * v[0] for v in by_kind.values()) if split
                            else out["mags_flat_pooled"])
    full = results.get("full_context")
    if full:
        tokens = [m["prompt_tokens_per_turn"] for m in full["marks"]]
        out["full_context_tokens_per_turn"] = tokens
    return out
