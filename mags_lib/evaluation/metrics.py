"""Pure metrics over decision records (dicts, see `records.decision_record`) and game records.

Every function takes plain data and returns numbers or dicts of numbers, so a notebook can
recompute any figure from `games.jsonl` alone.

    >>> lo, hi = wilson_interval(8, 10)
    >>> round(lo, 3), round(hi, 3)
    (0.49, 0.943)
    >>> recovery_turns([
    ...     {"turn": 5, "key": "a", "n_changes": 1, "correct": False},
    ...     {"turn": 9, "key": "a", "n_changes": 1, "correct": True},
    ...     {"turn": 12, "key": "b", "n_changes": 0, "correct": False}])
    [2]

`summarize(games)` builds metrics.json: the oracle-bare gap and the verdict on whether the
evaluation measures anything come first, then per-agent metrics, then the ablation table.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from statistics import mean, pstdev
from typing import Any

Record = dict[str, Any]
ABLATION_ROWS = ("mags_scripted", "mags_scripted_no_hebbian", "mags_scripted_no_decay",
                 "mags_scripted_flat", "mags_scripted_no_contradiction", "static_rag")


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (95% for z = 1.96); (0, 1) when n = 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def t_interval(values: list[float], level: float = 0.95) -> tuple[float | None, float | None]:
    """Student-t interval of the mean of `values` (n - 1 degrees of freedom); (None, None)
    with fewer than two values.

    >>> [round(x, 3) for x in t_interval([0.1, 0.2, 0.3])]
    [-0.048, 0.448]
    """
    if len(values) < 2:
        return None, None
    from scipy import stats

    m = sum(values) / len(values)
    s = math.sqrt(sum((x - m) ** 2 for x in values) / (len(values) - 1))
    half = float(stats.t.ppf(0.5 + level / 2, len(values) - 1)) * s / math.sqrt(len(values))
    return m - half, m + half


def accuracy(decisions: list[Record]) -> dict[str, float | int | None]:
    """Pooled decision accuracy with its Wilson 95% interval.

    >>> accuracy([{"correct": True}, {"correct": False}])["accuracy"]
    0.5
    """
    n = len(decisions)
    k = sum(bool(d["correct"]) for d in decisions)
    lo, hi = wilson_interval(k, n)
    return {"accuracy": k / n if n else None, "n": n, "ci_low": lo, "ci_high": hi}


def seed_spread(games: Iterable[Any]) -> dict[str, Any]:
    """Mean and (population) standard deviation of per-seed accuracy."""
    per_seed = {g.seed: g.accuracy for g in games if g.decisions}
    values = list(per_seed.values())
    return {"mean": mean(values) if values else None,
            "std": pstdev(values) if len(values) > 1 else 0.0 if values else None,
            "per_seed": per_seed}


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def recall_accuracy(decisions: list[Record]) -> float | None:
    """Share of decisions whose memory lines held the governing rule's current text."""
    return _share([bool(d["recall_hit"]) for d in decisions])


def stale_recall_rate(decisions: list[Record]) -> float | None:
    """Among decisions about a rule that has changed, the share whose memory lines held a
    superseded version of it (None if no such decision)."""
    return _share([bool(d["stale_hit"]) for d in decisions if d.get("n_changes", 0) > 0])


def after_drift(decisions: list[Record]) -> dict[str, Any]:
    """Accuracy (with a 95% Wilson interval) on decisions about a rule that has changed at
    least once: where a memory that cannot replace a fact goes wrong."""
    return accuracy([d for d in decisions if d.get("n_changes", 0) > 0])


def memory_quality(decisions: list[Record]) -> dict[str, float | None]:
    """At decision time: the share where a valid node held the governing rule's current
    version, and (over changed rules) where a valid node still held its previous version."""
    held = [bool(d["held_valid"]) for d in decisions if d.get("held_valid") is not None]
    stale = [bool(d["held_stale"]) for d in decisions
             if d.get("held_stale") is not None and d.get("n_changes", 0) > 0]
    return {"governing_held_valid": _share(held), "stale_held_valid": _share(stale)}


def adaptability(decisions: list[Record], window: int = 20) -> dict[str, Any]:
    """Accuracy on decisions about a rule changed at most `window` turns ago ("recent"),
    changed longer ago ("settled"), and never changed ("stable")."""
    groups: dict[str, list[bool]] = {"recent": [], "settled": [], "stable": []}
    for d in decisions:
        if d.get("n_changes", 0) == 0:
            groups["stable"].append(bool(d["correct"]))
        elif (d.get("turns_since_change") or 0) <= window:
            groups["recent"].append(bool(d["correct"]))
        else:
            groups["settled"].append(bool(d["correct"]))
    out: dict[str, Any] = {}
    for name, flags in groups.items():
        out[f"{name}_accuracy"] = _share(flags)
        out[f"{name}_n"] = len(flags)
    return out


def recovery_turns(decisions: list[Record]) -> list[int | None]:
    """For every (rule, version) after a change, the decisions up to and including the first
    correct one (1 = right at once), None if never right within the game; in turn order."""
    episodes: dict[tuple[str, int], list[Record]] = defaultdict(list)
    for d in decisions:
        if d.get("n_changes", 0) > 0 and d.get("key") is not None:
            episodes[(d["key"], d["n_changes"])].append(d)
    out: list[tuple[int, int | None]] = []
    for group in episodes.values():
        group = sorted(group, key=lambda d: d["turn"])
        first = next((i + 1 for i, d in enumerate(group) if d["correct"]), None)
        out.append((group[0]["turn"], first))
    return [n for _, n in sorted(out, key=lambda pair: pair[0])]


def recovery_summary(decisions: list[Record]) -> dict[str, Any]:
    turns = recovery_turns(decisions)
    recovered = [t for t in turns if t is not None]
    return {"changes": len(turns), "recovered_share": _share([t is not None for t in turns]),
            "mean_decisions_to_recover": mean(recovered) if recovered else None}


def update_fidelity(nodes: list[Record], versions: dict[str, list[str]]) -> float | None:
    """Share of changed rules whose current version is held by a valid node and none of whose
    older versions is (None when no rule changed). `nodes` are {"text", "valid"} dicts;
    `versions` maps a rule key to its canonical texts, oldest first; a node holds a version
    when it names the rule's creature, condition and the version's item in any wording
    (`records.states_rule`).

    >>> k = "red quax|rainy"
    >>> update_fidelity([{"text": "The red quax eats iron when rainy.", "valid": True},
    ...                  {"text": "On rainy turns, the red quax eats only the slate.",
    ...                   "valid": False}],
    ...                 {k: ["On rainy turns, the red quax eats only the slate.",
    ...                      "On rainy turns, the red quax eats only the iron."]})
    1.0
    """
    from mags_lib.evaluation.records import states_rule
    from mags_lib.game import parse_rule

    changed = {k: v for k, v in versions.items() if len(v) > 1}
    if not changed:
        return None
    valid = [n["text"] for n in nodes if n["valid"]]
    ok = 0
    for key, texts in changed.items():
        items = [r.item for r in map(parse_rule, texts) if r is not None]
        if not items:
            continue
        current, older = items[-1], set(items[:-1]) - {items[-1]}
        has_current = any(states_rule(t, key, current) for t in valid)
        has_old = any(states_rule(t, key, o) and not states_rule(t, key, current)
                      for o in older for t in valid)
        ok += has_current and not has_old
    return ok / len(changed)


def efficiency(decisions: list[Record], n_bins: int = 3) -> dict[str, Any]:
    """Prompt tokens and seconds per decision, overall and in `n_bins` equal spans of the
    game's turns (first to last): a memory that keeps the prompt flat has equal bins."""
    if not decisions:
        return {"tokens_per_decision": None, "seconds_per_decision": None,
                "tokens_by_span": [], "seconds_by_span": []}
    last = max(d["turn"] for d in decisions) + 1
    spans: list[list[Record]] = [[] for _ in range(n_bins)]
    for d in decisions:
        spans[min(n_bins - 1, d["turn"] * n_bins // last)].append(d)
    return {
        "tokens_per_decision": mean(d["prompt_tokens"] for d in decisions),
        "seconds_per_decision": mean(d["seconds"] for d in decisions),
        "memory_seconds_per_decision": mean(d.get("memory_seconds", 0.0) for d in decisions),
        "tokens_by_span": [mean(d["prompt_tokens"] for d in s) if s else None for s in spans],
        "seconds_by_span": [mean(d["seconds"] for d in s) if s else None for s in spans],
    }


def agent_summary(games: list[Any], recent_window: int = 20) -> dict[str, Any]:
    """Every metric of one agent over its games (decisions pooled over seeds)."""
    decisions = [d for g in games for d in g.decisions]
    fidelity = [g.update_fidelity for g in games if g.update_fidelity is not None]
    sizes = [g.memory.get("size", 0) for g in games]
    return {
        **accuracy(decisions),
        "seeds": seed_spread(games),
        "recall_accuracy": recall_accuracy(decisions),
        "stale_recall_rate": stale_recall_rate(decisions),
        "after_drift": after_drift(decisions),
        "memory_quality": memory_quality(decisions),
        "loop": loop_summary(games),
        "update_fidelity": mean(fidelity) if fidelity else None,
        "adaptability": adaptability(decisions, recent_window),
        "recovery": recovery_summary(decisions),
        "efficiency": efficiency(decisions),
        "memory_size_final": mean(sizes) if sizes else None,
        "games": len(games),
        "seconds_per_game": mean(g.seconds for g in games) if games else None,
    }


def loop_summary(games: list[Any]) -> dict[str, Any] | None:
    """The closed loop's counts summed over games: write / ask validity, ops, and the router's
    confusion (observation kind -> roles it was sent to); None for other agents."""
    loops = [g.loop for g in games if getattr(g, "loop", None)]
    if not loops:
        return None
    totals: dict[str, float] = {}
    routes: dict[str, dict[str, int]] = {}
    for loop in loops:
        for k, v in loop.items():
            if k == "routes":
                for kind, counts in v.items():
                    for roles, n in counts.items():
                        routes.setdefault(kind, {})
                        routes[kind][roles] = routes[kind].get(roles, 0) + n
            elif isinstance(v, int | float) and not k.endswith("validity"):
                totals[k] = totals.get(k, 0) + v
    calls, asks = totals.get("write_calls", 0), totals.get("ask_calls", 0)
    return {**totals, "routes": routes,
            "write_validity": totals.get("write_parsed", 0) / calls if calls else None,
            "ask_validity": 1 - totals.get("ask_malformed", 0) / asks if asks else None,
            # of the turns stating a rule where the writer stored a sentence, the share whose
            # sentence names the rule's creature, condition and item (runner._score_write)
            "write_fidelity": (totals["rule_stores_exact"] / totals["rule_stores"]
                               if totals.get("rule_stores") else None)}


def oracle_vs_bare(agents: dict[str, dict[str, Any]], threshold: float = 0.15) -> dict[str, Any]:
    """Does the evaluation measure memory at all? Valid when the oracle beats bare by at least
    `threshold` and their 95% intervals do not overlap."""
    oracle, bare = agents.get("oracle"), agents.get("bare")
    if not oracle or not bare or oracle["accuracy"] is None or bare["accuracy"] is None:
        return {"gap": None, "valid": None, "ci_separated": None,
                "note": "oracle or bare missing: validity unknown"}
    gap = oracle["accuracy"] - bare["accuracy"]
    separated = oracle["ci_low"] > bare["ci_high"]
    valid = gap >= threshold and separated
    note = ("valid: memory in the prompt changes the model's answers" if valid else
            f"NOT VALID: oracle is only {gap:+.3f} over bare (threshold {threshold}, "
            f"intervals {'separate' if separated else 'overlap'}); the model does not use "
            "the rules it is given, so no comparison of memories means anything")
    return {"gap": gap, "valid": valid, "ci_separated": separated, "note": note}


def ablation_table(agents: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per memory variant of `mags_scripted` (and static RAG): accuracy, its change
    against the full scripted memory, recall,
    stale recall, update fidelity, accuracy right after changes."""
    base = agents.get("mags_scripted", {}).get("accuracy")
    rows = []
    for name in ABLATION_ROWS:
        a = agents.get(name)
        if not a:
            continue
        rows.append({
            "agent": name, "accuracy": a["accuracy"], "ci_low": a["ci_low"],
            "ci_high": a["ci_high"],
            "delta_vs_full": None if base is None or a["accuracy"] is None
            else a["accuracy"] - base,
            "recall_accuracy": a["recall_accuracy"], "stale_recall_rate": a["stale_recall_rate"],
            "update_fidelity": a["update_fidelity"],
            "recent_accuracy": a["adaptability"]["recent_accuracy"],
        })
    return rows


def summarize(games: list[Any], *, gap_threshold: float = 0.15,
              recent_window: int = 20) -> dict[str, Any]:
    """metrics.json: verdict first (oracle-bare gap, validity), then agents and ablations."""
    by_agent: dict[str, list[Any]] = defaultdict(list)
    for g in games:
        by_agent[g.agent].append(g)
    agents = {name: agent_summary(gs, recent_window) for name, gs in by_agent.items()}
    verdict = oracle_vs_bare(agents, gap_threshold)
    return {
        "oracle_vs_bare_gap": verdict["gap"],
        "evaluation_valid": verdict["valid"],
        "validity": {**verdict, "threshold": gap_threshold},
        "accuracy": {n: a["accuracy"] for n, a in agents.items()},
        "agents": agents,
        "ablation": ablation_table(agents),
        "n_games": len(games),
    }


def ablation_markdown(rows: list[dict[str, Any]]) -> str:
    """The ablation table as markdown (for the README and the notebook)."""
    def f(x: float | None, signed: bool = False) -> str:
        return "–" if x is None else (f"{x:+.3f}" if signed else f"{x:.3f}")

    lines = ["| agent | accuracy (95% CI) | vs full | recall | stale recall | fidelity | "
             "recent acc |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['agent']} | {f(r['accuracy'])} ({f(r['ci_low'])}–{f(r['ci_high'])})"
                     f" | {f(r['delta_vs_full'], True)} | {f(r['recall_accuracy'])} | "
                     f"{f(r['stale_recall_rate'])} | {f(r['update_fidelity'])} | "
                     f"{f(r['recent_accuracy'])} |")
    return "\n".join(lines)
