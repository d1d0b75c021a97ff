"""The agents on generated TextWorld games, the closed loop included (notebook 10).

TextWorld (coin collector, treasure hunter) has no rules that drift: memory matters for the
objective (stated once, at the start), where things are and which rooms were visited. Every
agent plays the same generated games (`game.textworld_env`, `tw-make` offline, cached; each
observation cleaned of the z-machine's status line and ending with the admissible commands)
through the same decision step as the senseless game: the decision LLM picks one of the
admissible commands under a grammar. The default decision LLM is the embedded base model: the
answer model trained in notebook 02 on the senseless game's two-option turns followed the
oracle's hint on 3 of 24 level-5 states, the base model on 16 (`tools/textworld_decision_probe.py`).
Every TextWorld turn is a decision that also informs, so memory agents store decision turns
(`remember_questions`): `static_rag` indexes each, and `mags`, the closed loop, runs its write
model on each before ask + answer: MAGS's trained ask and write models drive its memory, on
text they were never trained on. `oracle` is shown the winning commands from the current state
(TextWorld's own policy), last in its prompt: the ceiling.

Per game: the score as a share of the game's maximum, won or not, steps used. Per (kind, level,
agent): the mean normalised score with a 95% t interval over seeds, wins, mean steps with
their interval; per agent, the same pooled over every game.

    cfg = TextWorldEvalConfig(smoke=True)
    result = run_textworld_eval(cfg)     # result["rows"], result["games"]
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from statistics import mean
from typing import Any

from mags_lib.errors import MagsError

TEXTWORLD_AGENTS = ("bare", "full_context", "static_rag", "mags", "mags_prompted", "oracle")


@dataclass
class TextWorldEvalConfig:
    kinds: list[str] = field(default_factory=lambda: ["coin_collector", "treasure_hunter"],
                             metadata={"help": "TextWorld challenges (tw-make)"})
    levels: list[int] = field(default_factory=lambda: [5, 10], metadata={
        "help": "difficulty levels: bigger worlds and longer quests as the level grows (level "
                "1 is one command; 5 and 10 need 3-5 and 5-10)"})
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2], metadata={
        "help": "tw-make seeds: one generated game each"})
    agents: list[str] = field(default_factory=lambda: ["bare", "full_context", "static_rag",
                                                       "mags", "oracle"], metadata={
        "help": f"agents, from {TEXTWORLD_AGENTS}"})
    max_steps: int = field(default=30, metadata={"help": "steps per game before it ends"})
    decision_llm: str = field(default="embedded", metadata={
        "help": "'embedded' (the base model: default, because the answer model trained on "
                "the senseless game's two-option turns follows a TextWorld hint far less "
                "often, see tools/textworld_decision_probe.py), 'auto' (that trained model's "
                "GGUF) or a .gguf path"})
    models: dict[str, str] = field(default_factory=lambda: {"ask": "auto", "write": "auto"},
                                   metadata={"help": "the closed loop's role models"})
    k: int = field(default=3, metadata={"help": "memory lines recalled per decision"})
    remember_questions: bool = field(default=True, metadata={
        "help": "memory agents store decision turns too (every TextWorld turn is a decision "
                "and carries the room, the objective, the inventory; the loop then runs its "
                "write model on it before ask + answer)"})
    temperature: float = field(default=0.7, metadata={
        "help": "decision sampling temperature, the same for every agent (turn t samples with "
                "seed t): greedy choices walk in circles (the oracle, greedy, won no level-5 "
                "game; at 0.7 it won 6 of 6)"})
    show_commands: bool = field(default=True, metadata={
        "help": "each observation ends with the admissible commands (TextWorldConfig)"})
    embedder: str = field(default="embedded", metadata={
        "help": "'embedded' (all-MiniLM-L6-v2) or 'hashing' (fast fake, tests)"})
    smoke: bool = field(default=False, metadata={
        "help": "one kind, level 1, one seed, 8 steps"})

    def __post_init__(self) -> None:
        bad = [a for a in self.agents if a not in TEXTWORLD_AGENTS]
        if bad:
            raise MagsError(f"TextWorldEvalConfig.agents has unknown entries {bad}",
                            f"use some of {', '.join(TEXTWORLD_AGENTS)}")
        if not 0.0 <= self.temperature <= 2.0:
            raise MagsError(f"TextWorldEvalConfig.temperature = {self.temperature} is out of "
                            "range", "use 0 (greedy) to 2 (notebook 10: 0.7)")
        if self.max_steps < 1 or not self.seeds or not self.levels:
            raise MagsError("TextWorldEvalConfig needs max_steps >= 1, seeds and levels",
                            "set max_steps, seeds and levels")

    def resolved(self) -> TextWorldEvalConfig:
        if not self.smoke:
            return self
        return replace(self, kinds=self.kinds[:1], levels=[min(self.levels)],
                       seeds=self.seeds[:1], max_steps=min(self.max_steps, 8))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize_textworld(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (kind, level, agent): mean normalised score with its t interval over seeds, wins,
    mean steps with their t interval; then per agent a pooled row over every game (kind "all",
    level None), where the interval is over all its games.

    >>> rows = summarize_textworld([{"kind": "coin_collector", "level": 5, "agent": "bare",
    ...     "normalized_score": 0.0, "won": False, "steps": 30}])
    >>> [(r["kind"], r["level"], r["wins"], r["steps"]) for r in rows]
    [('coin_collector', 5, 0, 30), ('all', None, 0, 30)]
    """
    from mags_lib.evaluation.metrics import t_interval

    def row(kind: str, level: int | None, agent: str, gs: list[dict[str, Any]]
            ) -> dict[str, Any]:
        scores = [g["normalized_score"] for g in gs]
        steps = [g["steps"] for g in gs]
        lo, hi = t_interval(scores)
        lo, hi = (None, None) if lo is None else (max(0.0, lo), min(1.0, hi))
        s_lo, s_hi = t_interval(steps)
        s_lo = None if s_lo is None else max(0.0, s_lo)  # a t interval can reach below 0
        return {"kind": kind, "level": level, "agent": agent, "n_seeds": len(gs),
                "score": mean(scores), "ci_low": lo, "ci_high": hi,
                "wins": sum(g["won"] for g in gs), "steps": mean(steps),
                "steps_ci_low": s_lo, "steps_ci_high": s_hi}

    by: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    per_agent: dict[str, list[dict[str, Any]]] = {}
    for g in games:
        by.setdefault((g["kind"], g["level"], g["agent"]), []).append(g)
        per_agent.setdefault(g["agent"], []).append(g)
    rows = [row(kind, level, agent, gs) for (kind, level, agent), gs in sorted(by.items())]
    return rows + [row("all", None, agent, gs) for agent, gs in sorted(per_agent.items())]


def run_textworld_eval(cfg: TextWorldEvalConfig, *, llm: Any | None = None,
                       roles: dict[str, Any] | None = None,
                       embedder: Any | None = None) -> dict[str, Any]:
    """Every agent on every generated game; see the module docstring."""
    from mags_lib.agents import MemoEmbedder, make_agent
    from mags_lib.evaluation.answer_model import decision_llm_settings
    from mags_lib.evaluation.config import EvalConfig
    from mags_lib.evaluation.runner import _embedder, load_role_llms, run_game
    from mags_lib.game.textworld_env import TextWorldConfig, TextWorldEnv
    from mags_lib.llm import LLMConfig, load_llm
    from mags_lib.progress import progress

    t0 = time.perf_counter()
    cfg = cfg.resolved()
    decision = decision_llm_settings(cfg.decision_llm)
    if llm is None:
        llm = load_llm(LLMConfig(model=decision["model"], n_ctx=2048))
    if roles is None:
        roles = load_role_llms(EvalConfig(agents=list(cfg.agents), models=dict(cfg.models)))
    embedder = embedder or MemoEmbedder(_embedder(cfg.embedder))
    games: list[dict[str, Any]] = []
    todo = [(kind, level, seed, agent) for kind in cfg.kinds for level in cfg.levels
            for seed in cfg.seeds for agent in cfg.agents]
    for kind, level, seed, agent_name in progress(todo, "textworld games"):
        env = TextWorldEnv(TextWorldConfig(kind=kind, level=level, seed=seed,
                                           max_steps=cfg.max_steps,
                                           show_commands=cfg.show_commands))
        try:
            agent = make_agent(agent_name, llm, k=cfg.k, env=env, embedder=embedder,
                               roles=roles, answer_tags=decision["answer_tags"],
                               remember_questions=cfg.remember_questions,
                               temperature=cfg.temperature)
            record = run_game(agent, env, seed, name=agent_name)
            games.append({"kind": kind, "level": level, "seed": seed, "agent": agent_name,
                          "score": env.score, "max_score": env.max_score,
                          "normalized_score": env.score / env.max_score,
                          "won": env.won,
                          "steps": record.n_turns, "seconds": record.seconds,
                          "loop": record.loop})
        finally:
            env.close()
    return {"config": cfg.to_dict(), "decision_llm": decision["note"], "games": games,
            "rows": summarize_textworld(games), "seconds": round(time.perf_counter() - t0, 1)}


def textworld_markdown(rows: list[dict[str, Any]]) -> str:
    """The per (kind, level, agent) table, the pooled rows (every game of an agent) last."""
    def f(x: Any, digits: int = 2) -> str:
        return "–" if x is None else f"{x:.{digits}f}"

    lines = ["| game | level | agent | score / max | 95% CI | won | steps | 95% CI |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        label = r["agent"] + (" (ceiling)" if r["agent"] == "oracle" else "")
        game = "**all games**" if r["kind"] == "all" else r["kind"]
        level = "–" if r["level"] is None else r["level"]
        lines.append(f"| {game} | {level} | {label} | {f(r['score'])} | "
                     f"[{f(r['ci_low'])}, {f(r['ci_high'])}] | {r['wins']}/{r['n_seeds']} | "
                     f"{r['steps']:.1f} | [{f(r.get('steps_ci_low'), 1)}, "
                     f"{f(r.get('steps_ci_high'), 1)}] |")
    return "\n".join(lines)
