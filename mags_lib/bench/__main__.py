"""Command line of the benchmarks; prints one JSON object on stdout.

    python -m mags_lib.bench memory [--sizes 1000,10000,100000] [--queries 200] [--seed 0]
                                    [--exact-below N] [--set KEY=VALUE ...] [--out PATH]
    python -m mags_lib.bench index  [--sizes ...] [--queries ...] [--seed ...] [--out PATH]
    python -m mags_lib.bench parser [--sizes 100000,1000000] [--shapes a,b] [--repeats 3]
                                    [--out PATH]
    python -m mags_lib.bench agent  [--turns 50,200,1000] [--agents mags,full_context]
                                    [--window 25] [--seed 0] [--greedy]
                                    [--out results/bench/agent.json]
    python -m mags_lib.bench conversation [--source locomo] [--conversation conv-26]
                                    [--turns 200] [--questions 20]
                                    [--out results/bench/conversation.json]
    python -m mags_lib.bench llm    [--models embedded,gguf,PATH.gguf] [--prompt-tokens 130]
                                    [--gen-tokens 16] [--repeats 5] [--out results/bench/llm.json]
"""

from __future__ import annotations

import argparse
import json
import sys


def _sizes(text: str) -> list[int]:
    sizes = [int(s) for s in text.split(",") if s.strip()]
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"sizes must be positive integers, got {text!r}")
    return sizes


def _shapes(text: str) -> list[str]:
    from mags_lib.bench.parser_bench import SHAPES

    shapes = [s for s in text.split(",") if s.strip()]
    unknown = sorted(set(shapes) - set(SHAPES))
    if not shapes or unknown:
        raise argparse.ArgumentTypeError(f"unknown parser shapes {unknown}; use some of "
                                         f"{list(SHAPES)}")
    return shapes


def _setting(text: str) -> tuple[str, object]:
    from mags_lib.memory import MemoryConfig

    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    try:
        MemoryConfig.from_dict({key: parsed})
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return key, parsed


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mags_lib.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("memory", "LiquidMemory writes, recall latency, peak memory"),
                            ("index", "VectorIndex and BM25Index alone")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--sizes", type=_sizes, default=[1_000, 10_000, 100_000],
                       help="comma-separated numbers of facts (default 1000,10000,100000)")
        p.add_argument("--queries", type=int, default=200, help="timed queries per size")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--out", default=None, help="also write the JSON to this path")
        if name == "memory":
            p.add_argument("--exact-below", type=int, default=None, metavar="N",
                           help="override MemoryConfig.exact_below (exact vector search below N)")
            p.add_argument("--set", type=_setting, action="append", default=[],
                           metavar="KEY=VALUE", help="a MemoryConfig override, e.g. "
                           "--set hnsw_expansion_add=32 (VALUE is JSON); repeatable")
            p.add_argument("--single", type=int, default=None, metavar="N",
                           help="measure one size in this process (used by the subprocesses)")
    p = sub.add_parser("parser", help="parse_actions on adversarial texts, by shape and size")
    p.add_argument("--sizes", type=_sizes, default=[100_000, 1_000_000],
                   help="comma-separated text sizes in characters (default 100000,1000000)")
    p.add_argument("--shapes", type=_shapes, default=None,
                   help="comma-separated names of parser_bench.SHAPES (default: all)")
    p.add_argument("--repeats", type=int, default=3, help="parses per shape and size; best kept")
    p.add_argument("--out", default=None, help="also write the JSON to this path")
    p = sub.add_parser("agent", help="per-turn latency of agents in play, by stage")
    p.add_argument("--turns", type=_sizes, default=[50, 200, 1000],
                   help="comma-separated marks (default 50,200,1000)")
    p.add_argument("--agents", default="mags,full_context", help="comma-separated agents")
    p.add_argument("--window", type=int, default=25, help="turns timed up to each mark")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--decision-llm", default="auto",
                   help="'auto' (notebook 04's answer model, else embedded), 'embedded', a .gguf")
    p.add_argument("--greedy", action="store_true",
                   help="decide with one greedy answer, not the order-debiased choice the "
                        "evaluation uses")
    p.add_argument("--out", default="results/bench/agent.json",
                   help="also write the JSON here (default results/bench/agent.json)")
    p = sub.add_parser("conversation", help="mags reading a conversation: s a turn, s a question")
    p.add_argument("--source", choices=["locomo", "persona"], default="locomo")
    p.add_argument("--conversation", default="conv-26",
                   help="LoCoMo sample id (training split) or a persona dev seed")
    p.add_argument("--turns", type=int, default=200, help="turns read from the start")
    p.add_argument("--questions", type=int, default=20, help="questions answered at most")
    p.add_argument("--reader", default="auto",
                   help="the answer model: 'auto' (as notebooks 12 and 13), 'embedded', a .gguf")
    p.add_argument("--out", default="results/bench/conversation.json",
                   help="also write the JSON here (default results/bench/conversation.json)")
    p = sub.add_parser("llm", help="each GGUF's load, prompt evaluation and new-token time")
    p.add_argument("--models", default="embedded,gguf",
                   help="comma-separated: 'embedded', 'gguf' (every models/gguf/*.gguf), paths")
    p.add_argument("--prompt-tokens", type=int, default=130)
    p.add_argument("--gen-tokens", type=int, default=16)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads (all cores)")
    p.add_argument("--out", default="results/bench/llm.json",
                   help="also write the JSON here (default results/bench/llm.json)")
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = _parser().parse_args(argv)
    if args.command == "agent":
        from mags_lib.bench.agent_bench import AgentBenchConfig, bench_agent

        result = bench_agent(AgentBenchConfig(
            turns=args.turns, agents=[a for a in args.agents.split(",") if a],
            window=args.window, seed=args.seed, decision_llm=args.decision_llm,
            debias_order=not args.greedy))
    elif args.command == "conversation":
        from mags_lib.bench.conversation_bench import ConversationBenchConfig, bench_conversation

        result = bench_conversation(ConversationBenchConfig(
            source=args.source, conversation=args.conversation, turns=args.turns,
            questions=args.questions, reader=args.reader))
    elif args.command == "llm":
        from mags_lib.bench.llm_bench import LLMBenchConfig, bench_llm
        from mags_lib.errors import MagsError

        try:
            result = bench_llm(LLMBenchConfig(
                models=[m for m in args.models.split(",") if m],
                prompt_tokens=args.prompt_tokens, gen_tokens=args.gen_tokens,
                repeats=args.repeats, n_threads=args.threads))
        except MagsError as e:
            print(f"error: {e}", file=sys.stderr)
            raise SystemExit(2) from None
    elif args.command == "parser":
        from mags_lib.bench.parser_bench import SHAPES, ParserBenchConfig, bench_parser

        result = bench_parser(ParserBenchConfig(sizes=args.sizes, shapes=args.shapes or list(
            SHAPES), repeats=args.repeats))
    elif args.command == "memory":
        from mags_lib.bench.memory_bench import MemoryBenchConfig, bench_memory, run_size

        cfg = MemoryBenchConfig(sizes=args.sizes, queries=args.queries, seed=args.seed,
                                exact_below=args.exact_below, memory_config=dict(args.set))
        result = run_size(args.single, cfg) if args.single else bench_memory(cfg)
    else:
        from mags_lib.bench.index_bench import IndexBenchConfig, bench_index

        result = bench_index(IndexBenchConfig(sizes=args.sizes, queries=args.queries,
                                              seed=args.seed))
    if args.out:
        from mags_lib.manifest import write_json

        write_json(args.out, result)
    json.dump(result, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return result


if __name__ == "__main__":
    main()
