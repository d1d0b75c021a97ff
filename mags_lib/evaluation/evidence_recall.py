"""Evidence recall on conversations: do the turns a question rests on come back from memory?

    from mags_lib.evaluation.evidence_recall import conversation_rows, summarize

    rows = conversation_rows(conv, retriever="memory", embedder=emb)   # one row per question
    summarize(rows)   # recall@5 / @10 overall and per category, 95% bootstrap over conversations

Each turn is written verbatim into a fresh `LiquidMemory` (episodic, `source` = its 'D<s>:<t>'
id, the text as "Speaker: words", a shared image's caption appended), then every question with
gold evidence is asked with `recall(question, k)`. recall@k is the share of a question's
evidence ids found among the sources of the top k hits (LoCoMo's "recall accuracy"); a merged
node counts with all of its sources, as a reader would see them. `retriever="bm25"` ranks the
same texts with flat Okapi BM25 and no memory at all: the static baseline.

By default recall does not learn while it is being measured (`learn=False`), so the order of
the questions does not change the answers; `learn=True` measures the memory as an agent would
use it, with Hebbian edges from every question before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from mags_lib.conversations.locomo import CATEGORIES
from mags_lib.conversations.types import Conversation, turn_text

KS = (5, 10)


def recall_at(found: Sequence[str], gold: Sequence[str]) -> float:
    """Share of the gold ids among `found`.

    >>> recall_at(["D1:2", "D3:4"], ["D3:4", "D9:9"])
    0.5
    """
    return len(set(gold) & set(found)) / len(set(gold)) if gold else float("nan")


def _memory_ranker(conv: Conversation, embedder: Any, learn: bool, config: Any):
    from mags_lib.memory import LiquidMemory

    mem = LiquidMemory(config=config, embedder=embedder)
    mem.observe_many([{"text": turn_text(t), "source": t.dia_id, "block": "episodic"}
                      for t in conv.turns()])

    def ranked(question: str, k: int) -> list[list[str]]:
        return [[str(s) for s in h.sources] for h in mem.recall(question, k, learn=learn)]
    return ranked


def _bm25_ranker(conv: Conversation):
    from mags_lib.memory.lexical import BM25Index

    index, ids = BM25Index(), {}
    for slot, t in enumerate(conv.turns()):
        index.add(slot, turn_text(t))
        ids[slot] = t.dia_id

    def ranked(question: str, k: int) -> list[list[str]]:
        found, _ = index.search(question, k=k)
        return [[ids[int(s)]] for s in found]
    return ranked


def conversation_rows(conv: Conversation, *, retriever: str = "memory",
                      embedder: Any = None, ks: Sequence[int] = KS, learn: bool = False,
                      config: Any = None) -> list[dict[str, Any]]:
    """One row per question with evidence: conversation, category, recall@k for each k, the
    top ids. `retriever` is 'memory' (LiquidMemory, needs `embedder`) or 'bm25'."""
    if retriever == "memory":
        ranked = _memory_ranker(conv, embedder, learn, config)
    elif retriever == "bm25":
        ranked = _bm25_ranker(conv)
    else:
        raise ValueError(f"unknown retriever {retriever!r}: use 'memory' or 'bm25'")
    rows = []
    for i, qa in enumerate(conv.qa):
        if not qa.evidence:
            continue
        hits = ranked(qa.asked(), max(ks))
        row = {"conversation": conv.sample_id, "question": i, "category": qa.category,
               "evidence": list(qa.evidence), "top": [s for h in hits for s in h][:max(ks)]}
        for k in ks:
            row[f"recall@{k}"] = recall_at([s for h in hits[:k] for s in h], qa.evidence)
        rows.append(row)
    return rows


def bootstrap_by_conversation(rows: list[dict[str, Any]], key: str, n: int = 2000,
                              seed: int = 0) -> tuple[float | None, float | None]:
    """95% percentile interval of the mean of `key` over questions, resampling whole
    conversations (questions of one conversation are not independent)."""
    groups: dict[str, list[float]] = {}
    for r in rows:
        groups.setdefault(r["conversation"], []).append(r[key])
    if len(groups) < 2:
        return None, None
    sums = np.array([sum(v) for v in groups.values()])
    counts = np.array([len(v) for v in groups.values()])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), size=(n, len(groups)))
    means = sums[picks].sum(1) / counts[picks].sum(1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def summarize(rows: Iterable[dict[str, Any]], ks: Sequence[int] = KS) -> dict[str, Any]:
    """recall@k overall and per category (mean over questions), with bootstrap intervals."""
    rows = list(rows)
    out: dict[str, Any] = {"questions": len(rows),
                           "conversations": len({r["conversation"] for r in rows})}
    groups = {"all": rows} | {f"{c} {name}": [r for r in rows if r["category"] == c]
                              for c, name in CATEGORIES.items()}
    for name, group in groups.items():
        if not group:
            continue
        entry: dict[str, Any] = {"n": len(group)}
        for k in ks:
            key = f"recall@{k}"
            entry[key] = float(np.mean([r[key] for r in group]))
            entry[f"{key}_ci95"] = bootstrap_by_conversation(group, key)
        out[name] = entry
    return out


def recall_by_source(sources: dict[str, Sequence[Conversation]], embedder: Any,
                     config: Any) -> dict[str, dict[str, Any]]:
    """`summarize`d raw-turn recall of a memory with `config`, for each source's conversations."""
    return {name: summarize(r for c in convs for r in conversation_rows(
        c, retriever="memory", embedder=embedder, config=config))
        for name, convs in sources.items()}


def settings_sweep(sources: dict[str, Sequence[Conversation]], embedder: Any,
                   settings: dict[str, dict[str, Any]], *, base: dict[str, Any] | None = None,
                   max_loss: float = 0.01, min_gain: float = 0.02) -> dict[str, Any]:
    """Raw-turn evidence recall for named `MemoryConfig` overrides (`settings`, each applied on
    top of `base`, default `memory.DIALOGUE_MEMORY`; the name "current" is `base` itself and is
    always measured), on every source of a development split. The choice: the highest recall@10
    averaged over the sources among the settings that lose at most `max_loss` recall@10 on any
    source against "current"; `adopt` says whether it gains at least `min_gain` on that mean (a
    change must pay). {"base", "settings", "sources", "by_setting": {name: {source:
    summarize}}, "mean_recall@10", "eligible", "best", "gain", "adopt"}."""
    from mags_lib.memory import DIALOGUE_MEMORY, MemoryConfig

    base = dict(DIALOGUE_MEMORY if base is None else base)
    named = {"current": {}} | {k: dict(v) for k, v in settings.items() if k != "current"}
    by_setting = {name: recall_by_source(sources, embedder, MemoryConfig.from_dict(
        {**base, **over})) for name, over in named.items()}

    def r10(name: str, source: str) -> float:
        return float(by_setting[name][source].get("all", {}).get("recall@10", float("nan")))
    means = {name: float(np.mean([r10(name, src) for src in sources])) for name in named}
    eligible = [name for name in named if all(
        r10(name, src) >= r10("current", src) - max_loss - 1e-12 for src in sources)]
    best = max(eligible, key=lambda name: (means[name], name == "current"))
    gain = means[best] - means["current"]
    return {"base": base, "settings": named, "max_loss": max_loss, "min_gain": min_gain,
            "sources": {name: [c.sample_id for c in convs] for name, convs in sources.items()},
            "by_setting": by_setting, "mean_recall@10": means, "eligible": eligible,
            "best": best, "gain": gain, "adopt": best != "current" and gain >= min_gain - 1e-12}


def settings_markdown(sweep: dict[str, Any]) -> str:
    """One row per setting: recall@5 / @10 (95% CI) on each source, the mean recall@10 and its
    difference to "current"; the choice marked, ineligible settings flagged."""
    names = list(sweep["sources"])
    rows = ["| setting | " + " | ".join(f"{n} recall@5 | {n} recall@10 (95% CI)" for n in names)
            + " | mean recall@10 | vs current |", "|---|" + "---|---|" * len(names) + "---|---|"]
    current = sweep["mean_recall@10"]["current"]
    for name in sweep["settings"]:
        cells = []
        for src in names:
            s = sweep["by_setting"][name][src]["all"]
            lo, hi = s["recall@10_ci95"] or (None, None)
            interval = f" ({lo:.2f}–{hi:.2f})" if lo is not None else ""
            cells.append(f"{s['recall@5']:.3f} | {s['recall@10']:.3f}{interval}")
        mark = (" (chosen)" if name == sweep["best"] else "") + (
            "" if name in sweep["eligible"] else " (loses a source)")
        mean = sweep["mean_recall@10"][name]
        rows.append(f"| {name}{mark} | " + " | ".join(cells)
                    + f" | {mean:.3f} | {mean - current:+.3f} |")
    return "\n".join(rows)


def context_sweep(sources: dict[str, Sequence[Conversation]], embedder: Any,
                  values: Sequence[int] = (0, 1, 2, 3, 4), margin: float = 0.01
                  ) -> dict[str, Any]:
    """Evidence recall of raw turns in the memory for each `episode_context` of `values` (each
    turn's vector also embeds that many turns before it; the rest of `MemoryConfig` at its
    defaults), on every source (name -> conversations of a development split): how
    `memory.DIALOGUE_MEMORY` is chosen. {"values", "sources": {name: conversation ids},
    "by_value": {n: {name: `summarize`d rows}}, "best": the n of the highest recall@10 averaged
    over the sources, or the smallest value within `margin` of it (a change must pay)}."""
    from mags_lib.memory import MemoryConfig

    by_value = {str(n): recall_by_source(sources, embedder, MemoryConfig.from_dict(
        {"episode_context": int(n)})) for n in values}

    def mean_r10(n: int) -> float:
        return float(np.mean([s["all"]["recall@10"] for s in by_value[str(n)].values()]))
    best = None
    if values and sources:
        top = max(mean_r10(n) for n in values)
        best = min(n for n in values if mean_r10(n) >= top - margin)
    return {"values": list(values), "margin": margin,
            "mean_recall@10": {str(n): mean_r10(n) for n in values} if sources else {},
            "sources": {name: [c.sample_id for c in convs] for name, convs in sources.items()},
            "by_value": by_value, "best": best}


def sweep_markdown(sweep: dict[str, Any]) -> str:
    """One row per `episode_context` value: recall@5 / @10 (95% CI) on each source, and the
    mean recall@10 the choice is made by."""
    names = list(sweep["sources"])
    rows = ["| episode_context | " + " | ".join(f"{n} recall@5 | {n} recall@10 (95% CI)"
                                                for n in names) + " | mean recall@10 |",
            "|---|" + "---|---|" * len(names) + "---|"]
    for n in sweep["values"]:
        cells = []
        for name in names:
            s = sweep["by_value"][str(n)][name]["all"]
            lo, hi = s["recall@10_ci95"] or (None, None)
            interval = f" ({lo:.2f}–{hi:.2f})" if lo is not None else ""
            cells.append(f"{s['recall@5']:.3f} | {s['recall@10']:.3f}{interval}")
        mark = " (chosen)" if n == sweep["best"] else ""
        rows.append(f"| {n}{mark} | " + " | ".join(cells)
                    + f" | {sweep['mean_recall@10'][str(n)]:.3f} |")
    return "\n".join(rows)
