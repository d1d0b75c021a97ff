"""The Liquid Knowledge Graph memory: `LiquidMemory` and its parts.

    from mags_lib.memory import LiquidMemory, MemoryConfig
    mem = LiquidMemory(MemoryConfig.from_dict({"max_nodes": 10_000}))
    mem.observe("On rainy turns the purple glarb eats carrots.", block="semantic")
    mem.recall("what does the glarb eat?", k=5)

See `store.py` for the data model and the map of the modules.
"""

from mags_lib.memory.config import DIALOGUE_MEMORY, MemoryConfig
from mags_lib.memory.contradiction import (
    ContradictionDetector,
    LLMJudgeDetector,
    RuleBasedDetector,
)
from mags_lib.memory.store import LiquidMemory
from mags_lib.memory.types import ApplyReport, ContextItem, Hit, MemoryDiff, WriteOutcome
from mags_lib.memory.working import WorkingItem, WorkingMemory

__all__ = [
    "DIALOGUE_MEMORY",
    "ApplyReport",
    "ContextItem",
    "ContradictionDetector",
    "Hit",
    "LLMJudgeDetector",
    "LiquidMemory",
    "MemoryConfig",
    "MemoryDiff",
    "RuleBasedDetector",
    "WorkingItem",
    "WorkingMemory",
    "WriteOutcome",
]
