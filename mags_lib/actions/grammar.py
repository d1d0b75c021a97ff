"""GBNF grammars (llama.cpp format) that force a model to write a well-formed action block.

    from llama_cpp import LlamaGrammar
    from mags_lib.actions import grammar_for, MAX_CHARS
    out = llm.create_chat_completion(messages, grammar=LlamaGrammar.from_string(grammar_for("recall")),
                                     max_tokens=MAX_CHARS["recall"])

Every string a grammar admits parses with `parse_actions(text, kind).complete == True`. The
grammars admit printable ASCII only, so a token covers at least one character and
`max_tokens=MAX_CHARS[kind]` guarantees that generation closes its block. The limits
(recall 1-3 lines, engram 0-3, texts of 1-64 characters, sides of 1-32) are documented at the top
of `grammars/recall.gbnf` and `grammars/engram.gbnf`.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Literal

GrammarKind = Literal["recall", "engram"]

# The longest string each grammar admits, in characters (all ASCII, so also in tokens).
MAX_CHARS: dict[str, int] = {"recall": 253, "engram": 280}


@cache
def _read(name: str) -> str:
    return files("mags_lib.actions").joinpath("grammars", f"{name}.gbnf").read_text("utf-8")


def recall_grammar() -> str:
    """The GBNF grammar of one `<recall>` block (queries and connects)."""
    return _read("recall")


def engram_grammar() -> str:
    """The GBNF grammar of one `<engram>` block (add, update, link, forget)."""
    return _read("engram")


def grammar_for(kind: GrammarKind) -> str:
    """The grammar of `kind` ("recall" or "engram"); raises ValueError for anything else."""
    if kind not in MAX_CHARS:
        raise ValueError(f"no grammar for kind {kind!r} (expected 'recall' or 'engram')")
    return _read(kind)
