"""`python -m mags_lib chat`: talk to MAGS in a terminal; its memory persists between runs.

Type a message; lines starting with `/` are commands (`/help` lists them). The reply streams as
it is generated. The memory is saved after every turn and on /quit or Ctrl-D.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from dataclasses import fields, replace
from typing import Any

from mags_lib.apps.chat import ChatConfig, ChatSession, describe, memory_blocks, recent_changes
from mags_lib.errors import CorruptFileError, MagsError

PROMPT = "you> "
HELP = """commands:
  /help                 this list
  /recall <query>       what memory returns for a query: score, block, path, provenance
                        (an inspection: nothing is learned from it)
  /why                  what the last reply was built from: route, ask queries, recalled
                        lines, the write model's output and the actions applied
  /memory               blocks and sizes, the most recent changes
  /graph                write the interactive graph (HTML) and print its path
  /snapshot <name>      save the memory as a named snapshot (kept on disk)
  /snapshots            list the snapshots
  /rollback <name>      make a snapshot the current memory
  /save [dir]           save now (to another directory: save as, and continue there)
  /load <dir>           switch to another saved memory
  /forget <id|text>     mark a node (by id, or the best match of a text) as no longer valid
  /good, /bad           reward the last reply (+1 / -1): strengthens or weakens the paths
                        its recall used
  /quit                 save and leave (Ctrl-D too)"""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m mags_lib chat", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in fields(ChatConfig):
        kind = ({"action": argparse.BooleanOptionalAction} if isinstance(f.default, bool)
                else {"type": type(f.default)})
        ap.add_argument("--" + f.name.replace("_", "-"), default=f.default, **kind,
                        help=f.metadata.get("help", "") + f" (default: {f.default})")
    return ap


def show_hits(hits: list[Any]) -> list[str]:
    if not hits:
        return ["  (nothing recalled)"]
    return [f"  #{h.node_id} {h.score:.3f} [{h.block}{'' if h.valid else ', superseded'}] "
            f"{h.text}\n      path {' -> '.join(map(str, h.path))}; from "
            f"{', '.join(map(str, h.sources[:4])) or '?'}" for h in hits]


def why_lines(last: dict[str, Any]) -> list[str]:
    if not last:
        return ["  nothing yet: say something first"]
    out = [f"  turn {last['turn']}: {last['kind']} -> {' + '.join(last['roles'])}"]
    if "write" in last:
        w = last["write"]
        out.append(f"  stored the message as episodic #{w['episode']}")
        out.append(f"  write model saw: {w['held'] or 'nothing held'}")
        out.append("  write model wrote: " + (w["raw"].strip().replace("\n", " | ") or "(empty)"))
        applied = w["applied"]
        out.append("  applied: " + (applied if isinstance(applied, str) else json.dumps(
            {k: v for k, v in applied.items() if v})))
    if "ask" in last:
        a = last["ask"]
        out.append("  ask model queries: " + "; ".join(a["queries"])
                   + (" (fallback: its output gave none)" if a["fallback"] else ""))
    out.append("  recalled for the answer (best last):")
    out += [f"    #{r['node']} " + ("  old" if r["score"] is None else f"{r['score']:.3f}")
            + f" [{r['block']}] {r['text']}"
            for r in last.get("recalled", [])] or ["    (nothing)"]
    return out


def command(session: ChatSession, line: str) -> tuple[list[str], bool]:
    """Run one slash command; (lines to print, whether to quit)."""
    name, _, arg = line[1:].strip().partition(" ")
    arg = arg.strip()
    name = name.lower()
    if name in ("quit", "exit", "q"):
        return [f"saved {session.close()}"], True
    if name == "help":
        return [HELP], False
    if name == "recall":
        if not arg:
            raise MagsError("/recall needs a query", "type /recall <what you want to find>")
        return show_hits(session.memory.recall(arg, session.cfg.k, learn=False)), False
    if name == "why":
        return why_lines(session.last), False
    if name == "memory":
        blocks = memory_blocks(session.memory)
        out = [f"  {session.path}: {describe(session.memory)}"]
        out += [f"  {b}: {n['valid']} valid, {n['superseded']} superseded"
                for b, n in blocks.items()]
        out += [f"  working: {t}" for t in session.memory.working.texts()]
        out += ["  recent changes:"] + [f"    {c}" for c in recent_changes(session.memory)]
        return out, False
    if name == "graph":
        return [f"  graph written to {session.write_graph()} (open it in a browser)"], False
    if name == "snapshot":
        return [f"  snapshot {arg!r} saved at {session.snapshot(arg)}"], False
    if name == "snapshots":
        return [f"  {n}" for n in session.snapshots()] or ["  no snapshots"], False
    if name == "rollback":
        session.rollback(arg)
        return [f"  rolled back to {arg!r}: {describe(session.memory)}"], False
    if name == "save":
        return [f"  saved {session.save(arg or None)}"], False
    if name == "load":
        if not arg:
            raise MagsError("/load needs a directory", "type /load <memory directory>")
        session.load(arg)
        return [f"  loaded {arg}: {describe(session.memory)}"], False
    if name == "forget":
        if not arg:
            raise MagsError("/forget needs a node id or a text", "type /forget 12")
        ids = session.forget(arg)
        return [f"  forgot #{i}" for i in ids] or ["  nothing matches"], False
    if name in ("good", "bad"):
        session.reward(1.0 if name == "good" else -1.0)
        return [f"  reward {'+1' if name == 'good' else '-1'} noted for the last reply"], False
    return [f"unknown command /{name}", HELP], False


def repl(session: ChatSession) -> int:
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (line editing and history in input())
    print("MAGS chat: type a message, /help for commands, /quit to leave.", flush=True)
    while True:
        try:
            line = input(PROMPT)
        except EOFError:
            print(f"\nsaved {session.close()}")
            return 0
        except KeyboardInterrupt:  # as in a shell: drop the line, stay
            print("\n(Ctrl-D or /quit to leave)", flush=True)
            continue
        line = line.strip()
        if not line:
            continue
        try:
            if line.startswith("/"):
                out, done = command(session, line)
                print("\n".join(out), flush=True)
                if done:
                    return 0
                continue
            print("mags> ", end="", flush=True)
            try:
                with contextlib.closing(session.reply(line)) as reply:
                    for piece in reply:
                        print(piece, end="", flush=True)
            except KeyboardInterrupt:  # closing the reply undid the turn; the chat goes on
                print(" [interrupted: this turn was not applied to memory]", end="")
            print(flush=True)
        except MagsError as exc:
            print(f"error: {exc}", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        cfg = ChatConfig(**{f.name: getattr(args, f.name) for f in fields(ChatConfig)})
        session = open_session(cfg)
    except MagsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if session is None:
        return 2
    return repl(session)


def open_session(cfg: ChatConfig) -> ChatSession | None:
    """`ChatSession.open`; a memory that cannot be read is left untouched and, in a terminal,
    a new memory beside it is offered (None when the person declines)."""
    say = lambda s: print(s, flush=True)  # noqa: E731
    try:
        return ChatSession.open(cfg, say=say)
    except CorruptFileError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        fresh = free_path(cfg.memory)
        if not sys.stdin.isatty():
            print(f"the memory at {cfg.memory} was left as it is; start with --memory {fresh}",
                  file=sys.stderr)
            return None
        answer = input(f"{cfg.memory} was left as it is. Start a new memory at {fresh}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            return None
        return ChatSession.open(replace(cfg, memory=str(fresh)), say=say)


def free_path(path: str) -> str:
    """`path` with the first free suffix: memory-new, memory-new2, ..."""
    from pathlib import Path

    base = Path(path)
    for i in range(1, 1000):
        candidate = base.with_name(f"{base.name}-new{'' if i == 1 else i}")
        if not candidate.exists():
            return str(candidate)
    raise MagsError(f"no free name beside {path}", "pass --memory with a new directory")


if __name__ == "__main__":
    sys.exit(main())
