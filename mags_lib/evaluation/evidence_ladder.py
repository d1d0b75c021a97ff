"""Where a closed-loop agent's evidence goes: its evidence recall, one change at a time.

`mags_episodic` shows the answer model fewer of a LoCoMo question's evidence turns than a
memory of the raw turns recalled with the question alone (`evidence_recall`). Two things stand
between them, and the average does not say which costs what: the write model's facts, which
share the memory (and its recall's places) with the turns, and the ask model's queries, which
recall beside the question. The ladder reads each question with both memories (the agent as
it runs, and the same agent with `LoopConfig.writer` 'none': its turns only) and both query
sets (the question alone, the loop's queries), so each step changes one thing:

* `turns_question`: turns only, the question alone, its k best (what `evidence_recall`
  measures);
* `turns_queries`: turns only, the ask model's queries and the question, each recalling
  `LoopConfig.query_k` hits, merged as the loop merges;
* `facts_question`: turns and the write model's facts, the question alone;
* `facts_queries`: turns and facts, the loop's queries, merged (no other read-path option);
* `loop`: the lines the agent shows the answer model (its read-path options applied:
  `retired_turns`, earlier versions for a question about the past, ...).

The four middle rungs recall without learning (`learn=False`), so none of them changes the
memory; the last is read as the evaluation reads it (recall learns), after them. The ask model
is asked once a question (its prompt is the question alone, so both memories get the same
queries). Each rung is `conversation_qa.evidence_row`'s recall@k of the lines' source turns.

    rows = ladder_rows(conv, "mags_episodic", llm, cfg, embedder, roles)
    summary = ladder_summary(rows)           # means, and each step's paired difference
    print(ladder_markdown(summary, cfg.k))
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

RUNGS: tuple[str, ...] = ("turns_question", "turns_queries", "facts_question", "facts_queries",
                          "loop")
"""The ladder's rungs, in the order its steps compare them."""
STEPS: tuple[tuple[str, str, str], ...] = (
    ("turns_question", "turns_queries", "the ask model's queries (turns only)"),
    ("turns_question", "facts_question", "the write model's facts (the question alone)"),
    ("facts_question", "facts_queries", "the ask model's queries (with facts)"),
    ("facts_queries", "loop", "the loop's read-path options"),
    ("turns_question", "loop", "all of it"),
)
"""(from, to, what the step adds): the paired differences `ladder_summary` reports."""


class FrozenRecall:
    """A memory whose `recall` never learns (no Hebbian edges, no use counts): what
    `agents.loop.merged_hits` is given for a rung that must leave the memory as it was."""

    def __init__(self, memory: Any):
        self.memory = memory

    def recall(self, query: str, k: int = 10, **kwargs: Any) -> list[Any]:
        return self.memory.recall(query, k, **{**kwargs, "learn": False})


def _turns_only(cfg: Any) -> Any:
    return replace(cfg, loop={**(cfg.loop or {}), "writer": "none"})


def ladder_rows(conv: Any, name: str, llm: Any, cfg: Any, embedder: Any,
                roles: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per asked question with evidence (`conversation_qa.question_sample`) of closed-loop
    agent `name` (one that keeps its turns, `LoopConfig.keep_turns`) on `conv`: its category,
    the ask model's queries, each rung's recall@`cfg.k` and, for the four middle rungs, how many
    of their lines are the write model's facts (`<rung>_facts`)."""
    from mags_lib.agents.loop import merged_hits
    from mags_lib.errors import MagsError
    from mags_lib.evaluation.conversation_qa import evidence_row, question_sample, reader
    from mags_lib.tasks.base import Observation

    agents = {"facts": reader(name, conv, llm, cfg, embedder, roles)}
    if not getattr(getattr(agents["facts"], "loop", None), "keep_turns", False):
        raise MagsError(f"the evidence ladder needs an agent that keeps its turns, not {name!r}",
                        "use mags_episodic, or pass loop={'keep_turns': True}")
    agents["turns"] = reader(name, conv, llm, _turns_only(cfg), embedder, roles)
    ids, k = conv.stream_ids(), cfg.k
    key = f"recall@{k}"
    rows = []
    for i in question_sample(conv, cfg):
        qa = conv.qa[i]
        if not qa.evidence:
            continue
        obs = Observation(qa.asked(), turn=len(ids), kind="question")
        asked = agents["facts"].queries(obs)
        row: dict[str, Any] = {"conversation": conv.sample_id, "question": i,
                               "category": qa.category, "queries": asked}
        for memory, agent in agents.items():
            loop = agent.loop
            for what, texts, per_query in (
                    ("question", [obs.text], max(k, loop.query_k)),  # its own k best
                    ("queries", agent.recall_texts(obs, asked), loop.query_k)):
                hits = merged_hits(FrozenRecall(agent.memory), texts, per_query, k,
                                   merge=loop.merge)
                shown = [{"text": h.text, "sources": h.sources} for h in reversed(hits)]
                row[f"{memory}_{what}"] = evidence_row(qa, shown, ids, k).get(key)
                row[f"{memory}_{what}_facts"] = sum(h.block == "semantic" for h in hits)
        row["loop"] = evidence_row(qa, agents["facts"].lines_for(obs, asked), ids, k).get(key)
        rows.append(row)
    return rows


def paired_interval(diffs: list[float], n: int = 2000, seed: int = 0
                    ) -> tuple[float | None, float | None]:
    """95% percentile bootstrap interval of the mean of paired differences, resampling
    questions (None for fewer than two)."""
    if len(diffs) < 2:
        return None, None
    values = np.asarray(diffs, dtype=float)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n, len(values)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def ladder_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each rung's mean over the questions scored on every rung (overall and per
    conversation), and each step of `STEPS` as a paired difference with its 95% interval
    (bootstrap over questions: one conversation's questions are not independent, so read it
    as the spread of this draw of questions, not of conversations), with the questions it
    moved up and down."""
    full = [r for r in rows if all(r.get(rung) is not None for rung in RUNGS)]
    out: dict[str, Any] = {"questions": len(full),
                           "rungs": {rung: _mean([r[rung] for r in full]) for rung in RUNGS},
                           "facts_shown": {rung: _mean([r[f"{rung}_facts"] for r in full])
                                           for rung in RUNGS[:4]
                                           if all(f"{rung}_facts" in r for r in full)},
                           "by_conversation": {}, "steps": []}
    for conv in dict.fromkeys(r["conversation"] for r in full):
        mine = [r for r in full if r["conversation"] == conv]
        out["by_conversation"][conv] = {"questions": len(mine),
                                        **{rung: _mean([r[rung] for r in mine]) for rung in RUNGS}}
    for a, b, what in STEPS:
        diffs = [r[b] - r[a] for r in full]
        lo, hi = paired_interval(diffs)
        out["steps"].append({"from": a, "to": b, "adds": what, "difference": _mean(diffs),
                             "ci95": [lo, hi], "up": sum(d > 0 for d in diffs),
                             "down": sum(d < 0 for d in diffs)})
    return out


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def ladder_markdown(summary: dict[str, Any], k: int) -> str:
    """The summary as two markdown tables: the rungs (per conversation), then the steps."""
    convs = list(summary["by_conversation"])
    head = "| rung | facts among the lines | all |" + "".join(f" {c} |" for c in convs)
    lines = [head, "|---|---|---|" + "---|" * len(convs)]
    for rung in RUNGS:
        facts = summary.get("facts_shown", {}).get(rung)
        shown = "–" if facts is None else f"{facts:.1f}"
        cells = "".join(f" {_f(summary['by_conversation'][c][rung])} |" for c in convs)
        lines.append(f"| {rung} | {shown} | {_f(summary['rungs'][rung])} |{cells}")
    lines += ["", f"Steps (evidence recall@{k}, paired over {summary['questions']} questions):",
              "", "| step | adds | difference (95% CI) | questions up / down |",
              "|---|---|---|---|"]
    for s in summary["steps"]:
        lo, hi = s["ci95"]
        ci = f" ({_f(lo, signed=True)}, {_f(hi, signed=True)})" if lo is not None else ""
        lines.append(f"| {s['from']} -> {s['to']} | {s['adds']} | "
                     f"{_f(s['difference'], signed=True)}{ci} | {s['up']} / {s['down']} |")
    return "\n".join(lines)


def _f(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "–"
    return f"{x:+.3f}" if signed else f"{x:.3f}"
