"""Command line of the benchmarks; prints one JSON object on stdout.

    python -m mags_lib.bench memory [--sizes 1000,10000,100000] [--queries 200] [--seed 0]
                                    [--exact-below N] [--set KEY=VALUE ...] [--out PATH]
    python -m mags_lib.bench index  [--sizes ...] [--queries ...] [--seed ...] [--out PATH]
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
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = _parser().parse_args(argv)
    if args.command == "memory":
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
