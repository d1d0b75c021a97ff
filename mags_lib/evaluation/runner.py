"""Play games with agents and keep every decision: `run_game` (one game) and `run_eval` (all).

    from mags_lib.evaluation import EvalConfig, run_eval
    result = run_eval(EvalConfig(smoke=True))
    result.summary["oracle_vs_bare_gap"], result.summary["evaluation_valid"]

`run_eval` loops seeds x agents (all agents on seed 0 first, so a stopped run already compares
them), appends each finished game to `results/<output>/games.jsonl`, writes the explainability
records of every decision (prompt, recalled nodes with paths) to `explain/{agent}_{seed}.jsonl`,
and at the end `metrics.json` (the summary, oracle-bare gap first) and `config.json`. With
`resume=True` it skips games already in the file under the same `config_id`. A backend that
fails mid-game raises MagsError naming the agent, the seed and the turn; the finished games
stay in the file.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mags_lib.agents.registry import PROMPTED_AGENTS, TRAINED_LOOP_AGENTS
from mags_lib.atomic import write_text
from mags_lib.errors import MagsError
from mags_lib.evaluation.config import EvalConfig
from mags_lib.evaluation.records import (
    GameRecord,
    append_jsonl,
    decision_record,
    finished_games,
    read_jsonl,
    states_rule,
    write_jsonl,
)


@dataclass
class EvalResult:
    """The games played (resumed ones included), their summary, where the files are."""

    config: EvalConfig
    games: list[GameRecord]
    summary: dict[str, Any]
    out_dir: Path
    seconds: float

    @property
    def games_path(self) -> Path:
        return self.out_dir / "games.jsonl"


def run_game(agent: Any, env: Any, seed: int, *, name: str | None = None,
             config_id: str = "", explain_path: Path | None = None,
             max_turns: int | None = None,
             on_turn: Callable[[Any, Any, Any, bool | None], None] | None = None) -> GameRecord:
    """Play one game of `env` (reset with `seed`) with `agent`; see the module docstring.
    `on_turn(agent, truth, decision, correct)` runs after every turn (decision and correct are
    None on information turns), e.g. to trace the memory (`evaluation.graph_study`)."""
    from mags_lib.seed import seed_everything

    name = name or getattr(agent, "name", type(agent).__name__)
    seed_everything(seed)
    t0 = time.perf_counter()
    agent.attach(env)
    agent.reset(seed)
    obs = env.reset(seed)
    reward: float | None = None
    info: dict[str, Any] | None = None
    decisions: list[dict[str, Any]] = []
    explain: list[dict[str, Any]] = []
    versions: dict[str, list[str]] = {}
    fidelity: dict[str, int] = {}
    turns, done = 0, False
    while not done and (max_turns is None or turns < max_turns):
        truth = env.ground_truth()
        _note_version(versions, truth)
        decision = None
        with _blame(name, seed, obs.turn):
            agent.observe(obs, reward=reward, info=info)
            if obs.legal_actions:
                decision = agent.act(obs)
        _score_write(fidelity, agent, truth, obs.turn)
        result = env.step(decision.action if decision else None)
        if decision is not None:
            if "chosen" in result.info:  # the senseless game: reward 1 for the rule's item
                chosen, correct = result.info["chosen"], result.reward >= 1.0
            else:  # another environment (TextWorld): right = the ground truth's action
                chosen = decision.action
                gold = getattr(truth, "correct_action", None)
                correct = gold is not None and chosen == gold
            rec = decision_record(truth, decision, chosen, correct, obs.legal_actions,
                                  agent.memory_size(), nodes=agent.memory_nodes())
            decisions.append(rec)
            explain.append({"turn": obs.turn, "question": obs.text,
                            "options": list(obs.legal_actions), "prompt": decision.prompt,
                            "raw": decision.raw, "chosen": chosen, "correct": correct,
                            "correct_action": rec["correct_action"],
                            "recalled": decision.recalled,
                            **({"scores": decision.scores} if decision.scores else {}),
                            **({"ask": agent.last_ask, "write": agent.last_write}
                               if hasattr(agent, "last_ask") else {})})
        if on_turn is not None:
            on_turn(agent, truth, decision, correct if decision else None)
        reward = result.reward if obs.legal_actions else None
        info = result.info
        obs, done = result.observation, result.done
        turns += 1
    if explain_path is not None:
        write_jsonl(Path(explain_path), explain)
    return GameRecord(agent=name, seed=seed, config_id=config_id, decisions=decisions,
                      n_turns=turns, seconds=round(time.perf_counter() - t0, 3),
                      changes=_changes(env), versions=versions,
                      update_fidelity=_fidelity(agent, versions), memory=_memory_stats(agent),
                      loop={**agent.loop_stats(), **fidelity}
                      if hasattr(agent, "loop_stats") else {})


def _score_write(counts: dict[str, int], agent: Any, truth: Any, turn: int) -> None:
    """What a model writer stored on a turn that states a rule (announcement or feedback),
    scored against the rule (ground truth scores, it never feeds the agent): `rule_stores`
    counts such turns where it stored a sentence, `rule_stores_exact` those where a stored
    sentence names the rule's creature, condition and item (`records.states_rule`)."""
    from mags_lib.game.senseless import parse_rule

    write = getattr(agent, "last_write", None)
    if not write or write.get("turn") != turn or not write.get("stored") or truth is None \
            or truth.kind not in ("announce", "feedback") or not truth.engram_ops:
        return
    _, text, key = truth.engram_ops[0]
    rule = parse_rule(text or "")
    if key is None or rule is None:
        return
    counts["rule_stores"] = counts.get("rule_stores", 0) + 1
    exact = any(states_rule(t, key, rule.item) for t in write["stored"])
    counts["rule_stores_exact"] = counts.get("rule_stores_exact", 0) + exact


class _blame:
    """Re-raise any failure inside as MagsError naming the agent, the seed and the turn."""

    def __init__(self, agent: str, seed: int, turn: int):
        self.where = f"agent {agent!r}, seed {seed}, turn {turn}"

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is None or isinstance(exc, KeyboardInterrupt):
            return False
        cause = exc.cause if isinstance(exc, MagsError) else f"{type(exc).__name__}: {exc}"
        fix = exc.fix if isinstance(exc, MagsError) else (
            "check the LLM backend; finished games are kept in games.jsonl, rerun with "
            "resume=True to continue")
        raise MagsError(f"{self.where} failed: {cause}", fix) from exc


def _note_version(versions: dict[str, list[str]], truth: Any) -> None:
    """Record the rule text a turn shows (announcements and revealing feedback)."""
    if truth is None or truth.kind not in ("announce", "feedback") or not truth.engram_ops:
        return
    for _, text, key in truth.engram_ops:
        if key is not None and (not versions.get(key) or versions[key][-1] != text):
            versions.setdefault(key, []).append(text)


def _changes(env: Any) -> list[tuple[int, str]]:
    episode = getattr(env, "episode", None)
    events = getattr(episode, "events", None) or []
    return [(int(e.turn), str(e.key)) for e in events]


def _fidelity(agent: Any, versions: dict[str, list[str]]) -> float | None:
    from mags_lib.evaluation.metrics import update_fidelity

    nodes = agent.memory_nodes()
    return None if nodes is None else update_fidelity(nodes, versions)


def _memory_stats(agent: Any) -> dict[str, Any]:
    stats: dict[str, Any] = {"size": agent.memory_size()}
    metrics = getattr(agent, "memory_metrics", None)
    if callable(metrics):
        stats.update({k: v for k, v in metrics().items() if isinstance(v, int | float)})
    return stats


def run_eval(cfg: EvalConfig, *, llm: Any | None = None, embedder: Any | None = None,
             out_dir: Path | None = None, roles: dict[str, Any] | None = None) -> EvalResult:
    """Every agent of `cfg` on every seed; see the module docstring. `llm`, `embedder` and
    the closed loop's `roles` ({"ask": llm, "write": llm}) default to the ones `cfg` names
    (loaded once); `out_dir` to results/<cfg.output>/."""
    from mags_lib.agents import MemoEmbedder, make_agent
    from mags_lib.evaluation.metrics import summarize
    from mags_lib.game import SenselessGame
    from mags_lib.game.senseless import check_config
    from mags_lib.manifest import write_json

    t0 = time.perf_counter()
    cfg = cfg.resolved()
    check_config(cfg.game)
    if out_dir is None:
        from mags_lib.paths import results_dir

        out_dir = results_dir(cfg.output)
    out_dir = Path(out_dir)
    games_path = out_dir / "games.jsonl"
    role_names = ({r: str(getattr(m, "name", type(m).__name__)) for r, m in roles.items()}
                  if roles else None)
    config_id = cfg.config_id(role_names)
    games = _start_file(games_path, config_id, cfg.resume)
    done = {(g.agent, g.seed) for g in games}
    write_json(out_dir / "config.json", {**cfg.to_dict(), "config_id": config_id})
    if llm is None:
        from mags_lib.llm import load_llm

        llm = load_llm(cfg.llm)
    if embedder is None and any(a.startswith(("mags", "static_rag")) for a in cfg.agents):
        embedder = MemoEmbedder(_embedder(cfg.embedder))
    if roles is None:
        roles = load_role_llms(cfg)
    from mags_lib.progress import progress

    todo = [(s, a) for s in cfg.seeds for a in cfg.agents if (a, s) not in done]
    for seed, name in progress(todo, "games"):
        env = SenselessGame(replace(cfg.game, seed=seed))
        agent = make_agent(name, llm, k=cfg.k, prompt_format=cfg.prompt_format,
                           answer_tags=cfg.answer_tags, debias_order=cfg.debias_order,
                           remember_questions=cfg.remember_questions,
                           context_window=cfg.context_window, embedder=embedder,
                           memory=dict(cfg.memory), env=env, roles=roles,
                           loop=dict(cfg.loop))
        game = run_game(agent, env, seed, name=name, config_id=config_id,
                        explain_path=out_dir / "explain" / f"{name}_{seed}.jsonl")
        append_jsonl(games_path, game.to_dict())
        games.append(game)
        if cfg.verbose:
            print(f"{name:<22} seed {seed}: accuracy {game.accuracy:.3f} over "
                  f"{len(game.decisions)} decisions in {game.seconds:.1f} s", flush=True)
    games = [g for g in games if g.agent in cfg.agents and g.seed in cfg.seeds]
    summary = summarize(games, gap_threshold=cfg.gap_threshold, recent_window=cfg.recent_window)
    write_ordered_json(out_dir / "metrics.json", summary)
    return EvalResult(cfg, games, summary, out_dir, round(time.perf_counter() - t0, 2))


def _start_file(path: Path, config_id: str, resume: bool) -> list[GameRecord]:
    """The games to keep: under `resume`, those of this config (others are dropped from the
    file, so games.jsonl never mixes configurations); otherwise none (a fresh file)."""
    if not resume:
        write_jsonl(path, [])
        return []
    games = finished_games(path, config_id)
    if len(games) != len(read_jsonl(path)):
        write_jsonl(path, [g.to_dict() for g in games])
    return games


def load_role_llms(cfg: EvalConfig) -> dict[str, Any]:
    """The closed loop's ask and write LLMs as `cfg.models` names them (see
    `EvalConfig.role_model_paths`) when `mags` plays, and the base model that `mags_prompted`
    and `mem0` prompt when either plays (never the decision model, which may be the trained
    answer model); one file named twice is loaded once."""
    from mags_lib.llm import load_llm

    loaded: dict[str, Any] = {}
    wanted = (cfg.role_model_paths() if any(a in TRAINED_LOOP_AGENTS for a in cfg.agents)
              else {})
    if any(a in PROMPTED_AGENTS for a in cfg.agents):
        wanted["prompted"] = cfg.prompted_model
    roles = {}
    for role, path in wanted.items():
        if path not in loaded:
            loaded[path] = load_llm(replace(cfg.llm, model=path, n_ctx=cfg.role_n_ctx))
        roles[role] = loaded[path]
    return roles


def _embedder(kind: str) -> Any:
    if kind == "hashing":
        from mags_lib.embed import HashingEmbedder

        return HashingEmbedder()
    from mags_lib.embed import default_embedder

    return default_embedder()


def write_ordered_json(path: Path, obj: Any) -> Path:
    """Atomic JSON write that keeps the dict order (the summary puts its verdict first)."""
    return write_text(path, json.dumps(obj, indent=2, default=str))
