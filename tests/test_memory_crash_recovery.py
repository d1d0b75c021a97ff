"""A save killed at every step (mags_lib.memory.persistence, apps/chat.py open_memory): the last
complete save always loads, through `LiquidMemory.load` and through the chat, nothing is lost,
and the next save leaves no temporary folder or backup behind.

The crash is injected in a forked child: the filesystem calls a save makes (os.mkdir, os.fsync,
os.replace, os.rename, os.unlink, os.rmdir; shutil.rmtree goes through the last two) are
wrapped so that the n-th one ends the process with `os._exit` right after it returns, as a
kill -9 or a power cut would (without the lost page cache). n runs from 1 until a save
completes, so every step of the current implementation is covered, whatever it is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mags_lib.apps.chat import ChatConfig, ChatSession
from mags_lib.apps.chat_cli import command
from mags_lib.embed import HashingEmbedder
from mags_lib.llm import Completion
from mags_lib.memory import LiquidMemory
from mags_lib.memory.persistence import backup_of, locate_save, remove_stale_temporaries
from tests.test_memory_persistence import busy_memory

CRASHED = 75  # the child's exit status when the injected crash ran
FS_CALLS = ("mkdir", "fsync", "replace", "rename", "unlink", "rmdir")
NEW_FACT = "The silver quib collects bells."


@contextlib.contextmanager
def crash_after(n: int) -> Iterator[None]:
    """End the process after the n-th successful filesystem call inside the block."""
    count = [0]

    def wrap(real: Callable) -> Callable:
        def call(*args, **kwargs):
            out = real(*args, **kwargs)
            count[0] += 1
            if count[0] == n:
                os._exit(CRASHED)
            return out
        return call

    real = {name: getattr(os, name) for name in FS_CALLS}
    for name in FS_CALLS:
        setattr(os, name, wrap(real[name]))
    try:
        yield
    finally:
        for name in FS_CALLS:
            setattr(os, name, real[name])


def run_killed(n: int, action: Callable[[], None]) -> int:
    """Run `action` in a forked child that crashes at filesystem call n; its exit status
    (CRASHED, or 0 when the action finished first)."""
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            with crash_after(n):
                action()
            status = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def texts(mem: LiquidMemory) -> set[str]:
    return {mem.node(n)["text"] for n in mem.graph}


def leftovers(path: Path) -> list[str]:
    """Everything beside `path` that a finished save should not leave."""
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(f".{path.name}."))


class Scripted:
    def __init__(self, text: str):
        self.text, self.name = text, "scripted"

    def chat(self, messages, **kw):
        return Completion(self.text, finish_reason="stop")


def chat_session(path: Path, fact: str, said: list[str] | None = None) -> ChatSession:
    llms = {"answer": Scripted("Noted."), "ask": Scripted("<recall>\nquery: x\n</recall>"),
            "write": Scripted(f"<engram>\nadd semantic 0.9: {fact}\n")}
    # user="": messages stored as typed (no date), so the texts compared are the same each day
    return ChatSession.open(ChatConfig(memory=str(path), embedder="hashing", user=""), llms=llms,
                            embedder=HashingEmbedder(),
                            say=said.append if said is not None else lambda s: None)


def check_recovery(path: Path, old: set[str], new: set[str]) -> None:
    """After a crash: load and the chat both open the same complete save (old or new); the
    chat says so when it used the backup; its next save leaves nothing behind."""
    from_backup = locate_save(path).from_backup
    loaded = texts(LiquidMemory.load(path, embedder=HashingEmbedder()))
    assert loaded in (old, new)
    said: list[str] = []
    session = chat_session(path, "Bo plays the cello.", said)
    assert texts(session.memory) == loaded
    assert any(f"recovered the memory from the backup {backup_of(path)}" in line
               for line in said) == from_backup
    "".join(session.reply("Bo plays the cello."))  # a turn, saved
    after = texts(LiquidMemory.load(path, embedder=HashingEmbedder()))
    assert after == loaded | {"Bo plays the cello."}
    assert leftovers(path) == []


def kill_at_every_step(tmp_path: Path, prepare: Callable[[Path], set[str]],
                       action: Callable[[Path], None], new_texts: Callable[[set[str]], set[str]]
                       ) -> int:
    """For n = 1, 2, ...: a fresh directory, `prepare` (returns the old texts), `action` killed
    at filesystem call n, `check_recovery`; until the action completes. Returns the number of
    steps that were killed."""
    for n in range(1, 200):
        path = tmp_path / f"run{n}" / "mem"
        old = prepare(path)
        status = run_killed(n, lambda path=path: action(path))
        assert status in (CRASHED, 0), f"the child failed at step {n} (see its stderr)"
        check_recovery(path, old, new_texts(old))
        if status == 0:
            return n - 1
    raise AssertionError("the save never completed")


def _saved_busy_memory(path: Path) -> set[str]:
    mem = busy_memory()
    mem.save(path)
    return texts(mem)


def _save_with_new_fact(path: Path) -> None:
    mem = LiquidMemory.load(path, embedder=HashingEmbedder())
    mem.observe(NEW_FACT, block="semantic")
    mem.save(path)


def test_liquid_memory_save_killed_at_every_step(tmp_path):
    steps = kill_at_every_step(tmp_path, _saved_busy_memory, _save_with_new_fact,
                               lambda old: old | {NEW_FACT})
    # tmp dir, three files and the dir synced, two renames, the backup's files removed
    assert steps >= 9


def _chat_with_one_turn(path: Path) -> set[str]:
    session = chat_session(path, "Ana lives in Porto.")
    "".join(session.reply("My sister Ana lives in Porto."))
    session.close()
    return texts(session.memory)


def _chat_turn(path: Path) -> None:
    session = chat_session(path, "Ana has a cat called Miso.")
    "".join(session.reply("Ana has a cat called Miso."))


def test_chat_save_killed_at_every_step(tmp_path):
    steps = kill_at_every_step(
        tmp_path, _chat_with_one_turn, _chat_turn,
        lambda old: old | {"Ana has a cat called Miso."})
    assert steps >= 9


def _interrupted_between_the_renames(path: Path) -> set[str]:
    """A save killed right after `path` became `.mem.bak` (the step found by killing it at each
    step until `path` is gone); returns the texts of the save in the backup."""
    for n in range(1, 50):
        old = _saved_busy_memory(path)
        assert run_killed(n, lambda: _save_with_new_fact(path)) == CRASHED
        if not path.exists():
            assert backup_of(path).is_dir()
            return old
        shutil.rmtree(path.parent)
    raise AssertionError("no step of the save left `path` missing")


def test_chat_opening_a_crashed_save_killed_at_every_step(tmp_path):
    """The chat's recovery itself (the backup renamed back into place) killed at every step."""
    kill_at_every_step(tmp_path, _interrupted_between_the_renames, _chat_turn,
                       lambda old: old | {"Ana has a cat called Miso."})


def test_two_chat_sessions_after_an_interrupted_save_lose_nothing(tmp_path):
    """The reported loss: a save killed between its renames, then two chat sessions each ending
    in /quit. Before the fix the first started empty and the second deleted the backup."""
    path = tmp_path / "mem"
    old = _interrupted_between_the_renames(path)
    said: list[str] = []
    for _ in range(2):
        session = chat_session(path, "Bo plays the cello.", said)
        assert texts(session.memory) == old
        _, done = command(session, "/quit")
        assert done
    assert sum("recovered the memory from the backup" in line for line in said) == 1
    assert texts(LiquidMemory.load(path, embedder=HashingEmbedder())) == old
    assert leftovers(path) == []


def test_a_save_recovers_the_backup_before_replacing_it(tmp_path):
    """`LiquidMemory.load` reads the backup without moving it; the next save puts it back in
    place first, so the backup is never deleted while it is the only complete save."""
    path = tmp_path / "mem"
    old = _interrupted_between_the_renames(path)
    mem = LiquidMemory.load(path, embedder=HashingEmbedder())
    assert texts(mem) == old and not path.exists()  # loading changes nothing on disk
    mem.observe(NEW_FACT, block="semantic")
    mem.save(path)
    assert texts(LiquidMemory.load(path, embedder=HashingEmbedder())) == old | {NEW_FACT}
    assert leftovers(path) == []


def test_stale_temporary_folders_are_removed_by_the_next_save(tmp_path):
    path = tmp_path / "mem"
    busy_memory().save(path)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)  # a process that has ended: its pid names no live process
    stale = tmp_path / f".mem.tmp-{pid}-0123abcd"
    live = tmp_path / f".mem.tmp-{os.getppid()}-0123abcd"  # a live process may be saving
    other = tmp_path / f".other.tmp-{pid}-0123abcd"  # another memory's
    for folder in (stale, live, other):
        folder.mkdir()
        (folder / "graph.json").write_text("{}")
    busy_memory().save(path)
    assert not stale.exists() and live.is_dir() and other.is_dir()
    assert remove_stale_temporaries(path) == []


@pytest.mark.parametrize("after", ["mkdir", "graph"])
def test_a_crash_before_the_renames_leaves_a_folder_the_next_save_removes(tmp_path, after):
    path = tmp_path / "mem"
    busy_memory().save(path)
    status = run_killed(1 if after == "mkdir" else 2, lambda: _save_with_new_fact(path))
    assert status == CRASHED
    assert [p.name.split("-")[0] for p in tmp_path.iterdir() if p.name != "mem"] == [".mem.tmp"]
    _save_with_new_fact(path)
    assert leftovers(path) == []
    assert NEW_FACT in texts(LiquidMemory.load(path, embedder=HashingEmbedder()))
