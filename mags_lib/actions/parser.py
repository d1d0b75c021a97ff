"""Read and write the recall / engram action text that the ask and write models emit.

    >>> r = parse_actions("<think>hm</think><recall>\\nquery: glarb rules\\n</recall>")
    >>> r.actions, r.complete
    ([RecallQuery(text='glarb rules')], True)
    >>> print(format_actions([RecallQuery("glarb rules"), Forget("glarb sleeps")]))
    <recall>
    query: glarb rules
    </recall>
    <engram>
    forget: glarb sleeps
    </engram>

`parse_actions` is for model output: it never raises. It returns every action it could read
and a human-readable error for everything it could not. The rules:

- Only lines inside `<recall>...</recall>` and `<engram>...</engram>` are read; any other text
  (a `<think>` section, chatter) is ignored. Tags may sit on their own line or inline.
- One action a line. Blank lines and surrounding whitespace are ignored; `\\r\\n` and `\\r`
  count as line breaks. Verbs and block names are case-insensitive.
- A `<recall>` block takes `query: TEXT` and `connect: A -> B`. An `<engram>` block takes
  `add BLOCK CONF: TEXT`, `update BLOCK CONF: TEXT` (BLOCK is `episodic` or `semantic`,
  CONF a decimal number in [0, 1], which may be left out for the default 0.9),
  `link: A -> B` and `forget: TEXT`. `A -> B` splits on the first `->`.
- A text must be non-empty and must not contain `<` or `>`; a line that breaks a rule is
  skipped with an error (an out-of-range confidence is an error, never clamped).
- A block that is never closed (truncated generation) yields the actions of its finished
  lines; its last, unterminated line is dropped as possibly cut off, and an error is added.
- A block opened inside another is an error; its lines are still read, as part of the inner
  block, until its closing tag. A stray closing tag is an error.
- With `kind="recall"` (or `"engram"`) a block of the other kind is an error and its lines
  are skipped.

`ParseResult.complete` is True when at least one block of the wanted kind was found and
there is no error at all; an empty block is complete (a valid "nothing to do" answer).

`format_actions` writes the canonical text. It is for program-built actions, so it raises
`ValueError` on what it cannot represent. Representable: every text (and each side of a
connect / link) is a `str` that is non-empty, equal to its `.strip()`, and contains none of
`\\n`, `\\r`, `<`, `>`; a block is `episodic` or `semantic`; a confidence is a finite number
in [0, 1], written with two decimals (so it round-trips exactly when it has at most two).
For such actions `parse_actions(format_actions(a)).actions == a` whenever every recall action
comes before every engram action (otherwise the result is that stable reordering).
Everything `parse_actions` returns is representable.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal

from mags_lib.actions.types import (
    BLOCKS,
    Action,
    Connect,
    EngramAdd,
    EngramUpdate,
    Forget,
    Link,
    RecallQuery,
)

Kind = Literal["recall", "engram", "any"]

MAX_ERRORS = 50  # keep the error list bounded on garbage input
_SNIPPET = 40  # characters of offending input quoted in an error

_TOKEN = re.compile(r"<(/?)(recall|engram)>|\r\n|\r|\n")
_VERB = re.compile(r"([^\s:]+)\s*(.*)", re.DOTALL)
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")

RECALL_VERBS = ("query", "connect")
ENGRAM_VERBS = ("add", "update", "link", "forget")


@dataclass(frozen=True)
class ParseResult:
    """The actions read from one model output, and what went wrong while reading it."""

    actions: list[Action] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    blocks: int = 0  # blocks of the wanted kind that were opened

    @property
    def complete(self) -> bool:
        """At least one block, all of it read, every block closed, no error."""
        return self.blocks > 0 and not self.errors


class _LineError(ValueError):
    """A line that breaks the protocol; the message is shown to people."""


def _snip(s: str) -> str:
    return repr(s if len(s) <= _SNIPPET else s[:_SNIPPET] + "...")


def _text(s: str, what: str) -> str:
    s = s.strip()
    if not s:
        raise _LineError(f"empty {what}")
    if "<" in s or ">" in s:
        raise _LineError(f"'<' or '>' in {what}: {_snip(s)}")
    return s


def _colon_text(rest: str, verb: str) -> str:
    if not rest.startswith(":"):
        raise _LineError(f"bad {verb} line (expected '{verb}: TEXT')")
    return _text(rest[1:], f"{verb} text")


def _pair(rest: str, verb: str) -> tuple[str, str]:
    if not rest.startswith(":") or "->" not in rest:
        raise _LineError(f"bad {verb} line (expected '{verb}: A -> B')")
    a, b = rest[1:].split("->", 1)
    return _text(a, f"{verb} side A"), _text(b, f"{verb} side B")


def _confidence(raw: str | None) -> float:
    if raw is None:
        return 0.9
    if not _NUMBER.fullmatch(raw):
        raise _LineError(f"bad confidence: {_snip(raw)}")
    value = float(raw)
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise _LineError(f"confidence out of range [0, 1]: {_snip(raw)}")
    return value


def _write(line: str, verb: str) -> EngramAdd | EngramUpdate:
    head, colon, rest = line.partition(":")
    words = head.split()  # verb, block, optional confidence
    if not colon or len(words) not in (2, 3):
        raise _LineError(f"bad {verb} line (expected '{verb} BLOCK CONF: TEXT')")
    block = words[1].lower()
    if block not in BLOCKS:
        raise _LineError(f"unknown block {_snip(block)} (expected episodic or semantic)")
    confidence = _confidence(words[2] if len(words) == 3 else None)
    cls = EngramAdd if verb == "add" else EngramUpdate
    return cls(block=block, text=_text(rest, f"{verb} text"), confidence=confidence)


def parse_line(line: str, block: str) -> Action:
    """One stripped, non-empty line of a `block` ("recall" / "engram") -> an action.

    Raises `ValueError` (with a message meant for people) when the line breaks the protocol.
    """
    m = _VERB.fullmatch(line)
    verb, rest = (m[1].lower(), m[2]) if m else ("", line)
    allowed = RECALL_VERBS if block == "recall" else ENGRAM_VERBS
    if verb not in RECALL_VERBS + ENGRAM_VERBS:
        raise _LineError(f"unknown verb {_snip(verb or line)}")
    if verb not in allowed:
        raise _LineError(f"verb not allowed in <{block}>: {verb!r}")
    if verb == "query":
        return RecallQuery(_colon_text(rest, verb))
    if verb == "forget":
        return Forget(_colon_text(rest, verb))
    if verb == "connect":
        return Connect(*_pair(rest, verb))
    if verb == "link":
        return Link(*_pair(rest, verb))
    return _write(line, verb)


@dataclass
class _Open:
    name: str  # "recall" or "engram"
    line: int  # where it was opened
    wanted: bool  # False when the caller asked for the other kind


@dataclass
class _State:
    kind: Kind
    actions: list[Action] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dropped: int = 0
    blocks: int = 0
    stack: list[_Open] = field(default_factory=list)

    def error(self, msg: str) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(msg)
        else:
            self.dropped += 1

    def line(self, raw: str, line_no: int) -> None:
        line = raw.strip()
        if not line or not self.stack or not self.stack[-1].wanted:
            return
        try:
            self.actions.append(parse_line(line, self.stack[-1].name))
        except ValueError as e:
            self.error(f"line {line_no}: {e}")

    def open(self, name: str, line_no: int) -> None:
        if self.stack:
            self.error(f"line {line_no}: <{name}> nested inside <{self.stack[-1].name}>")
        wanted = self.kind in ("any", name)
        if wanted:
            self.blocks += 1
        elif not self.stack:
            self.error(f"line {line_no}: <{name}> block not expected (kind={self.kind!r})")
        self.stack.append(_Open(name, line_no, wanted))

    def close(self, name: str, line_no: int) -> None:
        names = [b.name for b in self.stack]
        if name not in names:
            self.error(f"line {line_no}: stray </{name}> (no open <{name}> block)")
            return
        while self.stack[-1].name != name:
            self.unclosed(self.stack.pop())
        self.stack.pop()

    def unclosed(self, b: _Open) -> None:
        if b.wanted:
            self.error(f"unclosed <{b.name}> block (opened on line {b.line})")

    def result(self) -> ParseResult:
        errors = list(self.errors)
        if self.blocks == 0 and not errors:
            wanted = "<recall> or <engram>" if self.kind == "any" else f"<{self.kind}>"
            errors.append(f"no {wanted} block found")
        if self.dropped:
            errors.append(f"too many errors ({self.dropped} more not shown)")
        return ParseResult(actions=self.actions, errors=errors, blocks=self.blocks)


def _parse(text: str, kind: Kind) -> ParseResult:
    state = _State(kind=kind)
    pos, line_no = 0, 1
    for m in _TOKEN.finditer(text):
        state.line(text[pos : m.start()], line_no)  # a line ends at a break or a tag
        if m[2] is None:
            line_no += 1
        elif m[1]:
            state.close(m[2], line_no)
        else:
            state.open(m[2], line_no)
        pos = m.end()
    if state.stack:
        if text[pos:].strip() and state.stack[-1].wanted:
            state.error(f"line {line_no}: unterminated last line dropped (block not closed)")
        while state.stack:
            state.unclosed(state.stack.pop())
    return state.result()


def parse_actions(text: str, kind: Kind = "any") -> ParseResult:
    """Read the actions in a model output; never raises (see the module docstring)."""
    if not isinstance(text, str):
        return ParseResult(errors=[f"not a string: {type(text).__name__}"])
    if kind not in ("recall", "engram", "any"):
        return ParseResult(errors=[f"unknown kind {kind!r} (expected recall, engram or any)"])
    try:
        return _parse(text, kind)
    except Exception as e:  # a bug here must not crash a game loop; tests look for this
        return ParseResult(errors=[f"internal parser error: {e!r}"])


def _check_text(s: object, what: str) -> str:
    if not isinstance(s, str) or not s or s != s.strip():
        raise ValueError(f"{what} must be a non-empty, stripped str, got {s!r}")
    if any(c in s for c in "\r\n<>"):
        raise ValueError(f"{what} must not contain a line break, '<' or '>', got {s!r}")
    return s


def _check_write(a: EngramAdd | EngramUpdate) -> tuple[str, str, float]:
    if a.block not in BLOCKS:
        raise ValueError(f"block must be one of {BLOCKS}, got {a.block!r}")
    c = a.confidence
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0.0 <= c <= 1.0:
        raise ValueError(f"confidence must be a number in [0, 1], got {c!r}")
    return a.block, _check_text(a.text, "text"), c


def format_line(action: Action) -> str:
    """One action -> its canonical line (no newline). Raises ValueError if unrepresentable."""
    if isinstance(action, RecallQuery):
        return f"query: {_check_text(action.text, 'query text')}"
    if isinstance(action, Forget):
        return f"forget: {_check_text(action.text, 'forget text')}"
    if isinstance(action, (Connect, Link)):
        verb = "connect" if isinstance(action, Connect) else "link"
        return f"{verb}: {_check_text(action.a, 'side A')} -> {_check_text(action.b, 'side B')}"
    if isinstance(action, (EngramAdd, EngramUpdate)):
        block, text, c = _check_write(action)
        verb = "add" if isinstance(action, EngramAdd) else "update"
        return f"{verb} {block} {c:.2f}: {text}"
    raise ValueError(f"not an action: {action!r}")


def format_actions(actions: list[Action]) -> str:
    """Actions -> canonical text: one `<recall>` block, then one `<engram>` block.

    A block is written only when it has actions, so `[]` gives `""`. Raises `ValueError` for
    an action that cannot be represented (see the module docstring).
    """
    recall = [format_line(a) for a in actions if isinstance(a, (RecallQuery, Connect))]
    engram = [format_line(a) for a in actions if not isinstance(a, (RecallQuery, Connect))]
    blocks = [
        "\n".join([f"<{name}>", *lines, f"</{name}>"])
        for name, lines in (("recall", recall), ("engram", engram))
        if lines
    ]
    return "\n".join(blocks)
