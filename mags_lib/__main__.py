"""`python -m mags_lib <command>`: what a person runs.

    chat    talk to MAGS; its memory persists (apps/chat_cli.py)
    play    play the senseless game, or watch an agent play it (apps/play.py)
    graph   write a saved memory as an interactive HTML graph
    bank    score a bank of the game's phrasings as the test bank is (apps/bank_cli.py)
"""

from __future__ import annotations

import sys

COMMANDS = {"chat": "mags_lib.apps.chat_cli", "play": "mags_lib.apps.play",
            "graph": "mags_lib.apps.graph_cli", "bank": "mags_lib.apps.bank_cli"}


def main(argv: list[str] | None = None) -> int:
    import importlib

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return importlib.import_module(COMMANDS[argv[0]]).main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
