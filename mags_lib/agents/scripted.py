"""`mags_scripted`: an UPPER BOUND given the game's structure, never MAGS.

`ScriptedMagsAgent` is a perfect writer handed the senseless game's ground truth. It takes each
turn's rule from the env it is attached to (`env.ground_truth()`: the canonical sentence and
`key="creature|condition"`, so only a new version of the *same* rule supersedes it) on every
surface, writes it into a `LiquidMemory` (`memory_agent.MemoryAgent`), and recalls with the raw
question. No model of MAGS writes or reads here; it is the ceiling the learned writer of the
closed loop (`loop.py`, `mags`) is measured against, and is labelled an upper bound wherever it
is reported. Other turns (distractors, turns whose ground truth states no rule; questions only
with `remember_questions`) are stored as they came, episodic. Every turn it calls
`memory.step(reward)`, the reward of a decision mapped from {0, 1} to {-1, +1} so a wrong
answer weakens the recalled paths.

Its ablations (`ABLATIONS`, picked by name in `registry.py`) change one mechanism each through
`MemoryConfig` or the write path, nothing else:

* mags_scripted_no_hebbian: no co-recall wiring (hebbian_rate 0, hebbian_min_score 1.0);
* mags_scripted_no_decay: no decay, no pruning, no removal of idle nodes;
* mags_scripted_flat: no traversal (max_visited 1): the hits are the hybrid dense + BM25 top k;
* mags_scripted_no_contradiction: no supersession: rule facts are written without a key and
  with a detector that never fires, so every version stays valid; merge_threshold 0.99 so
  that a new version is not folded into the old node as a repeat.

`MECHANISMS` switches one mechanism of the memory off by name for any memory agent, the
scripted upper bound and the closed loop alike (the mechanism study of notebook 09).
"""

from __future__ import annotations

from typing import Any

from mags_lib.agents.base import AgentConfig, memory_reward
from mags_lib.agents.memory_agent import MemoryAgent
from mags_lib.tasks.base import Observation

ABLATIONS: dict[str, dict[str, Any]] = {
    "mags_scripted": {},
    "mags_scripted_no_hebbian": {"memory": {"hebbian_rate": 0.0, "hebbian_min_score": 1.0}},
    "mags_scripted_no_decay": {"memory": {"decay_rate": 0.0, "prune_threshold": 0.0,
                                 "isolated_grace": 10**9, "inactive_after": 10**9}},
    "mags_scripted_flat": {"memory": {"max_visited": 1}},
    "mags_scripted_no_contradiction": {"use_keys": False, "supersede": False,
                              "memory": {"merge_threshold": 0.99}},
}


MECHANISMS: dict[str, dict[str, Any]] = {
    "hebbian": {"memory": {"hebbian_rate": 0.0, "hebbian_min_score": 1.0}},
    "reward": {"memory": {"reward_rate": 0.0}},
    "decay": {"memory": {"decay_rate": 0.0, "prune_threshold": 0.0}},
    "recency": {"memory": {"decay_recency_steps": 1e-6}},
    "forgetting": {"memory": {"isolated_grace": 10**9, "inactive_after": 10**9}},
    "solidification": {"memory": {"solidify_threshold": 1.0, "solid_node_uses": 10**9}},
    "kcore": {"memory": {"core_keep_k": 10**6, "importance_core": 0.0}},
    "traversal": {"memory": {"max_visited": 1}},
    "contradiction": {"use_keys": False, "supersede": False,
                      "memory": {"merge_threshold": 0.99, "update_supersede_threshold": 1.0}},
}
"""One mechanism of the memory switched off, by name, for any memory agent
(`make_agent(name, llm, ablate="hebbian")`, the mechanism study of notebook 09):

* hebbian: no co-recall wiring; reward: `step(reward)` leaves the recalled paths alone;
* decay: edges never decay (and so are never pruned); recency: decay without the recency
  correction (f(s) = 1: an edge used a moment ago decays as fast as an old one);
* forgetting: idle and isolated nodes are never removed (capacity still applies);
* solidification: no edge or node ever becomes solid (everything stays removable);
* kcore: the k-core protects nothing and adds nothing to importance;
* traversal: the hits are the hybrid top k (no walk along edges);
* contradiction: no supersession: every version of a fact stays valid (the scripted writer
  also drops its keys; merges only near-identical text; a write model's `update` no longer
  supersedes its nearest fact).
"""


class ScriptedMagsAgent(MemoryAgent):
    """The upper bound: the game's ground-truth rule written each turn (see the module)."""

    name = "mags_scripted"

    def __init__(self, llm: Any, config: AgentConfig | None = None, *,
                 memory_config: Any | None = None, embedder: Any | None = None,
                 use_keys: bool = True, supersede: bool = True, env: Any | None = None):
        super().__init__(llm, config, memory_config=memory_config, embedder=embedder,
                         supersede=supersede)
        self.use_keys = use_keys
        self.env = env

    def attach(self, env: Any) -> None:
        self.env = env

    def observe(self, obs: Observation, reward: float | None = None,
                info: dict[str, Any] | None = None) -> None:
        truth = self.env.ground_truth() if self.env is not None else None
        source = f"turn:{obs.turn}"
        states_rule = (truth is not None and truth.kind in ("announce", "feedback")
                       and truth.rule_text and truth.engram_ops)
        if states_rule:
            self.memory.observe(truth.rule_text, source=source, time=float(obs.turn),
                                block="semantic",
                                key=truth.rule_key if self.use_keys else None)
        elif obs.text and (not obs.legal_actions or self.config.remember_questions):
            self.memory.observe(obs.text, source=source, time=float(obs.turn), block="episodic")
        self.memory.step(memory_reward(reward))
