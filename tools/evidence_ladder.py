"""Where `mags_episodic`'s evidence goes, one change at a time (`evaluation/evidence_ladder.py`).

    python tools/evidence_ladder.py OUT.json                                  # conv-43 (dev)
    python tools/evidence_ladder.py OUT.json --split train --n 5 --folds results/recall_reranker/folds
    python tools/evidence_ladder.py OUT.json --task persona --n 6 --k 5

Each question is read with the agent's memory and with the same agent's turns only
(`LoopConfig.writer` 'none'), recalled with the question alone and with the ask model's queries:
evidence recall@k at each rung, and each step's paired difference with a 95% interval. No answer
model is called. `--folds DIR` gives each LoCoMo conversation the recall reranker fitted without
it (`DIR/without-<id>.json`, `tools/train_recall_reranker.py`): the shipped one was fitted on
every training conversation. The ask and write models saw LoCoMo's training conversations
except conv-43 in their datasets, so only conv-43 is text they were not trained on. Test
splits are for a frozen configuration only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="JSON file for the summary and the rows")
    ap.add_argument("--task", default="locomo", help="a dialogue task: locomo, persona")
    ap.add_argument("--split", default="dev", help="train / dev / test (locomo dev: conv-43)")
    ap.add_argument("--n", type=int, default=1, help="conversations (the split's first n)")
    ap.add_argument("--ids", nargs="+", default=None, help="locomo: these conversations only")
    ap.add_argument("--agent", default="mags_episodic", help="a closed-loop agent that keeps turns")
    ap.add_argument("--k", type=int, default=10, help="lines per question (recall@k)")
    ap.add_argument("--query-k", type=int, default=None,
                    help="hits recalled per query (LoopConfig.query_k; default: --k on "
                         "LoCoMo, as notebooks 12 and 13 run it, else the agent's own)")
    ap.add_argument("--max-questions", type=int, default=None)
    ap.add_argument("--folds", default=None, metavar="DIR",
                    help="per conversation, the reranker DIR/without-<id>.json")
    ap.add_argument("--memory", default=None, metavar="JSON",
                    help="MemoryConfig overrides on top of memory.DIALOGUE_MEMORY")
    ap.add_argument("--loop", default=None, metavar="JSON",
                    help="LoopConfig overrides of the agent's own settings, e.g. "
                         "'{\"retired_turns\": \"off\"}'")
    ap.add_argument("--ask-model", default="auto", help="the ask model ('auto': notebook 04's)")
    ap.add_argument("--write-model", default="auto", help="the write model")
    args = ap.parse_args(argv)
    from mags_lib.errors import MagsError

    try:
        run(args)
    except MagsError as exc:
        sys.exit(f"error: {exc}")


def run(args: argparse.Namespace) -> None:
    from mags_lib.agents.loop import LoopConfig
    from mags_lib.agents.registry import loop_settings, trained_roles
    from mags_lib.embed import MemoEmbedder, default_embedder
    from mags_lib.errors import MagsError
    from mags_lib.evaluation.conversation_qa import ConversationEvalConfig, dialogue_memory
    from mags_lib.evaluation.conversation_study import role_models
    from mags_lib.evaluation.evidence_ladder import ladder_markdown, ladder_rows, ladder_summary
    from mags_lib.memory import MemoryConfig
    from mags_lib.tasks.registry import get_task

    task = get_task(args.task)
    if task.interactive:
        raise MagsError(f"{args.task} is an interactive task", "the ladder reads dialogues: "
                        "--task locomo or persona")
    convs = (task.episodes(args.split, ids=args.ids) if args.ids
             else task.episodes(args.split, args.n))
    query_k = args.query_k or (args.k if args.task == "locomo" else None)
    loop = {**({"query_k": query_k} if query_k else {}), **_json_object("--loop", args.loop)}
    try:  # an unknown or ill-typed loop setting fails before any model is loaded
        LoopConfig(**loop_settings(args.agent, loop))
    except TypeError as exc:
        raise MagsError(f"--loop {args.loop!r}: {exc}", "use LoopConfig field names") from exc
    memory = dialogue_memory()
    memory.update(_json_object("--memory", args.memory))
    memories = {}  # every setting is checked before a model is loaded
    for conv in convs:
        mine = dict(memory)
        if args.folds:
            fold = Path(args.folds) / f"without-{conv.sample_id}.json"
            if not fold.exists():
                raise MagsError(f"no held-out reranker for {conv.sample_id}: {fold} is missing",
                                "run python tools/train_recall_reranker.py results/"
                                "recall_reranker (it writes folds/), or drop --folds")
            mine["reranker"] = str(fold)
        try:
            MemoryConfig.from_dict(mine)
        except ValueError as exc:
            raise MagsError(f"bad memory settings: {exc}",
                            "pass MemoryConfig field names and values in range") from exc
        memories[conv.sample_id] = mine
    roles, why = role_models({"ask": args.ask_model, "write": args.write_model},
                             trained_roles(args.agent, loop))
    if why:
        raise MagsError(f"the ladder's agent {args.agent!r} has no models", why)
    embedder = MemoEmbedder(default_embedder())
    rows = []
    for conv in convs:
        cfg = ConversationEvalConfig(agents=[args.agent], k=args.k, loop=loop,
                                     memory=memories[conv.sample_id],
                                     max_questions=args.max_questions)
        t0 = time.perf_counter()
        rows += ladder_rows(conv, args.agent, roles["ask"], cfg, embedder, roles)
        print(f"{conv.sample_id}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    summary = ladder_summary(rows)
    print(ladder_markdown(summary, args.k))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(
        {"task": args.task, "split": args.split, "agent": args.agent, "k": args.k, "loop": loop,
         "memory": memory,
         "rerankers": {c: m.get("reranker") for c, m in memories.items()},
         "models": {r: str(getattr(m, "name", m)) for r, m in roles.items()},
         "summary": summary, "rows": rows}, indent=1))


def _json_object(flag: str, text: str | None) -> dict:
    """`text` read as a JSON object of settings ({} for None), else a MagsError naming `flag`."""
    from mags_lib.errors import MagsError

    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise MagsError(f"{flag} {text!r} is not JSON ({exc})",
                        f"pass {flag} a JSON object of settings, e.g. '{{\"k\": 10}}'") from exc
    if not isinstance(value, dict):
        raise MagsError(f"{flag} {text!r} is not a JSON object",
                        f"pass {flag} a JSON object of settings, e.g. '{{\"k\": 10}}'")
    return value


if __name__ == "__main__":
    main()
