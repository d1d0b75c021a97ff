"""A Mem0-style prompted memory: the base model, shown a few examples, reads each observation
with the nearest stored facts and answers ADD, UPDATE <id>, DELETE <id> or NONE for what it
finds (after Chhikara et al., 2025, "Mem0: Building Production-Ready AI Agents with Scalable
Long-Term Memory", whose update phase chooses among the same four operations).

    agent = make_agent("mem0", llm, roles={"prompted": base_llm}, embedder=emb)

One call per information turn (Mem0 makes an extraction call and an update call; the 135M
model on 2 cores cannot afford two). The examples are about people and things the evaluation
never uses. The facts go to a `LiquidMemory` (semantic block, the memory's own defaults):
ADD observes the fact; UPDATE <id> observes it and retires node <id> if the memory did not
already supersede it (`forget`: the old fact stays, marked no longer valid); DELETE <id>
retires <id>; NONE writes nothing. A line that does not parse changes nothing and is counted
(`counts`); an UPDATE naming an id it was not shown adds its fact (there was nothing shown to
replace; the untrained 135M model writes "UPDATE 8: ..." on an empty memory), a DELETE of one
changes nothing, and both are counted as `unknown_id`. The memory lines of a question are its k
best valid facts. It is a baseline: untrained, it shows what prompting alone gets from the base model.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from mags_lib.agents.base import Agent, AgentConfig, memory_reward, recalled
from mags_lib.agents.memory_agent import node_list
from mags_lib.tasks.base import Observation

SYSTEM = ("You keep a memory of facts about a person and the people and things they mention. "
          "Read the new message and the stored memories, then write one line per fact worth "
          "keeping:\nADD: <fact>\nUPDATE <id>: <fact>   (the fact replaces memory <id>)\n"
          "DELETE <id>   (memory <id> is no longer true)\nNONE   (nothing new to keep)\n"
          "Write each fact as one short sentence with names, not 'I' or 'you'.")
EXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("(none)", "[2 March 2021] Karl: My brother Sven plays chess every Sunday.",
     "ADD: Sven, Karl's brother, plays chess every Sunday."),
    ("[4] Sven plays chess every Sunday.", "[9 April 2021] Karl: Sven quit chess, he only "
     "paints now.", "UPDATE 4: Sven paints; he quit chess."),
    ("[4] Sven paints.\n[6] Karl owns a red bicycle.", "[1 May 2021] Karl: Lovely weather "
     "today!", "NONE"),
    ("[6] Karl owns a red bicycle.", "[3 June 2021] Karl: Someone stole my bike last night.",
     "DELETE 6"),
)
_LINE = re.compile(r"^\s*(ADD|UPDATE|DELETE|NONE)\b\s*(\d+)?\s*:?\s*(.*)$", re.IGNORECASE)


def mem0_messages(memories: list[tuple[int, str]], message: str) -> list[dict[str, str]]:
    """The prompt: the rules, the examples as turns, then the stored facts and the message."""
    out = [{"role": "system", "content": SYSTEM}]
    for shown, said, answer in EXAMPLES:
        out += [{"role": "user", "content": f"Memories:\n{shown}\n\nMessage: {said}"},
                {"role": "assistant", "content": answer}]
    listed = "\n".join(f"[{i}] {t}" for i, t in memories) or "(none)"
    out.append({"role": "user", "content": f"Memories:\n{listed}\n\nMessage: {message}"})
    return out


def parse_mem0(text: str) -> tuple[list[tuple[str, int | None, str]], int]:
    """(ops, lines that did not parse): each op is (ADD|UPDATE|DELETE|NONE, id, fact).

    >>> parse_mem0("UPDATE 3: Ana lives in Lisbon.\\nsure!\\nDELETE 5")
    ([('UPDATE', 3, 'Ana lives in Lisbon.'), ('DELETE', 5, '')], 1)
    """
    ops, bad = [], 0
    for line in text.strip().splitlines():
        m = _LINE.match(line)
        if not m:
            bad += bool(line.strip())
            continue
        op, ident, fact = m.group(1).upper(), m.group(2), m.group(3).strip()
        needs_fact, needs_id = op in ("ADD", "UPDATE"), op in ("UPDATE", "DELETE")
        if (needs_fact and not fact) or (needs_id and ident is None):
            bad += 1
            continue
        ops.append((op, int(ident) if ident is not None else None, fact))
    return ops, bad


class Mem0Agent(Agent):
    """The Mem0-style baseline (see the module docstring)."""

    name = "mem0"

    def __init__(self, llm: Any, config: AgentConfig | None = None, *, writer: Any = None,
                 embedder: Any = None, memory_config: Any = None, shown: int = 5,
                 max_tokens: int = 64):
        super().__init__(llm, config)
        self.writer = writer or llm
        self.embedder, self.memory_config = embedder, memory_config
        self.shown, self.max_tokens = shown, max_tokens

    def reset(self, seed: int) -> None:
        from mags_lib.memory import LiquidMemory

        self.memory = LiquidMemory(config=self.memory_config, embedder=self.embedder)
        self.counts: Counter = Counter()
        self.seed = seed

    def observe(self, obs: Observation, reward: float | None = None,
                info: dict[str, Any] | None = None) -> None:
        if obs.text and not obs.legal_actions:
            self.write(obs)
        self.memory.step(memory_reward(reward))

    def write(self, obs: Observation) -> None:
        hits = self.memory.recall(obs.text, self.shown, learn=False)
        shown = {h.node_id: h.text for h in hits}
        out = self.writer.chat(mem0_messages(list(shown.items()), obs.text),
                               max_tokens=self.max_tokens, temperature=0.0, seed=self.seed)
        ops, bad = parse_mem0(out.text)
        self.counts["calls"] += 1
        self.counts["unparsed_lines"] += bad
        self.counts["lines"] += len(ops) + bad
        self.counts["valid_lines"] += sum(i is None or i in shown for _, i, _ in ops)
        for op, ident, fact in ops:
            self.apply_op(op, ident, fact, shown, source=f"turn:{obs.turn}")

    def apply_op(self, op: str, ident: int | None, fact: str, shown: dict[int, str], *,
                 source: str) -> None:
        if op == "NONE":
            self.counts["none"] += 1
            return
        if ident is not None and ident not in shown:
            self.counts["unknown_id"] += 1
            if op == "DELETE":
                return
            op, ident = "ADD", None  # nothing shown to replace: the fact is new
        written = (self.memory.observe(fact, block="semantic", source=source)
                   if op in ("ADD", "UPDATE") else None)
        if op != "ADD" and written != ident and self.memory.is_valid(ident):
            self.memory.forget(ident)  # not when the new fact merged into the one it names
        self.counts[op.lower()] += 1

    def memory_lines(self, obs: Observation) -> list[dict[str, Any]]:
        hits = self.memory.recall(obs.text, self.config.k, learn=False)
        return [recalled(h.node_id, h.text, score=round(float(h.score), 4), sources=h.sources)
                for h in reversed(hits)]

    def memory_size(self) -> int:
        return self.memory.to_networkx(valid_only=True).number_of_nodes()

    def memory_nodes(self) -> list[dict[str, Any]]:
        return node_list(self.memory)
