"""How well a model keeps to the action protocol: pure functions over raw model outputs.

>>> adherence(["<recall>\\nquery: x\\n</recall>", "query: x"], "recall")
0.5
"""

from __future__ import annotations

import re
from collections import Counter

from mags_lib.actions.parser import Kind, parse_actions

_LINE_PREFIX = re.compile(r"^line \d+: ")
_DETAIL = re.compile(r": | '| \(")


def adherence(outputs: list[str], kind: Kind = "any") -> float:
    """Share of `outputs` that parse completely as `kind`; 0.0 for an empty list (no evidence)."""
    if not outputs:
        return 0.0
    return sum(parse_actions(o, kind).complete for o in outputs) / len(outputs)


def error_kind(error: str) -> str:
    """An error message without its line number and details, for counting.

    >>> error_kind("line 3: unknown verb 'ad'")
    'unknown verb'
    """
    message = _LINE_PREFIX.sub("", error)
    return _DETAIL.split(message, maxsplit=1)[0].strip()


def adherence_report(outputs: list[str], kind: Kind = "any", top: int = 5) -> dict:
    """`n`, `n_complete`, `share` (as `adherence`) and `top_errors`: {error kind: outputs}.

    An error kind is counted once per output that shows it, so one long garbage output does
    not outweigh many short ones; `top_errors` holds the `top` most common, most common first.
    """
    results = [parse_actions(o, kind) for o in outputs]
    n_complete = sum(r.complete for r in results)
    counts = Counter(k for r in results for k in {error_kind(e) for e in r.errors})
    return {
        "n": len(outputs),
        "n_complete": n_complete,
        "share": n_complete / len(outputs) if outputs else 0.0,
        "top_errors": dict(counts.most_common(top)),
    }
