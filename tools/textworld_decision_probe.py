"""Why notebook 10 decides the way it does: two probes of the TextWorld decision step.

    python tools/textworld_decision_probe.py hints [--llm embedded|auto] [--level 5]
    python tools/textworld_decision_probe.py sampling [--temperature 0.7] [--level 5]

`hints`: along the winning path of coin collector and treasure hunter (seeds 0-2), how often
does the decision LLM pick TextWorld's next winning command when its prompt holds one memory
line phrased in several ways (and none)? Separates a decision LLM that can use a memory line
from one that cannot (the design doc's numbers: 'auto', the answer model trained on the
senseless game, 3 of 24 with the winning-commands line; 'embedded', the base model, 16 of 24;
no line: 2 and 9).

`sampling`: `bare` and `oracle` on the same six games, every decision sampled at the given
temperature (turn t with seed t), 30 steps: wins and steps per agent. At temperature 0 (greedy)
the oracle won none of the level-5 games, walking between two rooms; at 0.7 it won 6 of 6.
"""

from __future__ import annotations

import argparse
import json

HINTS = {
    "winning": lambda p: f"Winning commands from here: {', '.join(p)}",
    "winning_first": lambda p: f"Winning command from here: {p[0]}",
    "do_now": lambda p: f"Do this now: {p[0]}.",
    "to_win": lambda p: f"To win, the next command is {p[0]}.",
    "answer": lambda p: f"Answer: {p[0]}",
}
KINDS = ("coin_collector", "treasure_hunter")


def winning_path_states(level: int) -> list[tuple]:
    """(observation, winning commands) at every state along TextWorld's winning policy."""
    from mags_lib.game.textworld_env import TextWorldConfig, TextWorldEnv

    states = []
    for kind in KINDS:
        for seed in (0, 1, 2):
            env = TextWorldEnv(TextWorldConfig(kind=kind, level=level, seed=seed, max_steps=40))
            obs = env.reset(seed)
            while obs.kind != "end":
                truth = env.ground_truth()
                if truth is None or truth.correct_action is None:
                    break
                policy = truth.rule_text.removeprefix("Winning commands from here: ").split(", ")
                states.append((obs, policy))
                obs = env.step(truth.correct_action).observation
            env.close()
    return states


def hints(llm_spec: str, level: int) -> dict:
    from mags_lib.agents.prompt import decide
    from mags_lib.evaluation.answer_model import decision_llm_settings
    from mags_lib.llm import LLMConfig, load_llm

    d = decision_llm_settings(llm_spec)
    llm = load_llm(LLMConfig(model=d["model"], n_ctx=2048, cache=False))
    states = winning_path_states(level)
    out = {"llm": d["note"], "states": len(states)}
    for name, line in [("none", None), *HINTS.items()]:
        right = sum(decide(llm, [] if line is None else [line(p)], o.text, o.legal_actions,
                           answer_tags=d["answer_tags"]).action == p[0] for o, p in states)
        out[name] = right
    return out


def sampling(temperature: float, level: int, max_steps: int = 30) -> dict:
    from mags_lib.agents import MemoEmbedder, make_agent
    from mags_lib.embed import HashingEmbedder
    from mags_lib.evaluation import run_game
    from mags_lib.evaluation.answer_model import decision_llm_settings
    from mags_lib.game.textworld_env import TextWorldConfig, TextWorldEnv
    from mags_lib.llm import LLMConfig, load_llm

    d = decision_llm_settings("embedded")
    llm = load_llm(LLMConfig(model=d["model"], n_ctx=2048, cache=False))
    out: dict = {"temperature": temperature, "level": level}
    for name in ("bare", "oracle"):
        games = []
        for kind in KINDS:
            for seed in (0, 1, 2):
                env = TextWorldEnv(TextWorldConfig(kind=kind, level=level, seed=seed,
                                                   max_steps=max_steps))
                agent = make_agent(name, llm, env=env, temperature=temperature,
                                   embedder=MemoEmbedder(HashingEmbedder()))
                record = run_game(agent, env, seed, name=name)
                games.append({"kind": kind, "seed": seed, "won": env.won,
                              "steps": record.n_turns})
                env.close()
        out[name] = {"wins": sum(g["won"] for g in games), "games": games}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="probe", required=True)
    h = sub.add_parser("hints")
    h.add_argument("--llm", default="embedded")
    h.add_argument("--level", type=int, default=5)
    s = sub.add_parser("sampling")
    s.add_argument("--temperature", type=float, default=0.7)
    s.add_argument("--level", type=int, default=5)
    args = ap.parse_args()
    result = (hints(args.llm, args.level) if args.probe == "hints"
              else sampling(args.temperature, args.level))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
