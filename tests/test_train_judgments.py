"""A judging is kept beside the model and reused only while everything it depends on holds."""

from __future__ import annotations

import json

from mags_lib.train.judgments import JUDGED_FILE, judge_once, judgment_key, load_judgment

REPORT = {"ask": {"n": 2, "accuracy": 0.5, "hit_at": {1: 0.5, 3: 1.0}, "samples": []}}


def counting(report):
    calls = []

    def judge():
        calls.append(1)
        return report
    return judge, calls


def test_a_judging_is_kept_and_reused_under_its_key_only(tmp_path):
    path = tmp_path / "m" / JUDGED_FILE
    judge, calls = counting(REPORT)
    assert judge_once(path, "k1", judge) == REPORT and len(calls) == 1
    again = judge_once(path, "k1", judge)
    assert len(calls) == 1 and again["ask"]["reused_judgment_of"]
    assert {k: v for k, v in again["ask"].items() if k != "reused_judgment_of"} == REPORT["ask"]
    assert again["ask"]["hit_at"] == {1: 0.5, 3: 1.0}  # int depths, as eval_by_task gives them
    judge_once(path, "k2", judge)  # another model, rows or code: judged, and kept in its place
    assert len(calls) == 2 and load_judgment(path, "k1") is None
    assert load_judgment(path, "k2")["report"] == REPORT


def test_a_damaged_or_missing_file_costs_a_judging_never_a_wrong_number(tmp_path):
    path = tmp_path / JUDGED_FILE
    judge, calls = counting(REPORT)
    path.write_text('{"key": "k1", "report": ')  # a crash mid-write (writes are atomic, but)
    assert judge_once(path, "k1", judge) == REPORT and len(calls) == 1
    path.write_text(json.dumps({"key": "k1", "report": [1, 2]}))  # the wrong shape
    judge_once(path, "k1", judge)
    assert len(calls) == 2 and load_judgment(path, "k1") is not None
    judge_once(tmp_path / "none.json", None, judge)  # no stamp: judged, never kept
    assert len(calls) == 3 and not (tmp_path / "none.json").exists()


def test_the_key_follows_the_model_rows_budget_rewards_and_the_judging_code(tmp_path):
    for part in ("train", "objectives", "actions", "memory", "llm"):
        (tmp_path / part).mkdir()
        (tmp_path / part / "a.py").write_text("x = 1\n")
    rows = [{"prompt": [{"role": "user", "content": "q"}], "gold": {}, "task": "ask"}]

    def key(model="m:1:2", r=rows, tokens=16, params=None):
        return judgment_key(model, r, tokens, params or {"recall_reward": {"k": 3}}, tmp_path)
    first = key()
    assert key() == first
    assert len({first, key(model="m:1:3"), key(r=rows * 2), key(tokens=8),
                key(params={"recall_reward": {"k": 1}})}) == 5
    (tmp_path / "memory" / "a.py").write_text('"""Doc."""\nx = 1  # a comment\n')
    assert key() == first  # a comment or docstring judges nothing again
    (tmp_path / "memory" / "a.py").write_text("x = 2\n")  # the ask reward's retriever changed
    assert key() != first
    (tmp_path / "memory" / "a.py").write_text("x = 1\n")
    (tmp_path / "embed.py").write_text("y = 1\n")  # a single module counts too
    assert key() != first
    assert judgment_key("", rows, 16, {}, tmp_path) is None
