"""`python -m mags_lib graph DIR [--out FILE]`: a saved memory as an interactive HTML graph."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mags_lib.errors import MagsError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mags_lib graph", description=__doc__)
    ap.add_argument("memory", help="a memory directory (written by LiquidMemory.save or /save)")
    ap.add_argument("--out", default=None, help="HTML file (default: <memory>-graph.html)")
    ap.add_argument("--valid-only", action="store_true", help="leave superseded facts out")
    ap.add_argument("--query", default=None, help="mark nodes whose text contains this")
    args = ap.parse_args(argv)
    from mags_lib.apps.chat import graph_path
    from mags_lib.graph_html import write_graph_html
    from mags_lib.memory import LiquidMemory

    try:
        memory = LiquidMemory.load(args.memory)  # drawing needs no embedder
        out = write_graph_html(memory, args.out or graph_path(args.memory),
                               valid_only=args.valid_only, query=args.query,
                               title=f"{Path(args.memory)} (step {memory.step_count})")
    except MagsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
