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

Parsing takes time linear in the length of the text, whatever its shape (thousands of
mismatched tags included); `python -m mags_lib.bench parser` measures it.

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

# a run of one tag repeated; written to start with a literal "<" so that the regex engine skips
# ahead to the next "<" (a plain alternation of four groups scans 20x slower)
_TAG_RUN = re.compile(r"(<(?:recall>(?:<recall>)*|/recall>(?:</recall>)*"
                      r"|engram>(?:<engram>)*|/engram>(?:</engram>)*))")
_BREAK = re.compile(r"\r\n|\r|\n")
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


@dataclass(slots=True)
class _Open:
    """`count` blocks named `name`, opened one after the other on line `line`."""

    name: str  # "recall" or "engram"
    line: int  # where they were opened
    wanted: bool  # False when the caller asked for the other kind
    count: int = 1


@dataclass
class _State:
    """The parse so far, fed alternately text (`read`) and runs of one tag (`open`, `close`).

    Linear time on any input: a run of n identical tags is one step (the stack holds runs), a
    close pops only what it closes, `depth` says whether a <name> is open without scanning the
    stack, and text outside a wanted block is only counted for line numbers."""

    kind: Kind
    actions: list[Action] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dropped: int = 0
    blocks: int = 0
    line_no: int = 1
    stack: list[_Open] = field(default_factory=list)
    depth: dict[str, int] = field(default_factory=lambda: {"recall": 0, "engram": 0})

    def error(self, template: str, *args: object, times: int = 1) -> None:
        """Keep the first MAX_ERRORS messages; count the rest (formatted only when kept)."""
        keep = min(times, MAX_ERRORS - len(self.errors))
        if keep > 0:
            self.errors.extend([template.format(*args)] * keep)
            times -= keep
        self.dropped += times

    def read(self, chunk: str, final: bool = False) -> None:
        """Text between two tags (or after the last one, `final`): lines of the open block."""
        if not self.stack or not self.stack[-1].wanted or chunk.isspace():
            self.line_no += chunk.count("\n") + chunk.count("\r") - chunk.count("\r\n")
            return
        *lines, last = _BREAK.split(chunk)
        for line in lines:
            self.line(line)
            self.line_no += 1
        if not final:
            self.line(last)  # a line also ends at a tag
        elif last.strip():
            self.error("line {}: unterminated last line dropped (block not closed)", self.line_no)

    def line(self, raw: str) -> None:
        line = raw.strip()
        if line:
            try:
                self.actions.append(parse_line(line, self.stack[-1].name))
            except ValueError as e:
                self.error("line {}: {}", self.line_no, e)

    def open(self, name: str, count: int) -> None:
        line = self.line_no
        if self.stack:
            self.error("line {}: <{}> nested inside <{}>", line, name, self.stack[-1].name)
        wanted = self.kind in ("any", name)
        if not wanted and not self.stack:
            self.error("line {}: <{}> block not expected (kind={!r})", line, name, self.kind)
        if count > 1:
            self.error("line {}: <{}> nested inside <{}>", line, name, name, times=count - 1)
        self.blocks += count if wanted else 0
        self.stack.append(_Open(name, line, wanted, count))
        self.depth[name] += count

    def close(self, name: str, count: int) -> None:
        while count:
            if not self.depth[name]:
                self.error("line {}: stray </{}> (no open <{}> block)", self.line_no, name, name,
                           times=count)
                return
            while self.stack[-1].name != name:
                self.unclosed(self.stack.pop())
            top = self.stack[-1]
            n = min(count, top.count)
            top.count -= n
            self.depth[name] -= n
            count -= n
            if not top.count:
                self.stack.pop()

    def unclosed(self, b: _Open) -> None:
        self.depth[b.name] -= b.count
        if b.wanted:
            self.error("unclosed <{}> block (opened on line {})", b.name, b.line, times=b.count)

    def result(self) -> ParseResult:
        while self.stack:  # blocks still open at the end
            self.unclosed(self.stack.pop())
        errors = list(self.errors)
        if self.blocks == 0 and not errors:
            wanted = "<recall> or <engram>" if self.kind == "any" else f"<{self.kind}>"
            errors.append(f"no {wanted} block found")
        if self.dropped:
            errors.append(f"too many errors ({self.dropped} more not shown)")
        return ParseResult(actions=self.actions, errors=errors, blocks=self.blocks)


def _parse(text: str, kind: Kind) -> ParseResult:
    state = _State(kind=kind)
    parts = _TAG_RUN.split(text)  # [text, run of one tag, text, run, ..., text]
    for chunk, run in zip(parts[::2], parts[1::2], strict=False):  # the last text: below
        if chunk:
            state.read(chunk)
        if run[1] == "/":
            state.close(run[2:8], len(run) // 9)  # "</recall>" and "</engram>": 9 characters
        else:
            state.open(run[1:7], len(run) // 8)
    state.read(parts[-1], final=True)
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


def query_texts(text: str, distinct: bool = True) -> tuple[list[str], bool]:
    """(query texts, whether the block parsed) of an ask model's `<recall>` output: what it
    asks memory for, in order; a `connect: A -> B` counts as the query "A B". With
    `distinct` a repeated text is kept once; `distinct=False` keeps every line (a reward that
    counts a repeated query as a miss needs them).

    >>> query_texts("<recall>\\nquery: glarb diet\\nconnect: glarb -> rain\\n"
    ...             "query: glarb diet\\n</recall>")
    (['glarb diet', 'glarb rain'], True)
    >>> query_texts("<recall>\\nquery: a\\nquery: a\\n", distinct=False)
    (['a', 'a'], False)
    """
    parsed = parse_actions(text, kind="recall")
    texts = [a.text if isinstance(a, RecallQuery) else f"{a.a} {a.b}"
             for a in parsed.actions if isinstance(a, RecallQuery | Connect)]
    return (list(dict.fromkeys(texts)) if distinct else texts), parsed.complete


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
