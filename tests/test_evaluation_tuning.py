"""Optuna tuning of the memory: seeds kept apart, a search that runs, a held-out verdict."""

from __future__ import annotations

import pytest

from mags_lib.errors import MagsError
from mags_lib.evaluation.tuning import SPACE, TuningConfig, composite, run_tuning, suggest


def test_training_and_heldout_seeds_must_differ():
    with pytest.raises(MagsError, match="both training and held-out"):
        TuningConfig(train_seeds=[0, 1], heldout_seeds=[1, 2])


def test_suggest_stays_in_the_space():
    import optuna

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    for _ in range(5):
        params = suggest(study.ask())
        for name, (kind, low, high) in SPACE.items():
            assert low <= params[name] <= high
            assert isinstance(params[name], int) == (kind == "int")


def test_composite_pays_accuracy_and_charges_size_and_churn():
    game = {"accuracy": 0.9, "cost": {"final_valid_nodes": 500, "churn_per_step": 10.0}}
    assert composite(game, 0.05, 0.002) == pytest.approx(0.9 - 0.025 - 0.02)


def test_smoke_tuning_compares_the_best_trial_on_heldout_seeds():
    result = run_tuning(TuningConfig(regimes=["present", "multi_hop"], trials=3,
                                     embedder="hashing", smoke=True))
    assert len(result.trials) == 3 and set(result.best) == set(SPACE)
    assert {h["regime"] for h in result.heldout} == {"present", "multi_hop"}
    assert all(h["n_seeds"] == 1 for h in result.heldout)
    assert isinstance(result.wins, bool)
    assert result.best_score == max(t["score"] for t in result.trials)
