"""`python -m mags_lib play`: the senseless game in a terminal, played by you or watched.

    python -m mags_lib play                       # you play: type a number or the item
    python -m mags_lib play --agent mags          # watch the closed loop, memory beside the board
    python -m mags_lib play --agent static_rag --turns 100 --delay 0.5

Each turn shows the game on the left and, for an agent, what it did on the right: what the
write model wrote and what the memory applied, the ask model's queries, the lines recalled for
the decision and the choice. At the end a score line compares the player with the oracle (the
same decision LLM given the rules in force) on the same game, and with chance.

The rules are nonsense and change during play: remember what the game tells you.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
import time
from dataclasses import replace
from typing import Any

from mags_lib.errors import MagsError

HUMAN = "human"


def build_parser() -> argparse.ArgumentParser:
    from mags_lib.agents import AGENT_NAMES

    ap = argparse.ArgumentParser(prog="python -m mags_lib play", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agent", default=HUMAN, choices=(HUMAN, *AGENT_NAMES),
                    help="who plays: human (you) or an agent of the evaluation (default human)")
    ap.add_argument("--seed", type=int, default=0, help="game seed (same seed, same game)")
    ap.add_argument("--turns", type=int, default=60, help="turns to play (default 60)")
    ap.add_argument("--surface", default="varied", choices=("varied", "fixed"),
                    help="varied phrasings (default) or the fixed template")
    ap.add_argument("--phrasings", default="heldout", choices=("heldout", "train"),
                    help="which phrasing bank the varied surface draws from")
    ap.add_argument("--delay", type=float, default=0.0,
                    help="seconds to pause after each turn when watching an agent")
    ap.add_argument("--no-compare", action="store_true",
                    help="skip the oracle's game at the end (no decision LLM is loaded for you)")
    ap.add_argument("--width", type=int, default=0, help="screen width (0: the terminal's)")
    return ap


def columns(left: list[str], right: list[str], width: int) -> list[str]:
    """Two text columns side by side, each wrapped to half the width.

    >>> columns(["a b c"], ["x"], 20)
    ['a b c      | x']
    """
    half = max((width - 3) // 2, 10)
    wrap_l = [w for line in left for w in (textwrap.wrap(line, half) or [""])]
    wrap_r = [w for line in right for w in (textwrap.wrap(line, half) or [""])]
    rows = max(len(wrap_l), len(wrap_r))
    wrap_l += [""] * (rows - len(wrap_l))
    wrap_r += [""] * (rows - len(wrap_r))
    return [f"{a:<{half}} | {b}".rstrip() for a, b in zip(wrap_l, wrap_r, strict=True)]


def agent_lines(agent: Any, obs: Any, decision: Any) -> list[str]:
    """What the agent did this turn, for the right column."""
    out: list[str] = []
    write = getattr(agent, "last_write", None)
    if write and write.get("turn") == obs.turn:
        out.append("wrote: " + (write["raw"].strip().replace("\n", " | ") or "(nothing)"))
        changes = {k: v for k, v in (write.get("applied") or {}).items() if v}
        if changes:
            out.append("memory: " + ", ".join(f"{k} {v}" for k, v in changes.items()))
        else:
            out.append("memory: unchanged (" + ("block did not parse" if write.get("errors")
                                                  and "applied" not in write
                                                  else "nothing to store") + ")")
    ask = getattr(agent, "last_ask", None)
    if ask and ask.get("turn") == obs.turn:
        out.append("asked: " + "; ".join(ask["queries"]))
    if decision is not None:
        out += [f"recalled: {r['text']}" + (f" ({r['score']:.2f})" if "score" in r else "")
                for r in decision.recalled] or ["recalled: nothing"]
        out.append(f"chose: {decision.action}")
    if not out and hasattr(agent, "memory_size"):
        out.append(f"memory: {agent.memory_size()} items")
    return out


def ask_human(obs: Any) -> str | None:
    """The person's choice on a decision turn: a number or an item name; None to stop."""
    options = list(obs.legal_actions)
    while True:
        try:
            raw = input(f"your choice (1-{len(options)}, or the item; q to stop)> ").strip()
        except EOFError:
            return None
        if raw.lower() in ("q", "quit"):
            return None
        if raw.isdigit() and 1 <= int(raw) <= len(options):
            return options[int(raw) - 1]
        match = [o for o in options if o.lower() == raw.lower()]
        if match:
            return match[0]
        print(f"  pick one of: {', '.join(f'{i + 1}) {o}' for i, o in enumerate(options))}")


def load_player(name: str, game_cfg: Any, seed: int) -> tuple[Any, Any, Any]:
    """(env, agent or None for a person, decision LLM or None), as the evaluation builds them."""
    from mags_lib.agents import MemoEmbedder, make_agent
    from mags_lib.evaluation.answer_model import decision_llm_settings
    from mags_lib.evaluation.config import EvalConfig
    from mags_lib.evaluation.runner import load_role_llms
    from mags_lib.game import SenselessGame
    from mags_lib.llm import load_llm

    env = SenselessGame(replace(game_cfg, seed=seed))
    if name == HUMAN:
        return env, None, None
    settings = decision_llm_settings("auto")
    cfg = EvalConfig(agents=[name], seeds=[seed], game=game_cfg, answer_tags=settings[
        "answer_tags"], llm=replace(EvalConfig().llm, model=settings["model"]))
    print(f"loading {name}: {settings['note']} ...", flush=True)
    llm = load_llm(cfg.llm)
    roles = load_role_llms(cfg)
    embedder = None
    if name.startswith(("mags", "static_rag")):
        from mags_lib.embed import default_embedder

        embedder = MemoEmbedder(default_embedder())
    agent = make_agent(name, llm, k=cfg.k, prompt_format=cfg.prompt_format,
                       answer_tags=cfg.answer_tags, debias_order=cfg.debias_order,
                       context_window=cfg.context_window,
                       embedder=embedder, memory=dict(cfg.memory), env=env, roles=roles)
    return env, agent, (llm, cfg)


def oracle_score(game_cfg: Any, seed: int, turns: int, llm_cfg: Any | None) -> dict[str, Any]:
    """The evaluation's oracle (decision LLM + the rules in force) on the same game."""
    from mags_lib.agents import make_agent
    from mags_lib.evaluation.answer_model import decision_llm_settings
    from mags_lib.evaluation.config import EvalConfig
    from mags_lib.evaluation.runner import run_game
    from mags_lib.game import SenselessGame
    from mags_lib.llm import load_llm

    if llm_cfg is None:
        settings = decision_llm_settings("auto")
        cfg = EvalConfig(agents=["oracle"], seeds=[seed], game=game_cfg,
                         answer_tags=settings["answer_tags"],
                         llm=replace(EvalConfig().llm, model=settings["model"]))
        llm = load_llm(cfg.llm)
    else:
        llm, cfg = llm_cfg
    env = SenselessGame(replace(game_cfg, seed=seed))
    oracle = make_agent("oracle", llm, k=cfg.k, prompt_format=cfg.prompt_format,
                        answer_tags=cfg.answer_tags, debias_order=cfg.debias_order, env=env)
    record = run_game(oracle, env, seed, name="oracle", max_turns=turns)
    right = sum(bool(d["correct"]) for d in record.decisions)
    return {"correct": right, "decisions": len(record.decisions)}


def play(args: argparse.Namespace) -> dict[str, Any]:
    from mags_lib.game.senseless import GameConfig

    width = args.width or shutil.get_terminal_size((100, 24)).columns
    game_cfg = GameConfig(seed=args.seed, episode_length=max(args.turns, 1),
                          surface=args.surface, phrasings=args.phrasings)
    env, agent, llm_cfg = load_player(args.agent, game_cfg, args.seed)
    who = "you" if agent is None else args.agent
    if agent is not None:
        agent.attach(env)
        agent.reset(args.seed)
    print(f"senseless game, seed {args.seed}, {args.turns} turns, {args.surface} surface; "
          f"player: {who}", flush=True)
    obs = env.reset(args.seed)
    reward = info = None
    correct = decisions = turns = 0
    done = stopped = False
    while not done and turns < args.turns:
        left = [f"turn {obs.turn} [{obs.kind}]", obs.text]
        if obs.legal_actions:
            left.append("options: " + "  ".join(f"{i + 1}) {o}"
                                                for i, o in enumerate(obs.legal_actions)))
        decision = None
        if agent is None:
            print("\n".join(left), flush=True)
            action = ask_human(obs) if obs.legal_actions else None
            if obs.legal_actions and action is None:
                stopped = True
                break
        else:
            agent.observe(obs, reward=reward, info=info)
            decision = agent.act(obs) if obs.legal_actions else None
            action = decision.action if decision else None
        result = env.step(action)
        if obs.legal_actions:
            decisions += 1
            right = result.reward >= 1.0
            correct += right
            left.append(("right" if right else "wrong") + f" ({action or 'no answer'}); "
                        f"score {correct}/{decisions}")
        if agent is None:
            if obs.legal_actions:
                print(left[-1], flush=True)
        else:
            print("-" * width)
            print("\n".join(columns(left, agent_lines(agent, obs, decision), width)), flush=True)
            if args.delay:
                time.sleep(args.delay)
        reward = result.reward if obs.legal_actions else None
        info = result.info
        obs, done = result.observation, result.done
        turns += 1
    score = {"player": who, "correct": correct, "decisions": decisions, "turns": turns,
             "stopped": stopped, "chance": 1.0 / game_cfg.n_items}
    if not args.no_compare and turns:
        print("playing the oracle on the same game ...", flush=True)
        score["oracle"] = oracle_score(game_cfg, args.seed, turns, llm_cfg)
    print(score_line(score), flush=True)
    return score


def score_line(score: dict[str, Any]) -> str:
    """The closing line: player, oracle and chance accuracy on the same turns.

    >>> score_line({"player": "you", "correct": 3, "decisions": 4, "turns": 10, "chance": 0.5,
    ...             "oracle": {"correct": 4, "decisions": 4}})
    'score after 10 turns: you 3/4 = 0.75 | oracle 4/4 = 1.00 | chance 0.50'
    """
    def acc(right: int, n: int) -> str:
        return f"{right}/{n} = {right / n:.2f}" if n else "no decisions"

    line = (f"score after {score['turns']} turns: {score['player']} "
            f"{acc(score['correct'], score['decisions'])}")
    if "oracle" in score:
        line += f" | oracle {acc(score['oracle']['correct'], score['oracle']['decisions'])}"
    return line + f" | chance {score['chance']:.2f}"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.turns < 1:
        print("error: --turns must be at least 1", file=sys.stderr)
        return 2
    try:
        play(args)
    except MagsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nstopped", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
