"""The agent interface every agent implements, on every task; its config; the decision record.

An agent reads every turn and answers the decision turns:

    agent.attach(env)          # only the oracle reads the env (its current rules)
    agent.reset(seed)
    agent.observe(obs, reward=None, info=None)     # every turn, decision turns included
    decision = agent.act(obs)                      # decision turns, after observe(obs)
    decision.action, decision.recalled, decision.prompt

The reward of a decision arrives with the next observation (the feedback turn), as
`observe(feedback, reward=1.0)`. `Agent.act` is shared: it asks the subclass for its memory
lines (`memory_lines`, as `Recalled` records, most relevant LAST) and lets the one decision
prompt of `prompt.py` choose, so agents differ only in what they remember.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from mags_lib.agents.prompt import PROMPT_FORMATS, decide
from mags_lib.errors import MagsError
from mags_lib.tasks.base import Observation


@dataclass
class AgentConfig:
    k: int = field(default=3, metadata={
        "help": "memory lines in the decision prompt (recalled texts, retrieved texts, rules)"})
    prompt_format: str = field(default="completion", metadata={
        "help": "'completion' (plain continuation, default: the 135M model follows rules only "
                "this way) or 'chat'"})
    answer_tags: bool = field(default=False, metadata={
        "help": "answer as <answer>item</answer> (the format of the answer model trained in "
                "notebook 02; use it when the decision LLM is that model)"})
    max_tokens: int = field(default=8, metadata={
        "help": "new tokens allowed for the answer (the grammar stops after the item)"})
    context_window: int | None = field(default=None, metadata={
        "help": "full_context: tokens of the model's window (None = the LLM's n_ctx)"})
    context_margin: int = field(default=48, metadata={
        "help": "full_context: tokens kept free besides the question and the answer"})
    remember_questions: bool = field(default=False, metadata={
        "help": "static_rag / mags also store the decision questions (they carry no answer "
                "and crowd out the rules; full_context always keeps the whole transcript)"})
    seed: int = field(default=0, metadata={
        "help": "LLM sampling seed (with temperature > 0 the decision of turn t samples with "
                "seed + t, the same stream for every agent)"})
    temperature: float = field(default=0.0, metadata={
        "help": "decision sampling temperature: 0 is greedy (the default); the TextWorld "
                "evaluation samples (0.7), because a greedy choice repeats itself in a room it "
                "came back to and walks in circles"})

    debias_order: bool = field(default=False, metadata={
        "help": "choose the legal action by its mean log-probability over every rotation of "
                "the options' order in the question (option_order.py), not by one greedy "
                "answer: the 135M answer model, unsure, names the option mentioned last; "
                "completion format and temperature 0 only, 2-3x the decision's LLM time"})

    def __post_init__(self) -> None:
        if self.debias_order:
            from mags_lib.agents.option_order import check_settings

            check_settings(self.prompt_format, self.temperature, "AgentConfig.debias_order")
        if self.k < 0:
            raise MagsError(f"AgentConfig.k = {self.k} is negative", "use k >= 0 (e.g. 3)")
        if not 0.0 <= self.temperature <= 2.0:
            raise MagsError(f"AgentConfig.temperature = {self.temperature} is out of range",
                            "use 0 (greedy) to 2")
        if self.prompt_format not in PROMPT_FORMATS:
            raise MagsError(f"unknown prompt format {self.prompt_format!r}",
                            f"use one of {', '.join(PROMPT_FORMATS)}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Decision:
    """One answer and its explanation. `recalled` holds what the prompt's memory lines came
    from (id, text, score, sources, path), in prompt order (most relevant last); `seconds` is
    memory time + LLM time (the LLM's own time, also for answers served from the cache)."""

    action: str | None
    prompt_tokens: int
    seconds: float
    recalled: list[dict[str, Any]]
    prompt: str
    llm_seconds: float = 0.0
    memory_seconds: float = 0.0
    cached: bool = False
    raw: str = ""
    scores: dict[str, float] | None = None  # AgentConfig.debias_order: each option's mean log-prob

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def memory_reward(reward: float | None) -> float | None:
    """A game's reward as the memory's `step` takes it: 0 / 1 (wrong / right) to -1 / +1. A
    score delta beyond that (TextWorld's 2-point step, a lost point) is clipped here, on
    purpose: the memory refuses rewards outside [-1, 1].

    >>> memory_reward(1.0), memory_reward(0.0), memory_reward(2.0), memory_reward(-1.0)
    (1.0, -1.0, 1.0, -1.0)
    """
    return None if reward is None else max(-1.0, min(1.0, 2.0 * float(reward) - 1.0))


def recalled(node_id: Any, text: str, *, score: float | None = None,
             sources: list[Any] | None = None, path: list[Any] | None = None,
             valid: bool = True) -> dict[str, Any]:
    """One explainability entry: where a memory line came from."""
    return {"id": node_id, "text": text, "score": score, "sources": list(sources or []),
            "path": list(path or [node_id]), "valid": valid}


class Agent:
    """Base class: shared `act`; subclasses implement `reset`, `observe`, `memory_lines`."""

    name = "agent"

    def __init__(self, llm: Any, config: AgentConfig | None = None):
        self.llm = llm
        self.config = config or AgentConfig()

    def attach(self, env: Any) -> None:
        """Called by the runner before `reset`; only agents that read the env use it."""

    def reset(self, seed: int) -> None:
        raise NotImplementedError

    def observe(self, obs: Observation, reward: float | None = None,
                info: dict[str, Any] | None = None) -> None:
        raise NotImplementedError

    def memory_lines(self, obs: Observation) -> list[dict[str, Any]]:
        """`recalled(...)` entries for the prompt, most relevant last."""
        raise NotImplementedError

    def memory_size(self) -> int:
        """Items held (nodes, documents, transcript lines); 0 for no memory."""
        return 0

    def memory_nodes(self) -> list[dict[str, Any]] | None:
        """Stored texts with their validity ({"text", "valid"}), or None where the notion
        does not apply; used for update fidelity."""
        return None

    def act(self, obs: Observation) -> Decision:
        if not obs.legal_actions:
            raise MagsError(f"act() on turn {obs.turn} ({obs.kind}), which has no legal actions",
                            "call act() only on decision turns")
        t0 = time.perf_counter()
        lines = self.memory_lines(obs)
        memory_seconds = time.perf_counter() - t0
        cfg = self.config
        choice = decide(self.llm, [r["text"] for r in lines], obs.text, obs.legal_actions,
                        prompt_format=cfg.prompt_format, max_tokens=cfg.max_tokens,
                        answer_tags=cfg.answer_tags, temperature=cfg.temperature,
                        seed=cfg.seed + obs.turn if cfg.temperature > 0 else cfg.seed,
                        debias_order=cfg.debias_order)
        return Decision(action=choice.action, prompt_tokens=choice.prompt_tokens,
                        seconds=memory_seconds + choice.llm_seconds, recalled=lines,
                        prompt=choice.prompt, llm_seconds=choice.llm_seconds,
                        memory_seconds=memory_seconds, cached=choice.cached, raw=choice.text,
                        scores=choice.scores)
