"""Evaluate agents on the senseless game: run games, keep every decision, summarise, plot.

    from mags_lib.evaluation import EvalConfig, run_eval
    result = run_eval(EvalConfig(smoke=True))
    result.summary["oracle_vs_bare_gap"], result.summary["evaluation_valid"]

Modules: `config.py` (EvalConfig), `runner.py` (run_game, run_eval), `records.py` (GameRecord,
games.jsonl), `metrics.py` (pure metrics and `summarize`), `figures.py`.
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
