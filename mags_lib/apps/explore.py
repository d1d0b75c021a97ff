"""A memory to open in the explorer (`notebooks/explore_memory.ipynb`).

    memory, frames = open_or_demo("data/chat/memory")   # a saved memory, no frames
    memory, frames = demo_memory(turns=120)             # a small memory with a history

The demo memory needs no trained model, so the explorer opens in seconds on a fresh clone: it
plays the senseless game as a plain observer. Every information turn (rule statements, changes,
feedback, distractors) is stored verbatim as an episodic fact through the memory's own write
path (merge, contradiction detector, attention edges), every decision question is recalled
(Hebbian wiring of what it reaches, rewarded by whether its best hit names the right item), and
`memory.step` ends each turn. It is a view of the memory's mechanics, not of the trained write
model: the closed loop's memories come from `python -m mags_lib play --agent mags` or the chat.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def demo_memory(turns: int = 120, snapshot_every: int = 30, seed: int = 0,
                embedder: Any = None) -> tuple[Any, list[tuple[str, Any]]]:
    """(memory, [(label, graph), ...]) after `turns` turns of observing a game; a frame every
    `snapshot_every` turns."""
    from mags_lib.game import GameConfig, SenselessGame
    from mags_lib.memory import LiquidMemory

    env = SenselessGame(GameConfig(seed=seed, episode_length=turns, surface="varied"))
    memory = LiquidMemory(embedder=embedder)
    frames: list[tuple[str, Any]] = []
    obs, done = env.reset(seed), False
    while not done:
        reward = None
        if obs.legal_actions:
            hits = memory.recall(obs.text, 3)
            guess = next((a for h in hits for a in obs.legal_actions if a in h.text), None)
            result = env.step(guess or obs.legal_actions[0])
            reward = 1.0 if result.reward >= 1.0 else -1.0
        else:
            memory.observe(obs.text, block="episodic", source=f"turn:{obs.turn}")
            result = env.step(None)
        memory.step(reward)
        if snapshot_every and (obs.turn + 1) % snapshot_every == 0:
            frames.append((f"turn {obs.turn + 1}", memory.to_networkx(valid_only=False)))
        obs, done = result.observation, result.done
    return memory, frames


def open_or_demo(path: str | Path | None, *, embedder: Any = None, **demo: Any
                 ) -> tuple[Any, list[tuple[str, Any]]]:
    """The memory saved at `path` (no frames), or `demo_memory(**demo)` when `path` is empty."""
    if path:
        from mags_lib.memory import LiquidMemory

        return LiquidMemory.load(path, embedder=embedder), []
    return demo_memory(embedder=embedder, **demo)
