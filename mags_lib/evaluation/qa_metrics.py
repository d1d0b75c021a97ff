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


PERSONA_RATES: dict[str, str] = {"current_accuracy": "current", "stale_rate": "current",
                                 "earlier_accuracy": "earlier", "when_accuracy": "when",
                                 "unknown_abstention": "unknown"}
"""Each persona rate and the question kind it is a rate over."""


def persona_flags(qa: Any, prediction: str) -> dict[str, bool]:
    """Whether one answer counts toward each persona rate of its question's kind: current
    accuracy (the current value named and no stale one) and the stale-answer rate (a stale
    value named) on current questions, earlier and 'when' accuracy (the value or date named),
    abstention on 'unknown' questions. Empty for other kinds.

    >>> from mags_lib.conversations.types import QA
    >>> qa = QA("Where do I live now?", "Lisbon", (), 4, kind="current", stale=("Porto",))
    >>> persona_flags(qa, "Lisbon, or maybe Porto")
    {'current_accuracy': False, 'stale_rate': True}
    """
    if qa.kind == "current":
        stale = any(mentions(prediction, s) for s in qa.stale)
        return {"current_accuracy": mentions(prediction, qa.answer) and not stale,
                "stale_rate": stale}
    if qa.kind in ("earlier", "when"):
        return {f"{qa.kind}_accuracy": mentions(prediction, qa.answer)}
    if qa.kind == "unknown":
        return {"unknown_abstention": abstained(prediction)}
    return {}


def persona_scores(rows: Iterable[dict[str, Any]]) -> dict[str, float | int | None]:
    """Rates over rows {"qa": QA, "prediction": str} of the persona set (`persona_flags`
    averaged over the questions of each rate's kind; None where there are none), and the
    number of questions of each kind."""
    by_kind: dict[str, list[dict[str, bool]]] = {}
    for r in rows:
        by_kind.setdefault(r["qa"].kind, []).append(persona_flags(r["qa"], r["prediction"]))

    def rate(key: str) -> float | None:
        group = by_kind.get(PERSONA_RATES[key], [])
        return sum(f[key] for f in group) / len(group) if group else None
    return {**{key: rate(key) for key in PERSONA_RATES},
            **{f"n_{k}": len(v) for k, v in sorted(by_kind.items())}}
