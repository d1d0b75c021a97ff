"""Tune the memory's hyper-parameters with Optuna on training seeds, judge on held-out seeds
(notebook 09).

The objective is the seeds' composite: task reward minus graph size minus churn,

    score = accuracy - size_weight * final valid nodes / 1000 - churn_weight * edge churn per step

averaged over the regimes (`evaluation.regimes`) and the *training* seeds, for the scripted
writer (`mags_scripted`, an upper bound: every error is a memory error) with the perfect
reader. Optuna's TPE sampler (seeded) proposes `MemoryConfig` overrides from `SPACE`. The best
trial is then played against the defaults on *held-out* seeds, never seen while tuning, and
compared paired per regime (`mechanisms.paired_effect`); it `wins` when its mean paired
accuracy effect is positive, no regime loses more than `max_loss`, and its composite score is
higher.

    cfg = TuningConfig(smoke=True)
    result = run_tuning(cfg)      # result.best, result.heldout, result.wins
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from statistics import mean
from typing import Any

from mags_lib.errors import MagsError

SPACE: dict[str, tuple[str, float, float]] = {
    # name: (kind, low, high); kind "float", "log" (float, log scale) or "int" (log scale)
    "decay_rate": ("log", 1e-4, 0.05),
    "decay_recency_steps": ("log", 1.0, 200.0),
    "prune_threshold": ("float", 0.0, 0.1),
    "hebbian_rate": ("float", 0.0, 0.5),
    "reward_rate": ("float", 0.0, 0.5),
    "solidify_threshold": ("float", 0.7, 1.0),
    "min_path_product": ("log", 0.02, 0.5),
    "max_visited": ("int", 1, 128),
    "lexical_weight": ("float", 0.0, 0.8),
    "attention_top_m": ("int", 1, 10),
}
"""The searched `MemoryConfig` fields and their ranges."""


@dataclass
class TuningConfig:
    regimes: list[str] = field(default_factory=lambda: [
        "present", "scale", "multi_hop", "silent_drift", "recurrence"], metadata={
        "help": "regimes averaged in the objective (evaluation.regimes)"})
    train_seeds: list[int] = field(default_factory=lambda: [100, 101], metadata={
        "help": "seeds the trials play (never the held-out ones)"})
    heldout_seeds: list[int] = field(default_factory=lambda: [0, 1, 2, 3, 4], metadata={
        "help": "seeds the best trial and the defaults are compared on"})
    trials: int = field(default=40, metadata={"help": "Optuna trials"})
    sampler_seed: int = field(default=0, metadata={"help": "seed of the TPE sampler"})
    size_weight: float = field(default=0.05, metadata={
        "help": "objective cost per 1,000 valid nodes at the end of a game"})
    churn_weight: float = field(default=0.002, metadata={
        "help": "objective cost per changed edge per step"})
    max_loss: float = field(default=0.02, metadata={
        "help": "the tuned config may lose at most this much accuracy in any regime to win"})
    k: int = field(default=3, metadata={"help": "memory lines recalled per decision"})
    embedder: str = field(default="embedded", metadata={
        "help": "'embedded' (all-MiniLM-L6-v2) or 'hashing' (fast fake, tests)"})
    smoke: bool = field(default=False, metadata={
        "help": "three trials, one seed each side, short episodes"})

    def __post_init__(self) -> None:
        overlap = sorted(set(self.train_seeds) & set(self.heldout_seeds))
        if overlap:
            raise MagsError(f"TuningConfig: seeds {overlap} are both training and held-out",
                            "keep train_seeds and heldout_seeds apart")
        if self.trials < 1 or not self.train_seeds or not self.heldout_seeds:
            raise MagsError("TuningConfig needs trials >= 1 and seeds on both sides",
                            "set trials, train_seeds and heldout_seeds")

    def resolved(self) -> TuningConfig:
        if not self.smoke:
            return self
        return replace(self, trials=min(self.trials, 3), train_seeds=self.train_seeds[:1],
                       heldout_seeds=self.heldout_seeds[:1])

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TuningResult:
    config: TuningConfig
    best: dict[str, Any]
    best_score: float
    default_score: float
    trials: list[dict[str, Any]]
    heldout: list[dict[str, Any]]
    wins: bool
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(), "best": self.best,
                "best_score": self.best_score, "default_score": self.default_score,
                "trials": self.trials, "heldout": self.heldout, "wins": self.wins,
                "seconds": self.seconds}


def suggest(trial: Any, space: dict[str, tuple[str, float, float]] = SPACE) -> dict[str, Any]:
    """One point of `space` from an Optuna trial."""
    out: dict[str, Any] = {}
    for name, (kind, low, high) in space.items():
        if kind == "int":
            out[name] = trial.suggest_int(name, int(low), int(high), log=True)
        else:
            out[name] = trial.suggest_float(name, low, high, log=kind == "log")
    return out


def composite(game: dict[str, Any], size_weight: float, churn_weight: float) -> float:
    """The objective of one game (see the module docstring)."""
    cost = game["cost"]
    return ((game["accuracy"] or 0.0) - size_weight * cost["final_valid_nodes"] / 1000.0
            - churn_weight * cost["churn_per_step"])


def play_all(overrides: dict[str, Any], seeds: list[int], cfg: TuningConfig, embedder: Any,
             mechanism_cfg: Any) -> list[dict[str, Any]]:
    """The scripted agent with `overrides` on every regime and seed (the regime's own budget
    stays: it is part of the regime)."""
    from mags_lib.evaluation.mechanisms import play
    from mags_lib.evaluation.regimes import regime_memory

    games = []
    for regime in cfg.regimes:
        study = replace(mechanism_cfg, memory_overrides={regime: {
            **overrides, **regime_memory(regime)}})
        for seed in seeds:
            games.append(play({"regime": regime, "agent": "mags_scripted", "mechanism": None,
                               "seed": seed}, study, embedder, None))
    return games


def run_tuning(cfg: TuningConfig, *, embedder: Any | None = None) -> TuningResult:
    """Search, then compare the best trial with the defaults on the held-out seeds."""
    import optuna

    from mags_lib.agents import MemoEmbedder
    from mags_lib.evaluation.mechanisms import MechanismStudyConfig, paired_effect
    from mags_lib.evaluation.runner import _embedder

    t0 = time.perf_counter()
    cfg = cfg.resolved()
    embedder = embedder or MemoEmbedder(_embedder(cfg.embedder))
    base = MechanismStudyConfig(regimes=list(cfg.regimes), k=cfg.k, embedder=cfg.embedder,
                                smoke=cfg.smoke, mechanisms=[], baselines=[])

    def score(games: list[dict[str, Any]]) -> float:
        return mean(composite(g, cfg.size_weight, cfg.churn_weight) for g in games)

    trials: list[dict[str, Any]] = []

    def objective(trial: Any) -> float:
        params = suggest(trial)
        games = play_all(params, cfg.train_seeds, cfg, embedder, base)
        value = score(games)
        trials.append({"number": trial.number, "params": params, "score": value,
                       "accuracy": mean(g["accuracy"] or 0.0 for g in games)})
        return value

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=cfg.sampler_seed))
    study.optimize(objective, n_trials=cfg.trials)
    best = dict(study.best_params)
    default_train = score(play_all({}, cfg.train_seeds, cfg, embedder, base))
    tuned = play_all(best, cfg.heldout_seeds, cfg, embedder, base)
    default = play_all({}, cfg.heldout_seeds, cfg, embedder, base)
    heldout = []
    for regime in cfg.regimes:
        mine = {g["seed"]: g["decisions"] for g in tuned if g["regime"] == regime}
        theirs = {g["seed"]: g["decisions"] for g in default if g["regime"] == regime}
        row = paired_effect(mine, theirs)
        row.update(regime=regime,
                   tuned_score=score([g for g in tuned if g["regime"] == regime]),
                   default_score=score([g for g in default if g["regime"] == regime]))
        heldout.append(row)
    wins = (mean(r["effect"] for r in heldout) > 0
            and all(r["effect"] >= -cfg.max_loss for r in heldout)
            and score(tuned) > score(default))
    return TuningResult(cfg, best, float(study.best_value), default_train, trials, heldout,
                        bool(wins), round(time.perf_counter() - t0, 2))
