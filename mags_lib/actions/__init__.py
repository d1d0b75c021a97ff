"""The recall / engram action protocol: types, parser, writer, grammars, adherence metrics.

    from mags_lib.actions import parse_actions, format_actions, grammar_for
    result = parse_actions(model_output, "engram")   # never raises
    result.actions, result.errors, result.complete

Nothing heavy is imported here: the grammars are plain text for whichever backend uses them.
"""

from mags_lib.actions.grammar import (
    MAX_CHARS,
    engram_grammar,
    grammar_for,
    recall_grammar,
)
from mags_lib.actions.metrics import adherence, adherence_report, error_kind
from mags_lib.actions.parser import ParseResult, format_actions, parse_actions, query_texts
from mags_lib.actions.types import (
    BLOCKS,
    Action,
    Block,
    Connect,
    EngramAction,
    EngramAdd,
    EngramUpdate,
    Forget,
    Link,
    RecallAction,
    RecallQuery,
)

__all__ = [
    "BLOCKS",
    "MAX_CHARS",
    "Action",
    "Block",
    "Connect",
    "EngramAction",
    "EngramAdd",
    "EngramUpdate",
    "Forget",
    "Link",
    "ParseResult",
    "RecallAction",
    "RecallQuery",
    "adherence",
    "adherence_report",
    "engram_grammar",
    "error_kind",
    "format_actions",
    "grammar_for",
    "parse_actions",
    "query_texts",
    "recall_grammar",
]
