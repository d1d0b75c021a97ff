"""Seconds a turn for `mags` to read a conversation, and seconds a question to answer one.

    python -m mags_lib.bench conversation [--source locomo] [--conversation conv-26]
                                          [--turns 200] [--questions 20] [--reader auto]
                                          [--out results/bench/conversation.json]

`mags` (notebook 04's ask and write models; where they are missing, the embedded base model
plays both roles and the JSON says so) reads the first `turns` turns of one conversation, as
notebook 12 feeds it (one dated observation a turn: the write model's call, the memory's write
and step), each turn timed; then answers `questions` of its questions whose evidence lies in
those turns (the ask model, recall, and the free-text answer of `agents/open_answer.py` by
the reader notebooks 12 and 13 answer with: `reader_model`'s 'auto', the trained answer model's
GGUF, else the embedded base model, said so), each timed. Default: LoCoMo's conv-26, a training conversation
(where LoCoMo is absent, the first development persona, said so). Issue 40's targets: p50 at
most 0.5 s a turn and 1.0 s a question on 2 cores. The generation cache is off.
`stages_p50` splits both into the agent's own stages (a turn: the write model's call, the
recall that shows it facts, the memory's write and step; a question: the ask model, recall and
the answer), to show where the time goes.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ConversationBenchConfig:
    source: str = field(default="locomo", metadata={"help": "'locomo' or 'persona'"})
    conversation: str = field(default="conv-26", metadata={
        "help": "LoCoMo sample id (a training conversation) or a persona dev seed"})
    turns: int = field(default=200, metadata={"help": "turns read (from the start)"})
    questions: int = field(default=20, metadata={"help": "questions answered at most"})
    models: dict[str, str] = field(default_factory=lambda: {"ask": "auto", "write": "auto"},
                                   metadata={"help": "mags's role models, as EvalConfig.models"})
    reader: str = field(default="auto", metadata={
        "help": "the answer model: 'auto' (as notebooks 12 and 13: the trained answer model's "
                "GGUF, else the embedded base model), 'embedded', or a .gguf path"})
    threads: int | None = field(default=None, metadata={"help": "llama.cpp threads"})
    turn_target_s: float = field(default=0.5, metadata={"help": "p50 seconds a turn at most"})
    question_target_s: float = field(default=1.0, metadata={
        "help": "p50 seconds a question at most"})


def _conversation(cfg: ConversationBenchConfig) -> tuple[Any, str]:
    from mags_lib.conversations.persona import SEEDS, make_persona
    from mags_lib.tasks.registry import get_task

    locomo = get_task("locomo")
    if cfg.source == "locomo" and locomo.available():
        split = next(s for s in ("train", "test") if cfg.conversation in locomo.ids(s))
        return locomo.episodes(split, ids=[cfg.conversation])[0], ""
    seed = int(cfg.conversation) if cfg.conversation.isdigit() else SEEDS["dev"][0]
    note = "LoCoMo is absent: a development persona instead" if cfg.source == "locomo" else ""
    return make_persona(seed, "dev"), note


def _stages(timings: list[dict[str, float]]) -> dict[str, float | None]:
    """p50 seconds of each stage the agent timed (write call, recall, ask, answer...)."""
    names = sorted({k for t in timings for k in t})
    return {k: _p([t.get(k, 0.0) for t in timings], 50) for k in names}


def _p(values: list[float], q: float) -> float | None:
    import numpy as np

    return round(float(np.percentile(values, q)), 4) if values else None


def bench_conversation(cfg: ConversationBenchConfig) -> dict[str, Any]:
    """Read and answer with `mags`, timing each turn and question; see the module docstring."""
    from dataclasses import replace

    from mags_lib.agents import MemoEmbedder, make_agent
    from mags_lib.agents.open_answer import answer_open
    from mags_lib.bench.agent_bench import AgentBenchConfig, role_model_paths
    from mags_lib.bench.timing import machine_info
    from mags_lib.embed import default_embedder
    from mags_lib.evaluation.conversation_study import reader_model
    from mags_lib.game.base import Observation
    from mags_lib.llm import LLMConfig, load_llm
    from mags_lib.rss import peak_rss_mb

    conv, note = _conversation(cfg)
    base = LLMConfig(model="embedded", n_ctx=1024, cache=False, n_threads=cfg.threads)
    llm = load_llm(base)
    paths, missing = role_model_paths(AgentBenchConfig(models=cfg.models))
    roles = {role: llm if path == "embedded" else load_llm(replace(base, model=path))
             for role, path in paths.items()}
    reader, reader_note = reader_model(cfg.reader)
    answer_llm = llm if reader == "embedded" else load_llm(replace(base, model=reader))
    agent = make_agent("mags", llm, k=5, embedder=MemoEmbedder(default_embedder()), roles=roles)
    agent.reset(0)
    observations = conv.stream()[:cfg.turns]
    read = {o.turn for o in observations}
    ids = conv.stream_ids()[:cfg.turns]
    turn_s, turn_stages = [], []
    for obs in observations:
        t0 = time.perf_counter()
        agent.observe(obs)
        turn_s.append(time.perf_counter() - t0)
        turn_stages.append(dict(getattr(agent, "last_timing", {}) or {}))
    asked = [q for q in conv.qa if q.answer is not None and q.evidence
             and set(q.evidence) <= set(ids)][:cfg.questions]
    question_s, question_stages = [], []
    for qa in asked:
        t0 = time.perf_counter()
        lines = [x["text"] for x in agent.memory_lines(Observation(qa.asked(), turn=len(read),
                                                                   kind="question"))]
        t1 = time.perf_counter()
        answer_open(answer_llm, lines, qa.asked(), max_tokens=24, seed=0)
        question_s.append(time.perf_counter() - t0)
        question_stages.append({**{k: v for k, v in (getattr(agent, "last_timing", {}) or {})
                                   .items() if k in ("ask", "recall")},
                                "answer": time.perf_counter() - t1})
    turn_p50, question_p50 = _p(turn_s, 50), _p(question_s, 50)
    return {"config": asdict(cfg), "conversation": conv.sample_id, "note": "; ".join(
                x for x in (note, missing) if x), "role_models": paths,
            "reader": {"model": reader, "what": reader_note},
            "turns": len(turn_s), "questions": len(question_s),
            "turn_s": {"p50": turn_p50, "p95": _p(turn_s, 95)},
            "question_s": {"p50": question_p50, "p95": _p(question_s, 95)},
            "stages_p50": {"turn": _stages(turn_stages), "question": _stages(question_stages)},
            "memory_size": agent.memory_size() if hasattr(agent, "memory_size") else None,
            "targets": {"turn_p50": {"limit_s": cfg.turn_target_s, "value": turn_p50,
                                     "met": turn_p50 is not None and turn_p50 <= cfg.turn_target_s},
                        "question_p50": {"limit_s": cfg.question_target_s, "value": question_p50,
                                         "met": question_p50 is not None
                                         and question_p50 <= cfg.question_target_s}},
            "peak_rss_mb": round(peak_rss_mb(), 1), "machine": machine_info()}
