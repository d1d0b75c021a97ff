"""The router of the MAGS loop: which model(s) handle an observation, in order.

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
    # the game's observation kinds (Observation.kind), as it names them
    "decide": ("ask", "answer"),
    "announce": ("write",),
    "distractor": ("write",),
    "feedback": ("write",),
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


QUESTION_START = re.compile(
    r"^\s*(who|whom|whose|what|when|where|why|how|which|is|are|was|were|do|does|did|can|"
    r"could|should|would|will|have|has|tell me|remind me|recall)\b", re.IGNORECASE)


def message_kind(text: str) -> str:
    """'question' or 'information' for a person's chat message (the chat's router rule).

    >>> message_kind("Where does Ana live?"), message_kind("tell me what you know about Ana")
    ('question', 'question')
    >>> message_kind("Ana moved to Porto. She loves it.")
    'information'
    """
    text = text.strip()
    return "question" if text.endswith("?") or QUESTION_START.match(text) else "information"


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


def expected_route(observation: Any) -> tuple[str, ...]:
    """What an observation needs, from its content rather than its kind: a choice among legal
    actions needs memory, then an answer; anything else is information to store."""
    legal = (observation.get("legal_actions") if isinstance(observation, dict)
             else getattr(observation, "legal_actions", ()))
    return ("ask", "answer") if legal else ("write",)


def router_accuracy(observations: list[Any], router: Any = route) -> dict[str, Any]:
    """Share of observations that `router` sends where `expected_route` says, per kind too.

    >>> router_accuracy([{"kind": "decide", "legal_actions": ["a", "b"]}, {"kind": "announce"}])["accuracy"]
    1.0
    """
    by_kind: dict[str, list[bool]] = {}
    errors = []
    for obs in observations:
        got, want = tuple(router(obs)), expected_route(obs)
        by_kind.setdefault(_field(obs, "kind"), []).append(got == want)
        if got != want and len(errors) < 5:
            errors.append({"kind": _field(obs, "kind"), "text": _field(obs, "text")[:120],
                           "routed": list(got), "expected": list(want)})
    hits = [ok for oks in by_kind.values() for ok in oks]
    return {"n": len(hits), "accuracy": sum(hits) / len(hits) if hits else None,
            "by_kind": {k: {"n": len(v), "accuracy": sum(v) / len(v)} for k, v in by_kind.items()},
            "errors": errors}


def route_turn(observation: Any) -> tuple[str, ...]:
    """The closed loop's router: what the observation itself says (a choice among legal
    actions needs memory, then an answer; anything else is information to store). Reads no
    label a game attaches to its turns."""
    return expected_route(observation)


class TextRouter:
    """A learned router that reads only the text: logistic regression on sentence embeddings,
    fit on observations labelled by what they needed (`expected_route`: an observation that
    came with legal actions needed ask + answer). For sources that give no action list (a
    chat, a text-only environment), where the loop's `route_turn` cannot look at one.

        router = TextRouter(embedder).fit(training_observations)
        router(obs)                       # ('ask', 'answer') or ('write',)
    """

    def __init__(self, embedder: Any, c: float = 1.0):
        self.embedder, self.c, self.model = embedder, c, None

    def fit(self, observations: list[Any]) -> TextRouter:
        import numpy as np
        from sklearn.linear_model import LogisticRegression

        labels = np.array([expected_route(o) == ("ask", "answer") for o in observations])
        if len(set(labels.tolist())) < 2:
            from mags_lib.errors import MagsError

            raise MagsError("the router's training observations are all of one kind",
                            "fit on observations that include decisions and information")
        x = self.embedder.encode([_field(o, "text") for o in observations])
        self.model = LogisticRegression(C=self.c, max_iter=1000).fit(x, labels)
        return self

    def __call__(self, observation: Any) -> tuple[str, ...]:
        if self.model is None:
            from mags_lib.errors import MagsError

            raise MagsError("TextRouter used before fit", "call router.fit(observations)")
        x = self.embedder.encode([_field(observation, "text")])
        return ("ask", "answer") if bool(self.model.predict(x)[0]) else ("write",)


def text_only_routers(train: list[Any], test: list[Any], embedder: Any) -> dict[str, Any]:
    """`router_accuracy` on `test` of the two routers that read only the text: the chat's
    question rule (`message_kind`) and a `TextRouter` fit on `train`."""
    def question_rule(o: Any) -> tuple[str, ...]:
        return ("ask", "answer") if message_kind(_field(o, "text")) == "question" else ("write",)

    return {"question_rule": router_accuracy(test, question_rule),
            "text_router": router_accuracy(test, TextRouter(embedder).fit(train))}
