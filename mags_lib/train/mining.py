"""Choose GRPO's prompts where the starting model still has something to learn.

    rows, info = mine_prompts("models/ask-sft", train_rows, cfg)   # cfg: GRPOStageConfig
    info   # {"candidates": 400, "below_one": 177, "picked_below_one": 40, "n": 40, "seconds": 115}

GRPO learns only from groups whose completions score differently: the advantage is each
completion's reward minus its group's mean. After the SFT cold start the ask model's greedy
block already finds the rule on ~95% of the training prompts, and on ~55% every query of it is
a new one that hits, so many groups of a random batch carry little or no signal, and the short
CPU run (40 prompts) spends most of its steps on them. Mining decodes the starting model
greedily on `cfg.mine_candidates` training rows, scores each output with `cfg.mine_reward`, and
gives GRPO the rows that scored below 1 first, filled up with the others to the number of
prompts the run will see (DAPO's "dynamic sampling" drops zero-spread groups after sampling;
this picks before, at the cost of one greedy pass).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from mags_lib.train.config import GRPOStageConfig

log = logging.getLogger(__name__)


def pick_hard(scores: list[float | None], n: int, lowest_first: bool = False) -> list[int]:
    """Indices of `n` rows: those scoring below 1 first, then the others, each in their order
    (a row without a score, None, counts as solved: the reward cannot judge it). With
    `lowest_first`, the rows below 1 come lowest score first (ties in their order).

    >>> pick_hard([1.0, 0.5, None, 0.0, 1.0], 3)
    [1, 3, 0]
    >>> pick_hard([1.0, 0.5, None, 0.0, 1.0], 2, lowest_first=True)
    [3, 1]
    >>> pick_hard([1.0, 0.0], 5)
    [1, 0]
    """
    below = [i for i, s in enumerate(scores) if s is not None and s < 1.0]
    if lowest_first:
        below.sort(key=lambda i: scores[i])
    rest = [i for i, s in enumerate(scores) if s is None or s >= 1.0]
    return (below + rest)[:n]


def prompts_seen(cfg: GRPOStageConfig) -> int:
    """Prompts one GRPO run draws: steps x completions per step / completions per prompt, times
    the processes of an `accelerate launch` (each draws its own)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    per_step = cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps
    return max(1, cfg.max_steps * per_step * world // cfg.num_generations)


def mine_prompts(model: Any, rows: list[dict], cfg: GRPOStageConfig
                 ) -> tuple[list[dict], dict[str, Any]]:
    """The training rows GRPO should see (see the module docstring) and what mining found.

    `model` is anything `evaluate.generate` takes (the merged SFT checkpoint directory). With
    `cfg.mine_candidates == 0` the rows come back unchanged."""
    if cfg.mine_candidates <= 0:
        return rows, {"candidates": 0}
    from mags_lib.objectives.rewards import build_rewards
    from mags_lib.train.evaluate import generate

    reward = build_rewards([cfg.mine_reward], cfg.reward_params)[0]
    candidates = rows[: cfg.mine_candidates]
    t0 = time.perf_counter()
    texts = generate(model, [r["prompt"] for r in candidates], cfg.max_completion_length)
    scores = reward(texts, gold=[r["gold"] for r in candidates],
                    task=[r["task"] for r in candidates])
    n = prompts_seen(cfg)
    picked = pick_hard(scores, n, cfg.mine_lowest_first)
    below = sum(1 for s in scores if s is not None and s < 1.0)
    info = {"candidates": len(candidates), "reward": cfg.mine_reward, "below_one": below,
            "zero": sum(1 for s in scores if s == 0.0),
            "picked_zero": sum(1 for i in picked if scores[i] == 0.0),
            "picked_below_one": min(below, n), "n": len(picked),
            "candidate_mean": (sum(s for s in scores if s is not None)
                               / max(1, sum(s is not None for s in scores))),
            "seconds": time.perf_counter() - t0}
    log.info("mining: %d of %d candidates score below 1 on %s; GRPO gets %d prompts (%.0f s)",
             below, len(candidates), cfg.mine_reward, len(picked), info["seconds"])
    return [candidates[i] for i in picked], info
