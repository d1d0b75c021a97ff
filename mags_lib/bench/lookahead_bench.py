"""What guessing ahead by prompt lookup (`LLMConfig.lookahead`) saves the roles, and what it
changes.

    python -m mags_lib.bench lookahead [--source locomo] [--conversation conv-26]
                                       [--turns 100] [--questions 20] [--lookahead 4,8]
                                       [--out results/bench/lookahead.json]

`mags` (the role models as in `bench conversation`: notebook 04's ask and write GGUFs, else the
embedded base model, said so) reads the first `turns` turns of one conversation and is asked up
to `questions` of its questions, with lookahead off; every call of the write and ask models is
recorded (its messages and settings). Each recorded call is then made again on a fresh model
for each setting (0 and every `--lookahead`), the settings taking turns call by call so that
they share the machine's state. For each role and setting: p50 / mean seconds a call, tokens a
reply, prompt tokens a call, the share of replies identical to lookahead 0's (a batch sums the logits in another
order, so a near tie may go another way), the first differing replies, and the p50 speed-up.
The generation cache is off.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any


@dataclass
class LookaheadBenchConfig:
    source: str = field(default="locomo", metadata={"help": "'locomo' or 'persona'"})
    conversation: str = field(default="conv-26", metadata={
        "help": "LoCoMo sample id (a training conversation) or a persona dev seed"})
    turns: int = field(default=100, metadata={"help": "turns read (from the start)"})
    questions: int = field(default=20, metadata={"help": "questions asked at most"})
    lookahead: list[int] = field(default_factory=lambda: [4, 8], metadata={
        "help": "settings of LLMConfig.lookahead compared with 0"})
    models: dict[str, str] = field(default_factory=lambda: {"ask": "auto", "write": "auto"},
                                   metadata={"help": "mags's role models, as EvalConfig.models"})
    threads: int | None = field(default=None, metadata={"help": "llama.cpp threads"})
    examples: int = field(default=5, metadata={"help": "differing replies kept per setting"})


class _Recorder:
    """Passes `chat` calls to `inner` and keeps each call's messages and settings."""

    def __init__(self, inner: Any, role: str, calls: list[dict[str, Any]]):
        self.inner, self.role, self.calls = inner, role, calls
        self.name = inner.name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def chat(self, messages: list[dict[str, str]], **kw: Any) -> Any:
        self.calls.append({"role": self.role, "messages": messages, "kw": kw})
        return self.inner.chat(messages, **kw)


def record_calls(cfg: LookaheadBenchConfig) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The write and ask calls `mags` makes on the conversation, and what was run."""
    from mags_lib.agents import MemoEmbedder, make_agent
    from mags_lib.bench.agent_bench import AgentBenchConfig, role_model_paths
    from mags_lib.bench.conversation_bench import pick_conversation
    from mags_lib.embed import default_embedder
    from mags_lib.game.base import Observation
    from mags_lib.llm import LLMConfig, load_llm

    conv, note = pick_conversation(cfg.source, cfg.conversation)
    base = LLMConfig(model="embedded", n_ctx=1024, cache=False, n_threads=cfg.threads)
    paths, missing = role_model_paths(AgentBenchConfig(models=cfg.models))
    calls: list[dict[str, Any]] = []
    roles = {role: _Recorder(load_llm(replace(base, model=path)), role, calls)
             for role, path in paths.items()}
    agent = make_agent("mags", load_llm(base), k=5, embedder=MemoEmbedder(default_embedder()),
                       roles=roles)
    agent.reset(0)
    observations = conv.stream()[:cfg.turns]
    for obs in observations:
        agent.observe(obs)
    ids = conv.stream_ids()[:cfg.turns]
    asked = [q for q in conv.qa if q.answer is not None and q.evidence
             and set(q.evidence) <= set(ids)][:cfg.questions]
    for qa in asked:
        agent.memory_lines(Observation(qa.asked(), turn=len(observations), kind="question"))
    return calls, {"conversation": conv.sample_id, "role_models": paths,
                   "note": "; ".join(x for x in (note, missing) if x),
                   "turns": len(observations), "questions": len(asked)}


def _p50(values: list[float]) -> float | None:
    import numpy as np

    return round(float(np.percentile(values, 50)), 4) if values else None


def bench_lookahead(cfg: LookaheadBenchConfig) -> dict[str, Any]:
    """Record the roles' calls, replay them under each setting; see the module docstring."""
    from mags_lib.bench.timing import machine_info
    from mags_lib.errors import MagsError
    from mags_lib.llm import LLMConfig, load_llm

    if any(n <= 0 for n in cfg.lookahead):
        raise MagsError(f"lookahead settings {cfg.lookahead} must be positive",
                        "give the settings to compare with 0, e.g. --lookahead 4,8")
    calls, run = record_calls(cfg)
    settings = [0, *cfg.lookahead]
    base = LLMConfig(model="embedded", n_ctx=1024, cache=False, n_threads=cfg.threads)
    roles: dict[str, Any] = {}
    for role, path in run["role_models"].items():
        roles[role] = {n: load_llm(replace(base, model=path, lookahead=n)) for n in settings}
    replies: dict[tuple[str, int], list[tuple[str, float, int]]] = {}
    prompt_tokens: dict[str, list[int]] = {}
    for call in calls:
        for n in settings:
            llm = roles[call["role"]][n]
            t0 = time.perf_counter()
            out = llm.chat(call["messages"], **call["kw"])
            replies.setdefault((call["role"], n), []).append(
                (out.text, time.perf_counter() - t0, int(out.usage.get("completion_tokens", 0))))
            if n == 0:
                prompt_tokens.setdefault(call["role"], []).append(
                    int(out.usage.get("prompt_tokens", 0)))
    by_role: dict[str, Any] = {}
    for role in sorted({c["role"] for c in calls}):
        plain = replies[(role, 0)]
        rows = {}
        for n in settings:
            got = replies[(role, n)]
            seconds = [s for _, s, _ in got]
            differ = [{"lookahead_0": a, f"lookahead_{n}": b}
                      for (a, _, _), (b, _, _) in zip(plain, got, strict=True) if a != b]
            rows[str(n)] = {
                "calls": len(got), "seconds_p50": _p50(seconds),
                "seconds_mean": round(sum(seconds) / len(seconds), 4),
                "tokens_mean": round(sum(t for _, _, t in got) / len(got), 2),
                "prompt_tokens_mean": round(sum(prompt_tokens[role]) / len(got), 1),
                "identical": round(1 - len(differ) / len(got), 4),
                "differing": differ[:cfg.examples]}
        p0 = rows["0"]["seconds_p50"]
        for n in settings[1:]:
            pn = rows[str(n)]["seconds_p50"]
            rows[str(n)]["speedup_p50"] = round(p0 / pn, 3) if p0 and pn else None
        by_role[role] = rows
    return {"config": asdict(cfg), **run, "roles": by_role, "machine": machine_info()}
