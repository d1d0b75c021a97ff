"""Question answering over conversations: each agent reads every turn, then answers the
questions from its memory lines with one answer model, and is scored as LoCoMo scores.

    from mags_lib.evaluation.conversation_qa import ConversationEvalConfig, run_conversation_eval

    cfg = ConversationEvalConfig(agents=["bare", "full_context", "static_rag", "gold_writes"])
    out = run_conversation_eval(convs, answer_llm, cfg, embedder=emb)
    out["summary"]["static_rag"]["f1"], out["rows"][0]

The agents are those of every task (`agents.make_agent`): a conversation is fed to them as a stream
of `Observation`s, one per turn ("[8 May 2023] Ana: I moved to Lisbon."), and a question is an
observation whose memory lines the agent returns; they never learn which task they are in.
The answer is free text (`agents.open_answer`), the same prompt for every agent. `gold_writes`
is an **upper bound**, not an agent: the conversation's gold facts written into a `LiquidMemory`
with its defaults, read by the same recall (superseded facts shown, marked "no longer true");
only it reads the gold.

Scores per agent (`summarize`): evidence recall@5 / @10 of the turns its best lines come from
(for the k's up to `ConversationEvalConfig.k`; `full_context` shows recent turns, not ranked
ones, so its recall is of the window's last k turns), token F1 and exact match on categories
1-4 (LoCoMo's scorer, `qa_metrics`), the abstention rate on category 5 (right) and on answerable questions (wrong),
the persona rates where questions carry a `kind`, the stage where each question on a fact's
value was lost (`failure_stages`: write, superseded, recall, reader), memory lines and size,
seconds; intervals by bootstrap over conversations.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from mags_lib.evaluation.evidence_recall import KS, bootstrap_by_conversation, recall_at
from mags_lib.evaluation.failure_stages import KINDS as FACT_KINDS
from mags_lib.evaluation.failure_stages import failure_stage, stage_counts
from mags_lib.evaluation.qa_metrics import (
    abstained,
    exact_match,
    persona_flags,
    persona_scores,
    qa_f1,
)
from mags_lib.tasks.base import Dialogue

UPPER_BOUNDS = ("gold_writes",)


def dialogue_memory() -> dict[str, Any]:
    """A copy of `memory.DIALOGUE_MEMORY`: the memory settings of a dialogue's readers."""
    from mags_lib.memory.config import DIALOGUE_MEMORY

    return dict(DIALOGUE_MEMORY)


@dataclass
class ConversationEvalConfig:
    agents: list[str] = field(default_factory=lambda: ["bare", "full_context", "static_rag",
                                                       "gold_writes"], metadata={
        "help": "agent names (agents.AGENT_NAMES without game ground truth) and 'gold_writes'; "
                "'<agent>/no_<mechanism>' reads with one mechanism of agents.MECHANISMS off"})
    k: int = field(default=5, metadata={"help": "memory lines per question"})
    max_tokens: int = field(default=24, metadata={"help": "new tokens per answer"})
    max_questions: int | None = field(default=None, metadata={
        "help": "questions per conversation, a seeded sample in file order (None: all)"})
    seed: int = field(default=0, metadata={"help": "question sample and generation seed"})
    context_window: int = field(default=1024, metadata={
        "help": "tokens of transcript, question and answer that `full_context` may fill (the "
                "answer model's window is 2048; the chat template and the system line take "
                "part of it, and each 1,000 prompt tokens cost ~6 s on 2 cores)"})
    memory: dict[str, Any] = field(default_factory=dialogue_memory, metadata={
        "help": "MemoryConfig overrides for the memory agents and gold_writes (default: "
                "memory.DIALOGUE_MEMORY, the dialogue's settings; e.g. {'episode_context': 2} embeds each "
                "turn with the two before it)"})
    loop: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "LoopConfig overrides for the closed-loop agents (mags...), e.g. {'versions': "
                "1}: each recalled fact after the version it replaced, marked '(no longer "
                "true)', as gold_writes shows them"})

    def __post_init__(self) -> None:
        if self.k < 1 or self.max_tokens < 1 or self.context_window < 256:
            raise ValueError("k and max_tokens must be at least 1, context_window 256")
        if self.max_questions is not None and self.max_questions < 1:
            raise ValueError("max_questions must be None or at least 1")


def gold_keys(facts: Sequence[Any]) -> list[str]:
    """One key per gold fact, shared along a version chain: an update takes the key of the
    fact it replaces, a fact said again the key it had, anything else a new key. Written with
    these keys (`LiquidMemory.observe(key=...)`), an update supersedes exactly the fact the
    gold says it replaces and nothing else merges across facts.

    >>> from mags_lib.conversations.types import GoldFact
    >>> gold_keys([GoldFact(1, "A", "Hugo lives in Turin.", ()),
    ...            GoldFact(1, "A", "Felix lives in Turin.", ()),
    ...            GoldFact(2, "A", "Felix lives in Leeds.", (), "update", "Felix lives in Turin."),
    ...            GoldFact(3, "A", "Hugo lives in Turin.", ())])
    ['gold-0', 'gold-1', 'gold-1', 'gold-0']
    """
    key_of: dict[str, str] = {}
    out = []
    for i, o in enumerate(facts):
        key = key_of.get(o.replaces) if o.replaces else key_of.get(o.text)
        key = key or f"gold-{i}"
        key_of[o.text] = key
        out.append(key)
    return out


class GoldWritesMemory:
    """Upper bound: the gold facts (a conversation's `observations`) written in order into a
    `LiquidMemory`, each update superseding exactly the fact the gold says it replaces
    (`gold_keys`; before 2026-11-29 the memory's own detector chose, and on the persona dev
    split an update of Felix's home retired Hugo's), recalled as the memory agents recall.
    Reads the gold: never an agent."""

    name = "gold_writes"

    def __init__(self, conv: Dialogue, embedder: Any, k: int, config: Any = None):
        from mags_lib.agents.loop import LoopConfig
        from mags_lib.memory import LiquidMemory

        self.k = k
        self.loop = LoopConfig()  # the line defaults the closed loop reads with
        self.memory = LiquidMemory(config=config, embedder=embedder)
        self.day = {i: o.when for i, o in zip(conv.stream_ids(), conv.stream(), strict=True)}
        self.memory.observe_many([{"text": o.text, "block": "semantic", "key": key,
                                   "source": o.evidence[0] if o.evidence else None}
                                  for o, key in zip(conv.gold_facts,
                                                    gold_keys(conv.gold_facts), strict=True)])

    def memory_lines(self, obs: Any) -> list[dict[str, Any]]:
        """The k best current facts, shown as the closed loop shows its own (`LoopConfig`'s
        defaults: a question about the past gets a changed fact's earlier version in its place,
        `history_lines`), so that the bound differs from `mags` in its writes alone. (Until
        2026-11-30 it showed the k best facts superseded ones included and marked, for every
        question: 26 / 48 current and 10 / 28 earlier values on the persona test split, under
        `mags`'s 32 and 15 once the loop read questions about the past this way.)"""
        from mags_lib.agents.history_lines import earlier_only, history_depth, with_history

        loop = self.loop
        hits = self.memory.recall(obs.text, self.k, learn=False)
        lines = with_history(self.memory, hits,
                             history_depth(obs.text, loop.versions, loop.past_versions),
                             self.day.get,
                             earlier_only(obs.text, loop.past_versions, loop.past_lines))
        return [{"id": x["id"], "sources": list(x["sources"]), "valid": x["valid"],
                 "text": x["text"]} for x in lines]

    def memory_size(self) -> int:
        return len(self.memory)

    def memory_nodes(self) -> list[dict[str, Any]]:
        from mags_lib.agents.memory_agent import node_list

        return node_list(self.memory)


ABLATED = "/no_"
"""Joins an agent and a mechanism it reads without: 'mags_episodic/no_hebbian'."""


def ablated_name(agent: str, mechanism: str) -> str:
    """The agent name under which `agent` reads with `mechanism` (`agents.MECHANISMS`) off.

    >>> ablated_name("mags", "hebbian"), split_ablated("mags/no_hebbian"), split_ablated("mags")
    ('mags/no_hebbian', ('mags', 'hebbian'), ('mags', None))
    """
    return f"{agent}{ABLATED}{mechanism}"


def split_ablated(name: str) -> tuple[str, str | None]:
    """(agent, mechanism switched off or None) of an agent name; see `ablated_name`."""
    agent, sep, mechanism = name.partition(ABLATED)
    return (agent, mechanism) if sep else (name, None)


def reader(name: str, conv: Dialogue, llm: Any, cfg: ConversationEvalConfig,
           embedder: Any, roles: dict[str, Any] | None = None) -> Any:
    """`name`'s memory after reading every turn of `conv` ('agent/no_<mechanism>': the agent
    with that mechanism of its memory switched off, `ablated_name`)."""
    from mags_lib.memory import MemoryConfig

    if name == "gold_writes":
        return GoldWritesMemory(conv, embedder, cfg.k, MemoryConfig.from_dict(cfg.memory))
    from mags_lib.agents import LOOP_AGENTS, make_agent

    agent_name, off = split_ablated(name)
    extra: dict[str, Any] = {"embedder": embedder}
    if agent_name.startswith("mags") or agent_name == "mem0":
        extra.update(roles=roles or {}, memory=cfg.memory)
    if agent_name in LOOP_AGENTS:
        extra["loop"] = cfg.loop
    if off is not None:
        extra["ablate"] = off
    agent = make_agent(agent_name, llm, k=cfg.k, max_tokens=cfg.max_tokens,
                       context_window=cfg.context_window, **extra)
    agent.reset(cfg.seed)
    for obs in conv.stream():
        agent.observe(obs)
    return agent


def question_sample(conv: Dialogue, cfg: ConversationEvalConfig) -> list[int]:
    """Indices of the questions asked: all, or a seeded sample kept in file order."""
    every = list(range(len(conv.qa)))
    if cfg.max_questions is None or cfg.max_questions >= len(every):
        return every
    rng = random.Random(f"{cfg.seed}:{conv.sample_id}")
    return sorted(rng.sample(every, cfg.max_questions))


def answer_rows(conv: Dialogue, name: str, memory: Any, llm: Any,
                cfg: ConversationEvalConfig) -> list[dict[str, Any]]:
    """One row per asked question: the gold, the prediction, the lines (as the reader saw
    them: a `timeline`), the scores."""
    from mags_lib.agents.open_answer import answer_open, timeline
    from mags_lib.tasks.base import Observation

    ids = conv.stream_ids()
    size = memory.memory_size() if hasattr(memory, "memory_size") else None
    listed = getattr(memory, "memory_nodes", None)
    rows = []
    for i in question_sample(conv, cfg):
        qa = conv.qa[i]
        t0 = time.perf_counter()
        shown = memory.memory_lines(Observation(qa.asked(), turn=len(ids), kind="question"))
        lines = [line["text"] for line in shown]
        prediction, record = answer_open(llm, lines, qa.asked(), max_tokens=cfg.max_tokens,
                                         seed=cfg.seed)
        seconds = round(time.perf_counter() - t0, 3)
        stage = failure_stage(qa, prediction, lines, listed() if callable(listed)
                              and qa.kind in FACT_KINDS else None)
        rows.append({"agent": name, "conversation": conv.sample_id, "question": i,
                     "category": qa.category, "kind": qa.kind, "text": qa.question,
                     "gold": qa.answer, "prediction": prediction, "raw": record["raw"],
                     "lines": timeline(lines), "memory_size": size,
                     "seconds": seconds, "stage": stage,
                     **score_row(qa, prediction),
                     **evidence_row(qa, shown, ids, cfg.k)})
    return rows


def line_turns(sources: list[Any], ids: list[str]) -> list[str]:
    """The turn ids ('D<s>:<t>') a memory line comes from: a stream position (`int`, or
    'turn:<i>' as the memory agents write it) is mapped through `ids`; a turn id is kept;
    anything else (a working-memory line, a node id) names no turn.

    >>> line_turns([1, "turn:0", "D2:5", "working", "turn:9"], ["D1:1", "D1:2"])
    ['D1:2', 'D1:1', 'D2:5']
    """
    out = []
    for s in sources:
        text = str(s)
        pos = text.removeprefix("turn:")
        if isinstance(s, int) or (text.startswith("turn:") and pos.isdigit()):
            i = int(pos)
            if 0 <= i < len(ids):
                out.append(ids[i])
        elif text.startswith("D") and ":" in text:
            out.append(text)
    return out


def evidence_row(qa: Any, shown: list[dict[str, Any]], ids: list[str],
                 k: int) -> dict[str, Any]:
    """recall@k of the question's evidence among the turns the agent's best k lines come from
    (the lines are best last), for each k of `evidence_recall.KS` up to the lines shown;
    nothing where the question has no evidence or the agent's lines name no sources."""
    if not qa.evidence or not any(line.get("sources") for line in shown):
        return {}
    out: dict[str, Any] = {}
    for cut in (c for c in KS if c <= k):
        best = shown[-cut:]
        out[f"recall@{cut}"] = recall_at(
            [t for line in best for t in line_turns(line.get("sources") or [], ids)],
            qa.evidence)
    return out


def score_row(qa: Any, prediction: str) -> dict[str, Any]:
    """F1 and exact match where there is an answer, whether the prediction abstained."""
    out: dict[str, Any] = {"abstained": abstained(prediction)}
    if qa.answer is not None and qa.category != 5:
        out["f1"] = qa_f1(prediction, qa.answer, qa.category)
        out["em"] = float(exact_match(prediction, qa.answer))
    return out


def summarize(rows: list[dict[str, Any]], qas: dict[tuple[str, int], Any]) -> dict[str, Any]:
    """Per-agent scores with 95% intervals (bootstrap over conversations)."""
    out: dict[str, Any] = {}
    for name in dict.fromkeys(r["agent"] for r in rows):
        mine = [r for r in rows if r["agent"] == name]
        answerable = [r for r in mine if "f1" in r]
        unanswerable = [r for r in mine if r["category"] == 5 or r["gold"] is None]
        entry: dict[str, Any] = {"questions": len(mine),
                                 "conversations": len({r["conversation"] for r in mine}),
                                 "upper_bound": name in UPPER_BOUNDS}
        for key in ("f1", "em"):
            if answerable:
                entry[key] = sum(r[key] for r in answerable) / len(answerable)
                entry[f"{key}_ci95"] = bootstrap_by_conversation(answerable, key)
        by_cat = {}
        for c in sorted({r["category"] for r in answerable}):
            group = [r["f1"] for r in answerable if r["category"] == c]
            by_cat[str(c)] = sum(group) / len(group)
        entry["f1_by_category"] = by_cat
        for cut in KS:
            key = f"recall@{cut}"
            found = [r for r in mine if key in r]
            if found:
                entry[key] = sum(r[key] for r in found) / len(found)
                entry[f"{key}_ci95"] = bootstrap_by_conversation(found, key)
                entry[f"{key}_by_category"] = {
                    str(c): sum(r[key] for r in found if r["category"] == c)
                    / sum(1 for r in found if r["category"] == c)
                    for c in sorted({r["category"] for r in found})}
        if unanswerable:
            entry["abstention_unanswerable"] = (sum(r["abstained"] for r in unanswerable)
                                                / len(unanswerable))
        if answerable:
            entry["abstention_answerable"] = (sum(r["abstained"] for r in answerable)
                                              / len(answerable))
        if any(r["kind"] for r in mine):
            entry["persona"] = persona_scores(
                {"qa": qas[(r["conversation"], r["question"])], "prediction": r["prediction"]}
                for r in mine if r["kind"])
            entry["persona_ci95"] = persona_intervals(mine, qas)
        stages = stage_counts(mine).get(name)
        if stages:
            entry["stages"] = stages
        sizes = [r["memory_size"] for r in mine if r["memory_size"] is not None]
        entry["memory_size_mean"] = sum(sizes) / len(sizes) if sizes else None
        entry["lines_mean"] = sum(len(r["lines"]) for r in mine) / max(1, len(mine))
        entry["seconds_mean"] = sum(r["seconds"] for r in mine) / max(1, len(mine))
        out[name] = entry
    return out


def persona_intervals(rows: list[dict[str, Any]],
                      qas: dict[tuple[str, int], Any]) -> dict[str, list[float | None]]:
    """95% interval of each persona rate (`qa_metrics.PERSONA_RATES`), by bootstrap over
    conversations (`bootstrap_by_conversation`): [None, None] where fewer than two hold
    questions of its kind."""
    flagged: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if not r["kind"]:
            continue
        flags = persona_flags(qas[(r["conversation"], r["question"])], r["prediction"])
        for key, hit in flags.items():
            flagged.setdefault(key, []).append({"conversation": r["conversation"],
                                                key: float(hit)})
    return {key: list(bootstrap_by_conversation(group, key))
            for key, group in flagged.items()}


BOUNDED: dict[str, str] = {"f1": "F1", "current_accuracy": "current", "earlier_accuracy": "earlier"}
"""Scores (summary key or persona-rate key -> label) on which an upper bound must lead."""


def bound_breaches(summary: dict[str, Any]) -> list[str]:
    """Where an agent scores above an upper bound of the same run (an upper bound it beats is
    not a bound; the caller says why): one sentence each.

    >>> bound_breaches({"gold_writes": {"upper_bound": True, "f1": 0.5,
    ...                                 "persona": {"current_accuracy": 0.56}},
    ...                 "mags": {"upper_bound": False, "f1": 0.4,
    ...                          "persona": {"current_accuracy": 0.60}}})
    ['`mags` is above the upper bound `gold_writes` on current (0.600 > 0.560)']
    """
    def score(entry: dict[str, Any], key: str) -> float | None:
        return entry.get(key) if key in entry else (entry.get("persona") or {}).get(key)

    out = []
    for bound, b in summary.items():
        if not b.get("upper_bound"):
            continue
        for name, a in summary.items():
            if a.get("upper_bound"):
                continue
            for key, label in BOUNDED.items():
                mine, cap = score(a, key), score(b, key)
                if mine is not None and cap is not None and mine > cap:
                    out.append(f"`{name}` is above the upper bound `{bound}` on {label} "
                               f"({mine:.3f} > {cap:.3f})")
    return out


def run_conversation_eval(convs: list[Dialogue], llm: Any, cfg: ConversationEvalConfig,
                          *, embedder: Any = None, roles: dict[str, Any] | None = None,
                          progress: Any = None) -> dict[str, Any]:
    """Every agent of `cfg` on every conversation: {"config", "rows", "summary", "seconds"}."""
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    reads: list[dict[str, Any]] = []
    for conv in convs:
        for name in cfg.agents:
            t1 = time.perf_counter()
            memory = reader(name, conv, llm, cfg, embedder, roles)
            seconds = time.perf_counter() - t1
            rows += answer_rows(conv, name, memory, llm, cfg)
            # counted after the answers, so the loop's ask calls are in its counts too
            reads.append(read_record(conv, name, memory, seconds))
            if progress is not None:
                progress(f"{conv.sample_id} {name}: {len(rows)} rows")
    qas = {(c.sample_id, i): q for c in convs for i, q in enumerate(c.qa)}
    summary = summarize(rows, qas)
    for name, entry in summary.items():
        entry["writing"] = writing_summary([r for r in reads if r["agent"] == name])
    return {"config": asdict(cfg), "rows": rows, "reads": reads, "summary": summary,
            "seconds": round(time.perf_counter() - t0, 1)}


def read_record(conv: Dialogue, name: str, memory: Any, seconds: float) -> dict[str, Any]:
    """What reading one conversation cost and wrote: seconds a turn, memory size, and the
    agent's own write counts where it keeps them (mem0's ops, the loop's)."""
    turns = len(conv.stream_ids())
    counts = getattr(memory, "counts", None)
    return {"agent": name, "conversation": conv.sample_id, "turns": turns,
            "seconds_per_turn": round(seconds / max(1, turns), 4),
            "memory_size": memory.memory_size() if hasattr(memory, "memory_size") else None,
            "counts": dict(counts) if counts else {},
            "supersession": read_supersession(conv, memory)}


def read_supersession(conv: Dialogue, memory: Any) -> dict[str, int] | None:
    """What the agent's memory retired, against the gold updates, by the turns each node was
    first written from: (turn that stated the old value, turn that replaced it). None for an
    agent without a `LiquidMemory` or a dialogue without gold updates."""
    from mags_lib.evaluation.supersession import gold_source_pairs, supersession_scores

    mem = getattr(memory, "memory", None)
    gold = gold_source_pairs(conv)
    if mem is None or not hasattr(mem, "to_networkx") or not gold:
        return None
    ids = conv.stream_ids()
    s = supersession_scores(mem, gold, by="source",
                            source_name=lambda src: next(iter(line_turns([src], ids)), src))
    return {k: s[k] for k in ("correct", "predicted", "gold")}


def write_validity(counts: dict[str, int]) -> float | None:
    """The share of the writer's outputs that parsed: the Mem0-style agent's lines that parsed
    and named only shown ids, or the loop's write-model calls that parsed; None where the agent
    does not write."""
    if counts.get("lines"):
        return counts.get("valid_lines", 0) / counts["lines"]
    if counts.get("write_calls"):
        return counts.get("write_parsed", 0) / counts["write_calls"]
    return None


def ask_validity(counts: dict[str, int]) -> float | None:
    """The share of the loop's ask-model calls that parsed; None where the agent does not ask."""
    calls = counts.get("ask_calls", 0)
    return 1 - counts.get("ask_malformed", 0) / calls if calls else None


def writing_summary(reads: list[dict[str, Any]]) -> dict[str, Any]:
    """Pooled write counts, supersession against the gold updates (precision, recall) where the
    agent keeps a memory, the share of the model's lines that parsed and named only shown ids
    (write validity) where the agent counts them, and the mean seconds a turn of reading."""
    counts: dict[str, int] = {}
    for r in reads:
        for k, v in r["counts"].items():
            counts[k] = counts.get(k, 0) + int(v)
    sup = [r["supersession"] for r in reads if r.get("supersession")]
    pooled = {k: sum(s[k] for s in sup) for k in ("correct", "predicted", "gold")}
    return {"counts": counts,
            "supersession": {**pooled,
                             "precision": (pooled["correct"] / pooled["predicted"]
                                           if pooled["predicted"] else None),
                             "recall": pooled["correct"] / pooled["gold"] if pooled["gold"]
                             else None} if sup else None,
            "validity": write_validity(counts),
            "ask_validity": ask_validity(counts),
            "seconds_per_turn": (sum(r["seconds_per_turn"] for r in reads) / len(reads)
                                 if reads else None)}
