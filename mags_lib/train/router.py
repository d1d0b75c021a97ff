"""The router of the two-model system: which model(s) handle an observation, in order.

    >>> route({"kind": "decision", "text": "Choose: A) feed the glarb B) wait"})
    ('ask', 'answer')
    >>> route({"kind": "information", "text": "It rains. The glarb eats stones."})
    ('write',)

Rule-based by default: a *decision* needs memory first (ask: emit `<recall>`), then a choice
(answer); *information* is something to store (write: emit `<engram>`). Unknown kinds are
treated as information, because storing too much is cheaper to undo (decay, forgetting) than
missing a fact. The hook for a learned router: `Router(llm)` asks a model to emit
`<route>ask|write|answer</route>` and falls back to the rules when its output does not parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

Route = Literal["ask", "write", "answer"]

RULES: dict[str, tuple[str, ...]] = {
    "decision": ("ask", "answer"),
    "question": ("ask", "answer"),
    "information": ("write",),
}
DEFAULT_ROUTE: tuple[str, ...] = ("write",)
EXPAND: dict[str, tuple[str, ...]] = {"ask": ("ask", "answer"), "write": ("write",),
                                      "answer": ("answer",)}
"""What a learned router's single label means as a sequence of models."""

_ROUTE = re.compile(r"<route>\s*(ask|write|answer)\s*</route>", re.IGNORECASE)
ROUTER_PROMPT = ("Decide how to handle the observation. Reply with <route>ask</route> if a "
                 "decision needs facts from memory, <route>write</route> if it is information "
                 "to remember, <route>answer</route> if it can be answered directly.")


def _field(observation: Any, name: str) -> str:
    if isinstance(observation, dict):
        return str(observation.get(name, ""))
    return str(getattr(observation, name, ""))


def route(observation: Any, rules: dict[str, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The models to run, in order, for an observation (a dict or object with `kind`, or the
    kind string itself)."""
    kind = observation if isinstance(observation, str) else _field(observation, "kind")
    return (rules or RULES).get(kind.strip().lower(), DEFAULT_ROUTE)


def parse_route(text: str) -> str | None:
    """The label in `<route>...</route>`, or None.

    >>> parse_route("<route> write </route>"), parse_route("write it down")
    ('write', None)
    """
    m = _ROUTE.search(text or "")
    return m[1].lower() if m else None


@dataclass
class Router:
    """A learned router when `llm` is given (a ChatLLM), the rules otherwise or as fallback."""

    llm: Any = None
    rules: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(RULES))
    max_tokens: int = 12

    def __call__(self, observation: Any) -> tuple[str, ...]:
        if self.llm is not None:
            messages = [{"role": "system", "content": ROUTER_PROMPT},
                        {"role": "user", "content": _field(observation, "text") or str(observation)}]
            label = parse_route(self.llm.chat(messages, max_tokens=self.max_tokens).text)
            if label:
                return EXPAND[label]
        return route(observation, self.rules)
