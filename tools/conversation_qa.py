"""Conversation QA from the command line: agents read persona or LoCoMo conversations and
answer their questions with one answer model (`evaluation/conversation_qa.py`).

    python tools/conversation_qa.py OUT.json --task persona --split dev --n 5
    python tools/conversation_qa.py OUT.json --task locomo --split dev --k 10 --query-k 10
    python tools/conversation_qa.py OUT.json --agents mags static_rag --judge   # + the models alone

Prints each agent's summary (F1 with 95% intervals over conversations, abstention, the persona
rates) and, on the persona set, the stage where each question on a fact's value was lost
(write, superseded, recall, reader), and writes it with every row to OUT.json. The test
splits (persona 'test', LoCoMo 'test') are for a frozen configuration only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mags_lib.agents.history_lines import PAST_LINES
from mags_lib.agents.loop import MERGES
from mags_lib.configs import overridden


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="JSON file for the summary and the rows")
    ap.add_argument("--task", "--source", dest="task", default="persona",
                    help="a dialogue task of mags_lib.tasks.registry: persona, locomo")
    ap.add_argument("--split", default="dev", help="train / dev / test (locomo dev: conv-43)")
    ap.add_argument("--n", type=int, default=5, help="conversations (persona: the first n seeds)")
    ap.add_argument("--offset", type=int, default=0,
                    help="skip this many conversations of the split first (persona: seeds "
                         "after the first `offset`), to read personas no run has read")
    ap.add_argument("--ids", nargs="+", default=None,
                    help="locomo: these conversations of the split only")
    ap.add_argument("--max-questions", type=int, default=None)
    ap.add_argument("--agents", nargs="+", default=["bare", "full_context", "static_rag",
                                                    "gold_writes"])
    ap.add_argument("--model", default="auto",
                    help="the answer model every agent shares: 'embedded' (the base model), "
                         "'auto' (notebook 04's trained answer model) or a .gguf path")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--ask-model", default="auto", help="mags's ask model ('auto': notebook 04's)")
    ap.add_argument("--write-model", default="auto", help="mags's write model")
    ap.add_argument("--query-k", type=int, default=None,
                    help="mags: hits recalled per ask query (LoopConfig.query_k; default 3); "
                         "set it to --k to measure recall@k of the merged lines")
    ap.add_argument("--recall-observation", action="store_true",
                    help="mags: the question itself is recalled beside the ask model's queries "
                         "(LoopConfig.recall_observation)")
    ap.add_argument("--merge", default="score", choices=list(MERGES),
                    help="mags: how the queries' hits are merged (LoopConfig.merge)")
    ap.add_argument("--versions", type=int, default=0,
                    help="mags: earlier versions shown before each recalled fact (LoopConfig)")
    ap.add_argument("--past-versions", type=int, default=None,
                    help="mags: earlier versions shown for a question about the past "
                         "(LoopConfig.past_versions; default: the agent's own)")
    ap.add_argument("--past-lines", choices=list(PAST_LINES), default=None,
                    help="mags: a question about the past is shown a changed fact's earlier "
                         "versions beside it ('both') or in its place ('earlier') "
                         "(LoopConfig.past_lines; default: the agent's own)")
    ap.add_argument("--grounding", choices=["on", "off"], default=None,
                    help="mags: refuse writes naming what the turn never said (LoopConfig)")
    ap.add_argument("--turn-over-fact", choices=["on", "off"], default=None,
                    help="mags_episodic: a fact whose turn is also shown is left out "
                         "(LoopConfig.turn_over_fact)")
    ap.add_argument("--retired-turns", choices=["off", "superseded", "updated"], default=None,
                    help="mags_episodic: a turn whose facts were all superseded (by anything, or "
                         "by the write model's update) is left out for a question about now "
                         "(LoopConfig.retired_turns)")
    ap.add_argument("--fact-share", type=float, default=None,
                    help="mags_episodic: at most this share of the lines shown are the write "
                         "model's facts (LoopConfig.fact_share; default 1.0, no cap)")
    ap.add_argument("--grounding-words", choices=["on", "off"], default=None,
                    help="mags: refuse writes sharing no content word with the turn "
                         "(LoopConfig.grounding_words)")
    ap.add_argument("--memory", default=None, metavar="JSON",
                    help="MemoryConfig overrides on top of memory.DIALOGUE_MEMORY for the memory "
                         "agents and gold_writes, e.g. '{\"lexical_stem\": true}'")
    ap.add_argument("--loop", default=None, metavar="JSON",
                    help="LoopConfig overrides for the closed-loop agents, applied after the "
                         "options above, e.g. '{\"none_margin\": 0.75}'")
    ap.add_argument("--judge", action="store_true",
                    help="persona: also judge the write and ask models alone, as in play")
    args = ap.parse_args()
    from mags_lib.embed import MemoEmbedder, default_embedder
    from mags_lib.errors import MagsError
    from mags_lib.evaluation.conversation_qa import ConversationEvalConfig, run_conversation_eval
    from mags_lib.evaluation.conversation_study import (
        model_ids,
        prompted_role,
        reader_model,
        role_models,
    )
    from mags_lib.llm import load_llm
    from mags_lib.tasks.registry import get_task

    try:
        reader, reader_note = reader_model(args.model)
    except MagsError as exc:
        sys.exit(f"error: {exc}")
    print(f"reader: {reader_note}", file=sys.stderr)

    try:
        task = get_task(args.task)
        if task.interactive:
            sys.exit(f"error: {args.task} is an interactive task; this tool reads dialogues "
                     "(notebook 06 and tools/loop_on_surface.py play games)")
        convs = (task.episodes(args.split, ids=args.ids) if args.ids
                 else task.episodes(args.split, args.n, offset=args.offset))
    except (MagsError, ValueError, TypeError) as exc:
        sys.exit(f"error: {exc}")
    loop: dict = {"versions": args.versions}  # unset options keep each agent's own defaults
    if args.past_versions is not None:
        loop["past_versions"] = args.past_versions
    if args.past_lines is not None:
        loop["past_lines"] = args.past_lines
    if args.recall_observation:
        loop["recall_observation"] = True
    if args.merge != "score":
        loop["merge"] = args.merge
    if args.query_k is not None:
        loop["query_k"] = args.query_k
    if args.grounding is not None:
        loop["grounding"] = args.grounding == "on"
    if args.grounding_words is not None:
        loop["grounding_words"] = args.grounding_words == "on"
    if args.turn_over_fact is not None:
        loop["turn_over_fact"] = args.turn_over_fact == "on"
    if args.retired_turns is not None:
        loop["retired_turns"] = args.retired_turns
    if args.fact_share is not None:
        loop["fact_share"] = args.fact_share
    if args.loop is not None:
        from mags_lib.agents.loop import LoopConfig

        loop = overridden(loop, "--loop", args.loop, lambda d: LoopConfig(**d),
                          "LoopConfig fields, e.g. '{\"none_margin\": 0.75}'")
    from mags_lib.agents.registry import trained_roles

    # only the trained models the agents read: `mags_verbatim` alone needs no write model
    needed = ("ask", "write") if args.judge else tuple(sorted(
        {r for a in args.agents for r in trained_roles(a, loop)}))
    roles, why = {}, None
    if needed:
        roles, why = role_models({"ask": args.ask_model, "write": args.write_model}, needed)
        if why:
            sys.exit(f"error: {why}")
    from mags_lib.evaluation.conversation_qa import dialogue_memory
    from mags_lib.memory import MemoryConfig

    memory = dialogue_memory()
    if args.memory is not None:
        memory = overridden(memory, "--memory", args.memory, MemoryConfig.from_dict,
                            "MemoryConfig fields, e.g. '{\"lexical_stem\": true}'")
    cfg = ConversationEvalConfig(agents=args.agents, k=args.k, max_questions=args.max_questions,
                                 loop=loop, memory=memory)
    llm = load_llm(model=reader)
    out = run_conversation_eval(convs, llm, cfg, embedder=MemoEmbedder(default_embedder()),
                                roles={**roles, **prompted_role(args.agents, reader, llm)},
                                progress=lambda s: print(s, file=sys.stderr, flush=True))
    out["source"], out["split"], out["reader"] = args.task, args.split, reader_note
    out["models"] = model_ids(llm, roles)
    out["memory"] = memory
    if args.judge and args.task == "persona":
        from mags_lib.evaluation.role_judge import judge_roles, judged_text
        from mags_lib.synth.conversation_rows import persona_judge_rows

        out["judged"] = judge_roles(roles, persona_judge_rows(args.split, args.n,
                                                                 offset=args.offset))
        print(judged_text(out["judged"]))
    Path(args.out).write_text(json.dumps(out, indent=1))
    for name, s in out["summary"].items():
        print(name, json.dumps(s))
    from mags_lib.evaluation.failure_stages import stages_markdown

    stages = {name: s["stages"] for name, s in out["summary"].items() if s.get("stages")}
    if stages:
        print(stages_markdown(stages))
    print(f"{out['seconds']} s")


if __name__ == "__main__":
    main()
