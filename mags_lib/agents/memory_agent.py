"""The shared base of the memory agents: a `LiquidMemory` per episode, read at each question.

`MemoryAgent` holds the memory (reset per episode, one embedder shared by all agents of an
evaluation through `MemoEmbedder`), recalls on the observation when it is asked for memory
lines, and reports size, nodes and metrics. Subclasses decide what is written and how it is
read:

* `MagsLoopAgent` (`loop.py`, names `mags`, `mags_prompted` and the loop's variants): MAGS's own
  models write and read the memory. This is MAGS.
* `ScriptedMagsAgent` (`scripted.py`, `mags_scripted` and its ablations): an upper bound that
  writes the game's ground truth, never MAGS.

`NeverContradicts` is the detector of the no-supersession ablation (`supersede=False`): with it
every version of a fact stays valid.
"""

from __future__ import annotations

from typing import Any

from mags_lib.agents.base import Agent, AgentConfig, recalled
from mags_lib.embed import MemoEmbedder
from mags_lib.tasks.base import Observation


def node_list(memory: Any) -> list[dict[str, Any]]:
    """Every node of a `LiquidMemory`, superseded ones included: {"id", "text", "valid",
    "key"} (what `Agent.memory_nodes` returns)."""
    return [{"id": n, "text": d["text"], "valid": d["valid_to"] is None, "key": d["key"]}
            for n, d in memory.graph.nodes(data=True)]


class NeverContradicts:
    """A contradiction detector that never fires (the no-supersession ablation)."""

    def contradicts(self, old_text: str, new_text: str) -> bool:
        return False


class MemoryAgent(Agent):
    """A `LiquidMemory` per game; subclasses decide what is written and how it is read."""

    name = "memory"

    def __init__(self, llm: Any, config: AgentConfig | None = None, *,
                 memory_config: Any | None = None, embedder: Any | None = None,
                 supersede: bool = True, judge: Any | None = None):
        super().__init__(llm, config)
        from mags_lib.memory import MemoryConfig

        self.memory_config = memory_config or MemoryConfig()
        self.embedder = embedder
        self.supersede = supersede
        self.judge = judge  # a ContradictionDetector for updates (LiquidMemory(judge=...))
        self.edge_scorer: Any = None  # initial edges of new nodes (None: the similarity rule)
        self.memory: Any = None

    def reset(self, seed: int) -> None:
        from mags_lib.memory import LiquidMemory

        if self.embedder is None:
            from mags_lib.embed import default_embedder

            self.embedder = MemoEmbedder(default_embedder())
        detector = None if self.supersede else NeverContradicts()
        self.memory = LiquidMemory(self.memory_config.replaced(seed=seed), self.embedder,
                                   detector=detector, judge=self.judge,
                                   edge_scorer=self.edge_scorer)

    def memory_lines(self, obs: Observation) -> list[dict[str, Any]]:
        hits = self.memory.recall(obs.text, self.config.k)
        return [recalled(h.node_id, h.text, score=round(float(h.score), 4), sources=h.sources,
                         path=h.path, valid=h.valid) for h in reversed(hits)]

    def memory_size(self) -> int:
        return len(self.memory)

    def memory_nodes(self) -> list[dict[str, Any]]:
        return node_list(self.memory)

    def memory_metrics(self) -> dict[str, Any]:
        return self.memory.metrics()
