"""Evaluate the agents and their memory on every task, keeping every decision or answer.

    from mags_lib.evaluation import EvalConfig, run_eval
    result = run_eval(EvalConfig(smoke=True))
    result.summary["oracle_vs_bare_gap"], result.summary["evaluation_valid"]

Games (any `GameEnv`): `config.py` (EvalConfig), `runner.py` (run_game, run_eval: every agent on
the same seeded games), `records.py` (GameRecord, games.jsonl), `metrics.py` (pure metrics and
`summarize`), `figures.py`, `headline.py` (notebook 06's table and targets), `answer_model.py`
and `answer_order.py` (the decision LLM and its bias for the options' order), `write_models.py`
(write or ask models compared in the closed loop). The senseless game's memory mechanisms:
`graph_study.py` (notebook 05), `regimes.py`, `mechanisms.py`, `edge_study.py`, `tuning.py`
(notebook 09), with their figures. TextWorld: `textworld_eval.py` (notebook 10).
Conversations, a person's changing facts and LoCoMo: `conversation_qa.py`
(questions answered from each agent's memory lines), `qa_metrics.py`, `evidence_recall.py`,
`supersession.py` (changed facts retired against the gold), `role_judge.py` (the write and ask
models alone on held-out rows), `conversation_study.py` (notebook 12's study).
"""

from mags_lib.evaluation.config import ALL_AGENTS, EvalConfig
from mags_lib.evaluation.metrics import (
    ablation_markdown,
    ablation_table,
    accuracy,
    adaptability,
    efficiency,
    recall_accuracy,
    recovery_turns,
    stale_recall_rate,
    summarize,
    update_fidelity,
    wilson_interval,
)
from mags_lib.evaluation.records import GameRecord, finished_games, read_jsonl, rule_flags
from mags_lib.evaluation.runner import EvalResult, run_eval, run_game

__all__ = [
    "ALL_AGENTS", "EvalConfig", "EvalResult", "GameRecord", "ablation_markdown", "ablation_table",
    "accuracy", "adaptability", "efficiency", "finished_games", "read_jsonl", "recall_accuracy",
    "recovery_turns", "rule_flags", "run_eval", "run_game", "stale_recall_rate", "summarize",
    "update_fidelity", "wilson_interval",
]
