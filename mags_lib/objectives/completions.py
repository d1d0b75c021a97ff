"""What a model's output says: the text of a completion, the option its `<answer>` picks, the
engram ops it writes and the op a write chose, read one way for the rewards (`rewards`), the
write metrics (`write_metrics`) and the judges that score generations.

A completion is a string or, for conversational datasets, a message list
(`[{"role": "assistant", "content": ...}]`); nothing here raises on malformed output.

    >>> text = completion_text([{"role": "assistant", "content": "<answer>B</answer>"}])
    >>> parse_answer(text), chosen_op("<engram>\\nadd semantic 0.9: Glarbs eat stones.\\n</engram>")
    (('B', True), 'add')
"""

from __future__ import annotations

import re
from typing import Any

from mags_lib.actions.parser import parse_actions
from mags_lib.actions.types import EngramAdd, EngramUpdate, Forget, Link
from mags_lib.embed import tokenize


def completion_text(completion: Any) -> str:
    """The text of one completion: a string, or the contents of a message list joined.

    >>> completion_text([{"role": "assistant", "content": "hi"}])
    'hi'
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    if isinstance(completion, (list, tuple)):
        return "".join(completion_text(m) for m in completion)
    return ""


def norm_text(text: str) -> str:
    """A text as its tokens joined by spaces (case and punctuation ignored), for comparing
    sentences and option texts.

    >>> norm_text("On rainy turns, the Glarb eats stones!")
    'on rainy turns the glarb eats stones'
    """
    return " ".join(tokenize(text))


_ANSWER = re.compile(r"<answer>(.*?)(</answer>|$)", re.DOTALL | re.IGNORECASE)


def parse_answer(text: str) -> tuple[str | None, bool]:
    """The chosen option in `<answer>...</answer>` and whether the tag was closed.

    >>> parse_answer("<answer> B </answer>")
    ('B', True)
    >>> parse_answer("I think B")
    (None, False)
    """
    m = _ANSWER.search(text)
    if not m or not m[1].strip():
        return None, False
    return m[1].strip(), bool(m[2])


_OPS = {EngramAdd: "add", EngramUpdate: "update", Forget: "forget", Link: "link"}


def engram_ops(actions: list) -> list[tuple[str, str]]:
    """(op, text) pairs of engram actions; a link's text is 'A -> B'."""
    out = []
    for a in actions:
        op = _OPS.get(type(a))
        if op == "link":
            out.append((op, f"{a.a} -> {a.b}"))
        elif op:
            out.append((op, a.text))
    return out


def gold_ops(ops: Any) -> list[tuple[str, str]]:
    """Gold ops as (op, text) pairs, from canonical engram text or a list of op dicts."""
    if isinstance(ops, str):
        return engram_ops(parse_actions(ops, kind="engram").actions)
    return [(str(o.get("op", "")).lower(), str(o.get("text", ""))) for o in ops or []
            if isinstance(o, dict)]


WRITE_OPS = ("add", "update", "none")  # the discrete choice of a write: store new, replace, skip


def chosen_op(text: Any) -> str:
    """The op a write output chose: its first add / update, "none" for an empty block, "bad"
    when no complete block parses, "other" for forget / link only.

    >>> chosen_op("<engram>\\nupdate semantic 0.9: X.\\n</engram>"), chosen_op("<engram>\\n</engram>")
    ('update', 'none')
    """
    parsed = parse_actions(completion_text(text), kind="engram")
    if not parsed.complete:
        return "bad"
    ops = [op for op, _ in engram_ops(parsed.actions)]
    if not ops:
        return "none"
    return next((op for op in ops if op in ("add", "update")), "other")
