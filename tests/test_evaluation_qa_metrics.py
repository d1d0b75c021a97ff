"""Answer scoring: LoCoMo's F1 by category, abstention, and the persona rates."""

from __future__ import annotations

from mags_lib.conversations.types import QA
from mags_lib.evaluation.qa_metrics import (
    abstained,
    exact_match,
    mentions,
    persona_scores,
    qa_f1,
    token_f1,
)


def test_f1_by_category():
    assert token_f1("Lisbon", "lisbon.") == 1.0
    assert token_f1("", "") == 1.0 and token_f1("x", "") == 0.0
    assert qa_f1("painting, hiking", "hiking, painting, swimming", category=1) == 2 / 3
    assert qa_f1("psychology", "Psychology; counseling", category=3) == 1.0
    assert exact_match("The Volvo", "volvo") and not exact_match("Volvo XC", "Volvo")


def test_abstention():
    assert abstained("I don't know.") and abstained("That was never mentioned.")
    assert abstained("  ") and not abstained("Lisbon")


def test_persona_scores_count_stale_answers_apart():
    cur = QA("Where do I live now?", "Lisbon", ("D2:1",), 4, kind="current", stale=("Porto",))
    ear = QA("Where did I live before?", "Porto", ("D1:1",), 4, kind="earlier")
    unk = QA("Who is my doctor now?", None, (), 5, kind="unknown")
    rows = [{"qa": cur, "prediction": "You live in Lisbon."},
            {"qa": cur, "prediction": "Porto"},
            {"qa": cur, "prediction": "Lisbon, or maybe Porto"},
            {"qa": ear, "prediction": "Porto"},
            {"qa": unk, "prediction": "Dr Silva"}]
    out = persona_scores(rows)
    assert out["current_accuracy"] == 1 / 3
    assert out["stale_rate"] == 2 / 3
    assert out["earlier_accuracy"] == 1.0 and out["unknown_abstention"] == 0.0
    assert out["when_accuracy"] is None and out["n_current"] == 3
    assert mentions("a Volvo", "Volvo") and not mentions("Volvos", "Volvo")
