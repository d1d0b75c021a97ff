"""Where a conversation agent's QA F1 goes: questions whose evidence its lines show, and those
whose evidence they do not.

An agent that trails another on LoCoMo's F1 can do so for two reasons, and the average alone does
not say which: its lines hold the evidence turns less often (what it wrote, or what recall
found), or the reader does worse with the lines it is shown (a written fact that dropped the
words the answer needs, next to the turn that kept them). `evidence_split` splits a run's
answerable questions by whether any evidence turn is among the lines shown (`recall@10` > 0, as
`conversation_qa.evidence_row` scores it) and gives the F1 and the abstention rate on each part;
`written_share` reads the loop's counts: the share of turns from which the write model wrote
anything (an `add` or an `update`).

    split = evidence_split(rows, "mags")       # rows: a conversation study's per-question rows
    split["shown"], split["f1_shown"]          # questions with evidence shown, F1 there
    gap_clause(rows, reads, "mags", "static_rag")

Nothing here re-runs a model: it reads the rows a study wrote (`metrics.json`), so it can be
applied to a frozen run's test split without choosing anything on it.

    >>> rows = [{"agent": "a", "f1": 1.0, "abstained": False, "recall@10": 1.0},
    ...         {"agent": "a", "f1": 0.0, "abstained": True, "recall@10": 0.0},
    ...         {"agent": "a", "category": 5, "abstained": True, "recall@10": 0.0}]
    >>> s = evidence_split(rows, "a")
    >>> s["answerable"], s["shown"], s["f1_shown"], s["f1_unshown"], s["abstained_unshown"]
    (2, 1, 1.0, 0.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

KEY = "recall@10"
"""The evidence recall that says whether a question's evidence was shown."""


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def evidence_split(rows: Iterable[dict[str, Any]], agent: str) -> dict[str, Any]:
    """For `agent`'s answerable questions with an evidence score (rows with "f1" and
    `KEY`): how many, how many with evidence shown, and the F1 and abstention rate where it was
    shown and where it was not (None where a part is empty)."""
    mine = [r for r in rows if r.get("agent") == agent and "f1" in r and KEY in r]
    shown = [r for r in mine if r[KEY] > 0]
    unshown = [r for r in mine if r[KEY] <= 0]
    out: dict[str, Any] = {"answerable": len(mine), "shown": len(shown)}
    for name, part in (("shown", shown), ("unshown", unshown)):
        out[f"f1_{name}"] = _mean([float(r["f1"]) for r in part])
        out[f"abstained_{name}"] = _mean([float(bool(r.get("abstained"))) for r in part])
    out["f1"] = _mean([float(r["f1"]) for r in mine])
    return out


def written_share(reads: Iterable[dict[str, Any]], agent: str) -> float | None:
    """The share of `agent`'s write calls (one per turn) that wrote an `add` or an `update`,
    pooled over its conversations (None where it has no write calls: no write model)."""
    calls = wrote = 0
    for r in reads:
        if r.get("agent") != agent:
            continue
        counts = r.get("counts") or {}
        calls += int(counts.get("write_calls") or 0)
        wrote += int(counts.get("op_add") or 0) + int(counts.get("op_update") or 0)
    return wrote / calls if calls else None


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def gap_clause(rows: list[dict[str, Any]], reads: list[dict[str, Any]], agent: str,
               other: str) -> str | None:
    """One sentence on where `agent`'s F1 against `other`'s goes: evidence shown on how many
    questions each, F1 and abstention where it was shown, and where `agent` has a write model,
    the share of turns it wrote from. None where either agent has no scored rows.

    >>> rows = [{"agent": "a", "f1": 0.2, "abstained": False, "recall@10": 1.0},
    ...         {"agent": "a", "f1": 0.0, "abstained": True, "recall@10": 0.0},
    ...         {"agent": "b", "f1": 0.5, "abstained": False, "recall@10": 1.0},
    ...         {"agent": "b", "f1": 0.5, "abstained": False, "recall@10": 0.5}]
    >>> gap_clause(rows, [{"agent": "a", "counts": {"write_calls": 4, "op_add": 1}}], "a", "b")
    '`a` against `b` on the 2 answerable questions with gold evidence: F1 0.100 against 0.500; its lines show evidence for 1 (`b` 2), where it scores F1 0.200 (`b` 0.500) and abstains on 0.000 (`b` 0.000); where none is shown F1 0.000; its write model wrote from 0.250 of the turns'
    """
    a, b = evidence_split(rows, agent), evidence_split(rows, other)
    if not a["answerable"] or not b["answerable"]:
        return None
    text = (f"`{agent}` against `{other}` on the {a['answerable']} answerable questions with "
            f"gold evidence: F1 {_f(a['f1'])} against {_f(b['f1'])}; its lines show evidence "
            f"for {a['shown']} (`{other}` {b['shown']}), where it scores F1 "
            f"{_f(a['f1_shown'])} (`{other}` {_f(b['f1_shown'])}) and abstains on "
            f"{_f(a['abstained_shown'])} (`{other}` {_f(b['abstained_shown'])}); where none is "
            f"shown F1 {_f(a['f1_unshown'])}")
    share = written_share(reads, agent)
    if share is not None:
        text += f"; its write model wrote from {_f(share)} of the turns"
    return text


def split_markdown(rows: list[dict[str, Any]], reads: list[dict[str, Any]]) -> str:
    """A table of `evidence_split` (and `written_share`) for every agent of `rows` with scored
    answerable questions, in the rows' order ('' where there is none)."""
    lines = []
    for agent in dict.fromkeys(r.get("agent") for r in rows):
        s = evidence_split(rows, agent)
        if not s["answerable"]:
            continue
        lines.append(f"| `{agent}` | {s['answerable']} | {s['shown']} | {_f(s['f1_shown'])} | "
                     f"{_f(s['abstained_shown'])} | {_f(s['f1_unshown'])} | "
                     f"{_f(s['abstained_unshown'])} | {_f(written_share(reads, agent))} |")
    if not lines:
        return ""
    return "\n".join(["| agent | answerable | evidence shown | F1 (shown) | abstained (shown) | "
                      "F1 (not shown) | abstained (not shown) | turns written from |",
                      "|---|---|---|---|---|---|---|---|", *lines])
