"""Which mechanism pays off where: every regime x mechanism ablation, paired (notebook 09).

For each regime (`evaluation.regimes`) and seed, the full memory agent and one copy per
mechanism switched off (`agents.MECHANISMS`) play the *same* episode (a senseless game's turns
do not depend on the answers), so every decision is paired across variants. `bare` and `oracle`
play it too, to show the regime separates a memory from none.

The decision maker is `RuleReaderLLM` for every agent: a perfect reader of the fixed surface's
rule sentences, so a wrong answer is a memory failure (the write or the recall), never the
135M answer model's. Agents: `mags_scripted` (**upper bound: perfect writer, game structure
given**) and, when listed, the closed loop `mags` (MAGS's trained ask and write models drive the
memory; its games are cut to `loop_turns` turns, since every turn calls the models).

Per (regime, agent, mechanism) a row of `mechanisms.json`:

* `effect` = accuracy of the full memory minus the ablation's, over all paired decisions;
  `ci_low` / `ci_high` its 95% interval from the paired per-decision differences (normal);
  `seed_ci_low` / `seed_ci_high` the t interval over the per-seed effects (n_seeds - 1 degrees
  of freedom: wide with 3 seeds), `p_mcnemar` the exact McNemar test on the discordant pairs;
* `full` / `ablated` accuracies with 95% Wilson intervals, and `separated`: effect at least
  `min_effect` and the two Wilson intervals do not overlap (the issue's criterion).

Memory cost per game (`cost`): nodes, valid nodes, edges and edge churn per step (the memory's
`metrics()`, a 100-step window) every `cost_every` turns, recall
latency p50 / p95 (the decision's memory seconds), turn latency p50, process RSS at the end.
The episode's texts are encoded in batches before a game (`warm_embedder`), so latencies
measure the memory, not MiniLM's first encoding of a sentence.

    cfg = MechanismStudyConfig(smoke=True)
    study = run_mechanism_study(cfg)          # writes results/09_mechanisms/
    study.rows[0]["effect"]
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from statistics import mean, median
from typing import Any

from mags_lib.errors import MagsError


def _all_regimes() -> list[str]:
    from mags_lib.evaluation.regimes import REGIMES

    return list(REGIMES)


def _all_mechanisms() -> list[str]:
    from mags_lib.agents.scripted import MECHANISMS

    return list(MECHANISMS)


@dataclass
class MechanismStudyConfig:
    regimes: list[str] = field(default_factory=_all_regimes, metadata={
        "help": "regimes to play (evaluation.regimes.REGIMES)"})
    mechanisms: list[str] = field(default_factory=_all_mechanisms, metadata={
        "help": "mechanisms switched off one at a time (agents.MECHANISMS)"})
    agents: list[str] = field(default_factory=lambda: ["mags_scripted"], metadata={
        "help": "memory agents ablated: 'mags_scripted' (upper bound) and/or 'mags' (the closed "
                "loop on the trained ask / write models of notebook 04)"})
    baselines: list[str] = field(default_factory=lambda: ["bare", "oracle"], metadata={
        "help": "agents without a memory to ablate, played once per regime and seed"})
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2], metadata={
        "help": "game seeds; every variant plays the same episodes"})
    k: int = field(default=3, metadata={"help": "memory lines recalled per decision"})
    embedder: str = field(default="embedded", metadata={
        "help": "'embedded' (all-MiniLM-L6-v2) or 'hashing' (fast fake, tests)"})
    loop_turns: int = field(default=200, metadata={
        "help": "turns of each closed-loop ('mags') game (every turn calls the models)"})
    loop_seeds: list[int] = field(default_factory=lambda: [0, 1, 2], metadata={
        "help": "seeds the closed loop plays (a subset of seeds: its games cost minutes)"})
    loop_regimes: list[str] = field(default_factory=lambda: ["multi_hop", "silent_drift"],
                                    metadata={
        "help": "regimes the closed loop plays (the others are scripted only)"})
    loop_mechanisms: list[str] = field(default_factory=lambda: [
        "hebbian", "traversal", "contradiction"], metadata={
        "help": "mechanisms ablated in the closed loop (each costs a game per regime and seed)"})
    models: dict[str, str] = field(default_factory=lambda: {"ask": "auto", "write": "auto"},
                                   metadata={"help": "the closed loop's role models, as "
                                             "EvalConfig.models"})
    game_overrides: dict[str, dict[str, Any]] = field(default_factory=dict, metadata={
        "help": "regime -> GameConfig overrides (checked)"})
    memory_overrides: dict[str, dict[str, Any]] = field(default_factory=dict, metadata={
        "help": "regime -> MemoryConfig overrides on top of the regime's budget (checked)"})
    cost_every: int = field(default=100, metadata={
        "help": "sample the graph's size every this many turns"})
    min_effect: float = field(default=0.05, metadata={
        "help": "an ablation 'separates' when it costs at least this much accuracy and the "
                "Wilson intervals do not overlap"})
    output: str = field(default="09_mechanisms", metadata={"help": "results/<output>/"})
    resume: bool = field(default=True, metadata={
        "help": "skip games already in games.jsonl under the same configuration"})
    smoke: bool = field(default=False, metadata={
        "help": "one seed, short episodes (each regime's smoke_length), two mechanisms"})

    def __post_init__(self) -> None:
        from mags_lib.agents.scripted import MECHANISMS
        from mags_lib.evaluation.regimes import REGIMES

        checks = [("regimes", self.regimes, REGIMES), ("loop_regimes", self.loop_regimes, REGIMES),
                  ("mechanisms", self.mechanisms, MECHANISMS),
                  ("loop_mechanisms", self.loop_mechanisms, MECHANISMS),
                  ("agents", self.agents, ("mags_scripted", "mags")),
                  ("baselines", self.baselines, ("bare", "oracle", "full_context", "static_rag",
                                                 "static_rag_bm25"))]
        for name, values, known in checks:
            bad = [v for v in values if v not in known]
            if bad:
                raise MagsError(f"MechanismStudyConfig.{name} has unknown entries {bad}",
                                f"use some of {', '.join(known)}")
        for name in ("k", "loop_turns", "cost_every"):
            if getattr(self, name) < 1:
                raise MagsError(f"MechanismStudyConfig.{name} = {getattr(self, name)}",
                                f"set {name} to 1 or more")
        if not self.seeds:
            raise MagsError("MechanismStudyConfig.seeds is empty", "give at least one seed")

    def resolved(self) -> MechanismStudyConfig:
        if not self.smoke:
            return self
        return replace(self, seeds=self.seeds[:1], mechanisms=self.mechanisms[:2],
                       loop_mechanisms=self.loop_mechanisms[:1], loop_seeds=self.seeds[:1],
                       loop_regimes=self.loop_regimes[:1],
                       loop_turns=min(self.loop_turns, 60), cost_every=min(self.cost_every, 50))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def config_id(self) -> str:
        """A hash of what changes a game's outcome (not which games are played), so a run that
        adds regimes, seeds, mechanisms or agents resumes the games it shares with the last."""
        from mags_lib.evaluation.regimes import REGIMES

        keep = {k: getattr(self, k) for k in ("k", "embedder", "loop_turns", "models",
                                              "game_overrides", "memory_overrides", "smoke")}
        keep["regimes"] = {name: r.to_dict() for name, r in sorted(REGIMES.items())}
        return hashlib.sha1(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:12]


    def loop_id(self, roles: dict[str, Any] | None = None) -> str:
        """What a closed-loop (`mags`) game depends on beyond `config_id`: the ask and write
        models (their files' contents, or the names of the LLMs passed in as `roles`) and the
        agent's loop settings (`registry.loop_settings`), as `EvalConfig.config_id` hashes
        them. A retrained model or a changed default replays the loop's games only."""
        from mags_lib.evaluation.config import EvalConfig

        names = ({r: getattr(llm, "name", type(llm).__name__) for r, llm in roles.items()}
                 if roles else None)
        return EvalConfig(agents=["mags"], models=dict(self.models)).config_id(role_names=names)


@dataclass
class MechanismStudy:
    config: MechanismStudyConfig
    games: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    baselines: list[dict[str, Any]]
    cost: list[dict[str, Any]]
    out_dir: Path
    seconds: float


# ---------------------------------------------------------------------------- playing


def plan(cfg: MechanismStudyConfig) -> list[dict[str, Any]]:
    """Every game the study plays: regime, agent, mechanism (None = full memory), seed."""
    games = []
    for regime in cfg.regimes:
        for seed in cfg.seeds:
            games += [{"regime": regime, "agent": b, "mechanism": None, "seed": seed}
                      for b in cfg.baselines]
            for agent in cfg.agents:
                if agent == "mags" and (regime not in cfg.loop_regimes
                                        or seed not in cfg.loop_seeds):
                    continue
                mechanisms = cfg.loop_mechanisms if agent == "mags" else cfg.mechanisms
                games += [{"regime": regime, "agent": agent, "mechanism": m, "seed": seed}
                          for m in (None, *mechanisms)]
    return games


def play(spec: dict[str, Any], cfg: MechanismStudyConfig, embedder: Any,
         roles: dict[str, Any] | None) -> dict[str, Any]:
    """One game of `spec` (see `plan`): its decisions (turn, correct, recall hit, stale hit,
    recently changed) and its memory cost."""
    from mags_lib.agents import make_agent
    from mags_lib.evaluation.regimes import regime_game, regime_memory
    from mags_lib.evaluation.runner import run_game
    from mags_lib.game import SenselessGame
    from mags_lib.game.rule_reader import RuleReaderLLM
    from mags_lib.rss import current_rss_mb

    regime, seed, name = spec["regime"], spec["seed"], spec["agent"]
    game = regime_game(regime, seed, cfg.game_overrides.get(regime), smoke=cfg.smoke)
    env = SenselessGame(game)
    extra: dict[str, Any] = {}
    if name in ("mags_scripted", "mags"):
        extra = {"memory": regime_memory(regime, cfg.memory_overrides.get(regime)),
                 "ablate": spec["mechanism"], "embedder": embedder}
        if name == "mags":
            extra["roles"] = roles
    elif name.startswith("static_rag"):
        extra = {"embedder": embedder}
    if "embedder" in extra:
        warm_embedder(embedder, game)
    agent = make_agent(name, RuleReaderLLM(), k=cfg.k, env=env, **extra)
    sizes: list[dict[str, Any]] = []
    turn_seconds: list[float] = []
    clock = [time.perf_counter()]

    def on_turn(agent: Any, truth: Any, decision: Any, correct: bool | None) -> None:
        now = time.perf_counter()
        turn_seconds.append(now - clock[0])
        clock[0] = now
        memory = getattr(agent, "memory", None)
        if memory is not None and truth is not None and truth.turn % cfg.cost_every == 0:
            graph = memory.graph
            valid = sum(d["valid_to"] is None for _, d in graph.nodes(data=True))
            sizes.append({"turn": truth.turn, "nodes": graph.number_of_nodes(),
                          "valid_nodes": valid, "edges": graph.number_of_edges(),
                          "churn_per_step": memory.metrics()["churn_per_step"]})

    max_turns = cfg.loop_turns if name == "mags" else None
    record = run_game(agent, env, seed, name=name, max_turns=max_turns, on_turn=on_turn)
    decisions = [[d["turn"], int(d["correct"]), _flag(d["recall_hit"]), _flag(d["stale_hit"]),
                  int(d["recently_changed"])] for d in record.decisions]
    recall = sorted(d["memory_seconds"] for d in record.decisions)
    memory = getattr(agent, "memory", None)
    cost = {"turns": record.n_turns, "seconds": record.seconds,
            "final_nodes": memory.graph.number_of_nodes() if memory is not None else 0,
            "final_edges": memory.graph.number_of_edges() if memory is not None else 0,
            "max_nodes": max((s["nodes"] for s in sizes), default=0),
            "final_valid_nodes": sizes[-1]["valid_nodes"] if sizes else 0,
            "churn_per_step": (round(mean(s["churn_per_step"] for s in sizes), 4)
                               if sizes else 0.0),
            "recall_p50_ms": _ms(_quantile(recall, 0.5)),
            "recall_p95_ms": _ms(_quantile(recall, 0.95)),
            "turn_p50_ms": _ms(median(turn_seconds) if turn_seconds else None),
            "rss_mb": round(current_rss_mb() or 0.0, 1), "sizes": sizes}
    correct = [d[1] for d in decisions]
    return {**spec, "mechanism": spec["mechanism"] or "none",
            "accuracy": mean(correct) if correct else None, "n_decisions": len(correct),
            "decisions": decisions, "cost": cost, "loop": record.loop}


def warm_embedder(embedder: Any, game: Any, chunk: int = 256) -> None:
    """Encode every text the episode shows (and its rule sentences) in batches, once, so the
    games' recall latency measures the memory, not the first encoding of a sentence."""
    from mags_lib.game.senseless import generate_episode

    episode = generate_episode(game)
    texts = list(dict.fromkeys(
        [o.text for o in episode.observations] + list(episode.wrong_feedback.values())
        + [t.rule_text for t in episode.truths if t.rule_text]))
    for i in range(0, len(texts), chunk):
        embedder.encode(texts[i:i + chunk])


def _flag(value: Any) -> int | None:
    return None if value is None else int(bool(value))


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(1000.0 * seconds, 3)


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    return values[min(len(values) - 1, int(q * len(values)))]


# ------------------------------------------------------------------------------ stats


def paired_effect(full: dict[int, list[list[int]]], ablated: dict[int, list[list[int]]],
                  min_effect: float = 0.05) -> dict[str, Any]:
    """Effect of switching a mechanism off: seed -> decisions ([turn, correct, ...]) of the full
    memory and of the ablation, paired by turn (the same episode). See the module docstring.

    >>> full = {0: [[1, 1], [2, 1], [3, 1], [4, 0]], 1: [[1, 1], [2, 1]]}
    >>> off = {0: [[1, 0], [2, 1], [3, 0], [4, 0]], 1: [[1, 0], [2, 1]]}
    >>> e = paired_effect(full, off)
    >>> round(e["effect"], 3), e["n_decisions"], e["discordant"], e["n_seeds"]
    (0.5, 6, [3, 0], 2)
    """
    from scipy import stats

    from mags_lib.evaluation.metrics import t_interval, wilson_interval

    diffs: list[int] = []
    seed_effects: dict[int, float] = {}
    wins = losses = 0
    for seed in sorted(set(full) & set(ablated)):
        a = {d[0]: d[1] for d in full[seed]}
        b = {d[0]: d[1] for d in ablated[seed]}
        turns = sorted(set(a) & set(b))
        if not turns:
            continue
        d = [a[t] - b[t] for t in turns]
        diffs += d
        wins += sum(x > 0 for x in d)
        losses += sum(x < 0 for x in d)
        seed_effects[seed] = mean(d)
    n = len(diffs)
    if n == 0:
        return {"effect": None, "n_decisions": 0, "n_seeds": 0}
    effect = mean(diffs)
    sd = math.sqrt(sum((x - effect) ** 2 for x in diffs) / (n - 1)) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(n)
    seed_ci = t_interval(list(seed_effects.values()))
    p = (float(stats.binomtest(wins, wins + losses, 0.5).pvalue) if wins + losses else 1.0)
    full_right = n_full = off_right = 0
    for seed in seed_effects:
        a = {d[0]: d[1] for d in full[seed]}
        b = {d[0]: d[1] for d in ablated[seed]}
        turns = set(a) & set(b)
        full_right += sum(a[t] for t in turns)
        off_right += sum(b[t] for t in turns)
        n_full += len(turns)
    full_ci = wilson_interval(full_right, n_full)
    off_ci = wilson_interval(off_right, n_full)
    return {"effect": effect, "ci_low": effect - half, "ci_high": effect + half,
            "seed_effects": {str(s): v for s, v in seed_effects.items()},
            "seed_ci_low": seed_ci[0], "seed_ci_high": seed_ci[1],
            "n_seeds": len(seed_effects), "n_decisions": n, "discordant": [wins, losses],
            "p_mcnemar": p, "full": full_right / n_full, "full_ci": list(full_ci),
            "ablated": off_right / n_full, "ablated_ci": list(off_ci),
            "separated": bool(effect >= min_effect and full_ci[0] > off_ci[1])}


def mechanism_rows(games: list[dict[str, Any]], min_effect: float = 0.05) -> list[dict[str, Any]]:
    """One row per (regime, agent, mechanism) with its paired effect (see `paired_effect`)."""
    by: dict[tuple[str, str, str], dict[int, list[list[int]]]] = {}
    for g in games:
        by.setdefault((g["regime"], g["agent"], g["mechanism"]), {})[g["seed"]] = g["decisions"]
    rows = []
    for (regime, agent, mechanism), ablated in sorted(by.items()):
        full = by.get((regime, agent, "none"))
        if mechanism == "none" or full is None or agent not in ("mags_scripted", "mags"):
            continue
        rows.append({"regime": regime, "mechanism": mechanism, "agent": agent,
                     **paired_effect(full, ablated, min_effect)})
    return rows


def baseline_rows(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Accuracy with a 95% Wilson interval per (regime, agent) of the full memories and the
    baselines (the regime's spread: oracle above bare)."""
    from mags_lib.evaluation.metrics import wilson_interval

    by: dict[tuple[str, str], list[int]] = {}
    seeds: dict[tuple[str, str], set[int]] = {}
    for g in games:
        if g["mechanism"] != "none":
            continue
        key = (g["regime"], g["agent"])
        by.setdefault(key, []).extend(d[1] for d in g["decisions"])
        seeds.setdefault(key, set()).add(g["seed"])
    out = []
    for (regime, agent), correct in sorted(by.items()):
        lo, hi = wilson_interval(sum(correct), len(correct)) if correct else (None, None)
        out.append({"regime": regime, "agent": agent,
                    "accuracy": mean(correct) if correct else None, "ci_low": lo, "ci_high": hi,
                    "n_decisions": len(correct), "n_seeds": len(seeds[(regime, agent)])})
    return out


def cost_rows(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Memory cost per (regime, agent, mechanism), means over seeds."""
    by: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for g in games:
        by.setdefault((g["regime"], g["agent"], g["mechanism"]), []).append(g["cost"])
    out = []
    for (regime, agent, mechanism), costs in sorted(by.items()):
        row: dict[str, Any] = {"regime": regime, "agent": agent, "mechanism": mechanism,
                               "n_seeds": len(costs)}
        for key in ("turns", "final_nodes", "final_edges", "max_nodes", "churn_per_step",
                    "recall_p50_ms",
                    "recall_p95_ms", "turn_p50_ms", "rss_mb"):
            values = [c[key] for c in costs if c.get(key) is not None]
            row[key] = round(mean(values), 3) if values else None
        out.append(row)
    return out


# ------------------------------------------------------------------------------- study


def run_mechanism_study(cfg: MechanismStudyConfig, *, embedder: Any | None = None,
                        roles: dict[str, Any] | None = None,
                        out_dir: Path | None = None) -> MechanismStudy:
    """Play `plan(cfg)` (resuming finished games), then write games.jsonl, mechanisms.json,
    baselines.json, cost.json and config.json under results/<cfg.output>/."""
    from mags_lib.agents import MemoEmbedder
    from mags_lib.evaluation.records import append_jsonl, read_jsonl, write_jsonl
    from mags_lib.evaluation.runner import _embedder, write_ordered_json
    from mags_lib.manifest import write_json
    from mags_lib.progress import progress

    t0 = time.perf_counter()
    cfg = cfg.resolved()
    if out_dir is None:
        from mags_lib.paths import results_dir

        out_dir = results_dir(cfg.output)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    config_id = cfg.config_id()
    games_path = out_dir / "games.jsonl"
    kept = ([g for g in read_jsonl(games_path) if g.get("config_id") == config_id]
            if cfg.resume and games_path.exists() else [])
    loop_id = (cfg.loop_id(roles) if "mags" in cfg.agents and (
        any(g["agent"] == "mags" for g in kept) or any(s["agent"] == "mags" for s in plan(cfg)))
        else None)
    kept = [g for g in kept if g["agent"] != "mags" or g.get("loop_id") == loop_id]
    write_jsonl(games_path, kept)
    write_json(out_dir / "config.json", {**cfg.to_dict(), "config_id": config_id})
    done = {_key(g) for g in kept}
    todo = [s for s in plan(cfg) if _key({**s, "mechanism": s["mechanism"] or "none"})
            not in done]
    embedder = embedder or MemoEmbedder(_embedder(cfg.embedder))
    if roles is None and any(s["agent"] == "mags" for s in todo):
        roles = load_loop_roles(cfg)
    games = list(kept)
    for spec in progress(todo, "mechanism games"):
        game = {**play(spec, cfg, embedder, roles), "config_id": config_id,
                **({"loop_id": loop_id} if spec["agent"] == "mags" else {})}
        append_jsonl(games_path, game)
        games.append(game)
    rows = mechanism_rows(games, cfg.min_effect)
    base = baseline_rows(games)
    cost = cost_rows(games)
    write_ordered_json(out_dir / "mechanisms.json", rows)
    write_ordered_json(out_dir / "baselines.json", base)
    write_ordered_json(out_dir / "cost.json", cost)
    return MechanismStudy(cfg, games, rows, base, cost, out_dir,
                          round(time.perf_counter() - t0, 2))


def _key(game: dict[str, Any]) -> tuple[str, str, str, int]:
    return game["regime"], game["agent"], game["mechanism"], int(game["seed"])


def load_loop_roles(cfg: MechanismStudyConfig) -> dict[str, Any]:
    """The closed loop's ask and write models as `cfg.models` names them (notebook 04's GGUFs
    by default; a missing one is a MagsError naming the notebook to run)."""
    from mags_lib.evaluation.config import EvalConfig
    from mags_lib.evaluation.runner import load_role_llms

    return load_role_llms(EvalConfig(agents=["mags"], models=dict(cfg.models)))


# ------------------------------------------------------------------------------ report


def _fmt(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def markdown(rows: list[dict[str, Any]], baselines: list[dict[str, Any]],
             cost: list[dict[str, Any]] | None = None) -> str:
    """The study as Markdown: the regimes' spread (bare, full memories, oracle), the effect
    table (regime x mechanism, one per agent; **bold** = separated) and the memory cost."""
    out = ["Accuracy with the full memory and without one (95% Wilson intervals, decisions "
           "pooled over seeds):", "",
           "| regime | agent | accuracy | 95% CI | decisions | seeds |", "|---|---|---|---|---|---|"]
    for b in baselines:
        label = b["agent"] + (" (upper bound)" if b["agent"] in ("mags_scripted", "oracle")
                              else "")
        out.append(f"| {b['regime']} | {label} | {_fmt(b['accuracy'])} | "
                   f"[{_fmt(b['ci_low'])}, {_fmt(b['ci_high'])}] | {b['n_decisions']} | "
                   f"{b['n_seeds']} |")
    for agent in dict.fromkeys(r["agent"] for r in rows):
        mine = [r for r in rows if r["agent"] == agent]
        regimes = list(dict.fromkeys(r["regime"] for r in mine))
        mechanisms = list(dict.fromkeys(r["mechanism"] for r in mine))
        label = ("mags_scripted (upper bound: perfect writer, game structure given)"
                 if agent == "mags_scripted" else f"{agent} (the closed loop: MAGS's own models)")
        out += ["", f"Effect of switching each mechanism off, **{label}**: full memory minus "
                "ablation, accuracy points, 95% paired interval; **bold**: costs at least 0.05 "
                "with non-overlapping intervals; a negative effect means the memory does better "
                "without the mechanism.", "",
                "| regime | " + " | ".join(mechanisms) + " |",
                "|---|" + "---|" * len(mechanisms)]
        for regime in regimes:
            cells = []
            for m in mechanisms:
                r = next((x for x in mine if x["regime"] == regime and x["mechanism"] == m), None)
                if r is None or r.get("effect") is None:
                    cells.append("–")
                    continue
                cell = f"{r['effect']:+.3f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]"
                cells.append(f"**{cell}**" if r["separated"] else cell)
            out.append(f"| {regime} | " + " | ".join(cells) + " |")
    if cost:
        out += ["", "Memory cost of the full memories (means over seeds; recall latency without "
                "the first encoding of a sentence, and for `mags` with its ask model's call; "
                "RSS of the whole process):", "",
                "| regime | agent | turns | nodes | edges | churn / step | recall p50 ms | "
                "recall p95 ms | RSS MB |", "|---|---|---|---|---|---|---|---|---|"]
        for c in cost:
            if c["mechanism"] != "none" or c["agent"] not in ("mags_scripted", "mags"):
                continue
            out.append(f"| {c['regime']} | {c['agent']} | {c['turns']:.0f} | "
                       f"{c['final_nodes']:.0f} | {c['final_edges']:.0f} | "
                       f"{_fmt(c['churn_per_step'], 2)} | {_fmt(c['recall_p50_ms'], 2)} | "
                       f"{_fmt(c['recall_p95_ms'], 2)} | {_fmt(c['rss_mb'], 0)} |")
    return "\n".join(out)


def verdicts(rows: list[dict[str, Any]], agent: str = "mags_scripted",
             min_effect: float = 0.05) -> list[dict[str, Any]]:
    """Per mechanism: the regime where switching it off costs most and the one where it costs
    least (negative: the memory does better without it), and a one-line verdict."""
    out = []
    mine = [r for r in rows if r["agent"] == agent and r.get("effect") is not None]
    for mechanism in dict.fromkeys(r["mechanism"] for r in mine):
        rs = [r for r in mine if r["mechanism"] == mechanism]
        best = max(rs, key=lambda r: r["effect"])
        worst = min(rs, key=lambda r: r["effect"])
        helps = [r["regime"] for r in rs if r["separated"]]
        hurts = [r["regime"] for r in rs if r["effect"] <= -min_effect and r["ci_high"] < 0]
        if helps:
            verdict = "helps in " + ", ".join(helps)
        else:
            verdict = f"costs < {min_effect:.2f} when off in every regime tried"
        if hurts:
            verdict += "; the memory does better without it in " + ", ".join(hurts)
        out.append({"mechanism": mechanism, "agent": agent, "verdict": verdict,
                    "max_effect": best["effect"], "max_regime": best["regime"],
                    "max_ci": [best["ci_low"], best["ci_high"]],
                    "min_effect": worst["effect"], "min_regime": worst["regime"],
                    "min_ci": [worst["ci_low"], worst["ci_high"]], "n_seeds": best["n_seeds"]})
    return out


def verdict_markdown(rows: list[dict[str, Any]], agent: str = "mags_scripted") -> str:
    """`verdicts` as a Markdown table."""
    lines = ["| mechanism | largest cost when off (regime, 95% CI) | smallest (regime, 95% CI) | "
             "verdict |", "|---|---|---|---|"]
    for v in verdicts(rows, agent):
        lines.append(f"| {v['mechanism']} | {v['max_effect']:+.3f} ({v['max_regime']}, "
                     f"[{v['max_ci'][0]:+.2f}, {v['max_ci'][1]:+.2f}]) | {v['min_effect']:+.3f} "
                     f"({v['min_regime']}, [{v['min_ci'][0]:+.2f}, {v['min_ci'][1]:+.2f}]) | "
                     f"{v['verdict']} |")
    return "\n".join(lines)


def verdict_line(found: list[dict[str, Any]]) -> str:
    """`verdicts` in one sentence: each mechanism that helps somewhere with its largest cost when
    off, then those that cost little everywhere, named together.

    >>> verdict_line([{"mechanism": "decay", "verdict": "helps in scale", "max_effect": 0.097,
    ...                "max_regime": "scale", "max_ci": [0.09, 0.11]},
    ...               {"mechanism": "kcore", "verdict": "costs < 0.05 when off in every regime "
    ...                "tried", "max_effect": 0.0, "max_regime": "scale", "max_ci": [0.0, 0.0]}])
    'decay helps in scale (largest cost when off +0.097 in scale, [+0.09, +0.11]); kcore costs < 0.05 when off in every regime tried.'
    """
    parts, idle = [], {}
    for v in found:
        if v["verdict"].startswith("helps"):
            parts.append(f"{v['mechanism']} {v['verdict']} (largest cost when off "
                         f"{v['max_effect']:+.3f} in {v['max_regime']}, "
                         f"[{v['max_ci'][0]:+.2f}, {v['max_ci'][1]:+.2f}])")
        else:
            idle.setdefault(v["verdict"], []).append(v["mechanism"])
    parts += [f"{', '.join(names)} "
              f"{verdict.replace('costs', 'cost', 1) if len(names) > 1 else verdict}"
              for verdict, names in idle.items()]
    return "; ".join(parts) + "."


def verdicts_from_markdown(table: str) -> list[dict[str, Any]]:
    """The verdicts back from a `verdict_markdown` table (a README block kept from an earlier
    run, whose results are not here), as far as `verdict_line` needs them."""
    import re

    out = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.match(r"([+-][\d.]+) \((\w+), \[([+-][\d.]+), ([+-][\d.]+)\]\)",
                     cells[1]) if len(cells) == 4 else None
        if m:
            out.append({"mechanism": cells[0], "verdict": cells[3],
                        "max_effect": float(m[1]), "max_regime": m[2],
                        "max_ci": [float(m[3]), float(m[4])]})
    return out
