"""Scoring answers to conversation questions: LoCoMo's token F1, exact match, abstention, and
the persona set's current / stale / earlier rates. Pure functions over strings and `QA`s.

    qa_f1("She moved to Lisbon.", "Lisbon", category=4)       # 0.4: precision 1/4, recall 1
    abstained("I don't know.")                                 # True
    persona_scores(rows)       # rows: {"qa": QA, "prediction": str} -> current accuracy, ...

Normalisation follows LoCoMo's scorer: lower case, punctuation and the articles a / an / the
and the word 'and' removed. Its scorer also stems with NLTK's Porter stemmer; this one does not
(no NLTK here), so "moved" and "move" count as different tokens and F1 can be slightly lower than
the paper's scorer gives. Category 1 (multi-hop) is scored as there: the gold is split on
commas and each part takes its best F1 against the prediction's comma-split parts, averaged.
Category 3 keeps the gold before the first ';'.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable
from typing import Any

ABSTAIN = re.compile(r"\b(i\s+don'?t\s+know|not\s+mentioned|no\s+information|unknown|"
                     r"cannot\s+(?:tell|say)|can'?t\s+(?:tell|say)|never\s+(?:said|mentioned|told))\b",
                     re.IGNORECASE)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize(text: str) -> str:
    """LoCoMo's answer normalisation (without stemming).

    >>> normalize("The Volvo, and a Fiat!")
    'volvo fiat'
    """
    text = str(text).lower().replace(",", " ")
    return " ".join(_ARTICLES.sub(" ", text.translate(_PUNCT)).split())


def token_f1(prediction: str, gold: str) -> float:
    """Harmonic mean of token precision and recall after `normalize`.

    >>> round(token_f1("She moved to Lisbon.", "Lisbon"), 3)
    0.4
    """
    pred, ref = normalize(prediction).split(), normalize(gold).split()
    common = sum((Counter(pred) & Counter(ref)).values())
    if not pred or not ref or not common:
        return float(pred == ref)
    p, r = common / len(pred), common / len(ref)
    return 2 * p * r / (p + r)


def qa_f1(prediction: str, gold: str, category: int) -> float:
    """Token F1 as LoCoMo scores categories 1 to 4."""
    if category == 3:
        gold = gold.split(";")[0]
    if category != 1:
        return token_f1(prediction, gold)
    preds = [p for p in str(prediction).split(",") if p.strip()] or [""]
    parts = [g for g in str(gold).split(",") if g.strip()]
    return sum(max(token_f1(p, g) for p in preds) for g in parts) / max(1, len(parts))


def exact_match(prediction: str, gold: str) -> bool:
    return normalize(prediction) == normalize(gold)


def abstained(prediction: str) -> bool:
    """Whether an answer declines ("I don't know", "not mentioned", ...), or is empty."""
    return not str(prediction).strip() or bool(ABSTAIN.search(str(prediction)))


def mentions(prediction: str, value: str) -> bool:
    """Whether the normalised value appears as whole words in the normalised prediction.

    >>> mentions("Ana lives in Lisbon now", "Lisbon"), mentions("a Volvo", "a Volvo XC")
    (True, False)
    """
    v = normalize(value)
    return bool(v) and f" {v} " in f" {normalize(prediction)} "


def persona_scores(rows: Iterable[dict[str, Any]]) -> dict[str, float | int | None]:
    """Rates over rows {"qa": QA, "prediction": str} of the persona set:
    current accuracy (the current value named and no stale one), the stale-answer rate (a
    stale value named) on current questions, earlier accuracy, 'when' accuracy (the date
    named), and abstention on 'unknown' questions."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_kind.setdefault(r["qa"].kind, []).append(r)

    def rate(kind: str, ok) -> float | None:
        group = by_kind.get(kind, [])
        return sum(bool(ok(r["qa"], r["prediction"])) for r in group) / len(group) if group else None

    def stale(q, p) -> bool:
        return any(mentions(p, s) for s in q.stale)
    return {
        "current_accuracy": rate("current", lambda q, p: mentions(p, q.answer) and not stale(q, p)),
        "stale_rate": rate("current", stale),
        "earlier_accuracy": rate("earlier", lambda q, p: mentions(p, q.answer)),
        "when_accuracy": rate("when", lambda q, p: mentions(p, q.answer)),
        "unknown_abstention": rate("unknown", lambda q, p: abstained(p)),
        **{f"n_{k}": len(v) for k, v in sorted(by_kind.items())},
    }
