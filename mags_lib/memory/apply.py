"""`apply_actions`: execute the ask model's and the write model's actions on a memory.

RecallQuery -> `recall` (hits in the report), Connect -> `connect`, EngramAdd -> a write that
merges or supersedes as `observe` does, EngramUpdate -> a write that also supersedes the closest
same-block node when no contradiction is detected (the model said "this is the new version"),
Link -> a `link` edge between the best matches of two strings, Forget -> the best match is
marked invalid (kept for history, never returned as current). An action that cannot be
executed (no node matches a string) is listed in `report.skipped`, never raised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mags_lib.actions.types import Connect, EngramAdd, EngramUpdate, Forget, Link, RecallQuery
from mags_lib.errors import MagsError
from mags_lib.memory.engram import write_items
from mags_lib.memory.recall import best_match, connect, recall
from mags_lib.memory.types import ApplyReport, WriteOutcome

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory

RECALL_K = 5


def apply_actions(mem: LiquidMemory, actions: list[Any], *, recall_k: int = RECALL_K,
                  source: str | int | None = None) -> ApplyReport:
    """Run `actions` in order; see the module docstring. `source` tags written nodes."""
    report = ApplyReport()
    for action in actions:
        if isinstance(action, RecallQuery):
            report.recalls.append((action.text, recall(mem, action.text, recall_k)))
        elif isinstance(action, Connect):
            report.connections.append(((action.a, action.b), connect(mem, action.a, action.b)))
        elif isinstance(action, EngramAdd | EngramUpdate):
            mode = "update" if isinstance(action, EngramUpdate) else "add"
            item = {"text": action.text, "block": action.block,
                    "confidence": action.confidence, "source": source}
            try:
                outcome = write_items(mem, [item], mode=mode)[0]
            except MagsError as exc:
                report.skipped.append(f"{action!r}: {exc.cause}")
                continue
            _record_write(report, outcome)
        elif isinstance(action, Link):
            _link(mem, action, report)
        elif isinstance(action, Forget):
            _forget(mem, action, report)
        else:
            report.skipped.append(f"{action!r}: not a memory action")
    return report


def _record_write(report: ApplyReport, outcome: WriteOutcome) -> None:
    if outcome.kind == "merged":
        report.merged.append(outcome.node_id)
    elif outcome.kind == "superseded":
        report.superseded.extend((outcome.node_id, old) for old in outcome.others)
    else:
        report.added.append(outcome.node_id)


def _link(mem: LiquidMemory, action: Link, report: ApplyReport) -> None:
    a, b = best_match(mem, action.a), best_match(mem, action.b)
    if a is None or b is None or a[0] == b[0]:
        report.skipped.append(f"{action!r}: no two distinct nodes match")
        return
    mem._connect(a[0], b[0], mem.config.engram.link_weight, "link")
    report.linked.append((a[0], b[0]))


def _forget(mem: LiquidMemory, action: Forget, report: ApplyReport) -> None:
    match = best_match(mem, action.text)
    if match is None:
        report.skipped.append(f"{action!r}: no node matches")
        return
    mem._invalidate(match[0], by=None)
    mem._tally.engrams += 1
    report.forgotten.append(match[0])
