"""Saving, loading, snapshots, rollback and diff (mags_lib.memory.persistence, validate,
snapshots, state): exact round trips, hostile files, atomic writes."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from mags_lib.embed import HashingEmbedder
from mags_lib.errors import CorruptFileError, MagsError
from mags_lib.memory import LiquidMemory, MemoryConfig
from mags_lib.memory.state import capture

RULES = ["On rainy turns the purple glarb eats carrots.", "The blue zorp sings at dawn.",
         "On rainy turns the purple glarb eats stones.", "The red vorl hides under bridges."]


def make_memory(**overrides) -> LiquidMemory:
    return LiquidMemory(MemoryConfig.from_dict(overrides), embedder=HashingEmbedder(),
                        clock=lambda: 1000.0)


def busy_memory() -> LiquidMemory:
    mem = make_memory(maintenance_every=3, working_capacity=3)
    for i, rule in enumerate(RULES):
        mem.observe(rule, block="semantic", source=f"rules/{i}")
    mem.observe("glarb eats carrots", block="semantic", key="glarb|eats")
    for turn in range(8):
        mem.observe(f"turn {turn}: the glarb walked to room {turn}", source=turn)
        mem.perceive(f"player said hello number {turn}")
        mem.recall("what does the glarb eat", k=4)
        mem.step(reward=0.5)
    mem.recall("zorp sings", k=3)  # paths pending for the next step(reward)
    return mem


def state_of(mem: LiquidMemory) -> dict:
    s = capture(mem)
    order = np.argsort(s.ids)
    return {"config": s.config, "dim": s.dim, "counters": s.counters, "keys": s.keys,
            "nodes": sorted(s.nodes, key=lambda d: d["id"]),
            "edges": {frozenset((e["source"], e["target"])): {
                k: v for k, v in e.items() if k not in ("source", "target")} for e in s.edges},
            "working": s.working, "last_paths": s.last_paths, "tally": s.tally,
            "history": s.history, "ids": s.ids[order].tolist(),
            "vectors": s.vectors[order].tobytes()}


def play(mem: LiquidMemory) -> list:
    """The same continuation for two memories; returns what it observed."""
    out = []
    mem.step(reward=1.0)
    out.append(mem.observe("On rainy turns the purple glarb eats pebbles.", block="semantic"))
    for q in ("glarb eats", "zorp", "room 3"):
        out.append([(h.node_id, round(h.score, 12), h.path) for h in mem.recall(q, k=5)])
        mem.step(reward=-0.5)
    out.append(mem.consolidate(flush=True))
    return out


def test_save_load_round_trips_exactly(tmp_path):
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    loaded = LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())
    assert state_of(loaded) == state_of(mem)
    loaded.clock = mem.clock
    assert play(loaded) == play(mem)
    assert state_of(loaded) == state_of(mem)


def test_saved_files_are_json_and_plain_numpy(tmp_path):
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    doc = json.loads((tmp_path / "mem" / "graph.json").read_text())
    assert doc["format"] == "mags-liquid-memory" and doc["version"] == 2
    assert {"nodes", "edges", "config", "counters", "working"} <= set(doc)
    arr = np.load(tmp_path / "mem" / "embeddings.npy", allow_pickle=False)
    assert arr.dtype.names == ("id", "vector") and arr["vector"].shape == (len(mem), 384)
    manifest = json.loads((tmp_path / "mem" / "manifest.json").read_text())
    assert manifest == {"format": "mags-liquid-memory", "version": 2, "files": _signatures(
        tmp_path / "mem")}
    assert sorted(p.name for p in (tmp_path / "mem").iterdir()) == [
        "embeddings.npy", "graph.json", "manifest.json"]


def _signatures(path: Path) -> dict:
    """The manifest's "files" for the save files present in `path`."""
    return {name: {"sha256": hashlib.sha256((path / name).read_bytes()).hexdigest(),
                   "size": (path / name).stat().st_size}
            for name in ("graph.json", "embeddings.npy") if (path / name).is_file()}


def _resign(path: Path) -> None:
    """A manifest that matches the files as they are now (a forger's, or a careful edit)."""
    (path / "manifest.json").write_text(json.dumps(
        {"format": "mags-liquid-memory", "version": 2, "files": _signatures(path)}))


def test_empty_memory_round_trips(tmp_path):
    mem = make_memory()
    mem.save(tmp_path / "empty")
    loaded = LiquidMemory.load(tmp_path / "empty", embedder=HashingEmbedder())
    assert len(loaded) == 0 and state_of(loaded) == state_of(mem)


def _edit_json(path: Path, edit) -> None:
    doc = json.loads((path / "graph.json").read_text())
    edit(doc)
    (path / "graph.json").write_text(json.dumps(doc))


def _set(keys, value):
    def edit(doc):
        target = doc
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return edit


def _write(text):
    def corrupt(path: Path) -> None:
        (path / "graph.json").write_text(text(path))
    return corrupt


def _npy(make):
    def corrupt(path: Path) -> None:
        np.save(path / "embeddings.npy", make(np.load(path / "embeddings.npy")),
                allow_pickle=False)
    return corrupt


def _nan_vector(arr):
    arr = arr.copy()
    arr["vector"][0, 0] = np.nan
    return arr


def _other_dim(arr):
    out = np.zeros(len(arr), dtype=[("id", "<i8"), ("vector", "<f4", (16,))])
    out["id"] = arr["id"]
    return out


def _shifted_ids(arr):
    arr = arr.copy()
    arr["id"] += 1000
    return arr


CORRUPTIONS = {
    "truncated json": _write(lambda p: (p / "graph.json").read_text()[:200]),
    "not json": _write(lambda p: "hello"),
    "deeply nested": _write(lambda p: "[" * 100_000 + "]" * 100_000),
    "bad version": lambda p: _edit_json(p, _set(["version"], 99)),
    "bad format": lambda p: _edit_json(p, _set(["format"], "pickle")),
    "missing key": lambda p: _edit_json(p, lambda d: d.pop("edges")),
    "NaN weight": _write(lambda p: (p / "graph.json").read_text().replace(
        '"weight":', '"weight":NaN,"x":', 1)),
    "zero weight": lambda p: _edit_json(p, _set(["edges", 0, "weight"], 0.0)),
    "weight above one": lambda p: _edit_json(p, _set(["edges", 0, "weight"], 1.5)),
    "huge id": lambda p: _edit_json(p, _set(["nodes", 0, "id"], 10**30)),
    "huge int literal": _write(lambda p: (p / "graph.json").read_text().replace(
        '"step":', '"step":' + "9" * 5000 + ',"x":', 1)),
    "string id": lambda p: _edit_json(p, _set(["nodes", 0, "id"], "0")),
    "dangling edge": lambda p: _edit_json(p, _set(["edges", 0, "target"], 123456)),
    "node missing field": lambda p: _edit_json(p, lambda d: d["nodes"][0].pop("text")),
    "node extra field": lambda p: _edit_json(p, _set(["nodes", 0, "evil"], 1)),
    "confidence out of range": lambda p: _edit_json(p, _set(["nodes", 0, "confidence"], -3)),
    "next_id too small": lambda p: _edit_json(p, _set(["counters", "next_id"], 1)),
    "bad config": lambda p: _edit_json(p, _set(["config", "merge_threshold"], "high")),
    "unknown config": lambda p: _edit_json(p, _set(["config", "evil"], 1)),
    "huge config": lambda p: _edit_json(p, _set(["config", "max_nodes"], 10**40)),
    "bad block": lambda p: _edit_json(p, _set(["nodes", 0, "block"], "procedural")),
    "embedding NaN": _npy(_nan_vector),
    "embedding dim mismatch": _npy(_other_dim),
    "embedding ids mismatch": _npy(_shifted_ids),
    "embedding truncated": lambda p: (p / "embeddings.npy").write_bytes(
        (p / "embeddings.npy").read_bytes()[:300]),
    "embedding object array": lambda p: np.save(
        p / "embeddings.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True),
    "embedding missing": lambda p: (p / "embeddings.npy").unlink(),
    "graph missing": lambda p: (p / "graph.json").unlink(),
}


@pytest.mark.parametrize("signed", ["edited", "re-signed"])
@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_malformed_files_raise_corrupt_file_error(tmp_path, name, signed):
    """An edited file is refused by the manifest; with a manifest re-made to match it (or none
    and allow_unsigned), by the validation of its contents."""
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    before = state_of(mem)
    CORRUPTIONS[name](tmp_path / "mem")
    if signed == "re-signed":
        _resign(tmp_path / "mem")
    with pytest.raises(CorruptFileError) as err:
        LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())
    assert err.value.fix and str(tmp_path / "mem") in err.value.cause
    assert ("manifest.json" in err.value.cause) == (
        signed == "edited" or name in ("graph missing", "embedding missing"))
    assert state_of(mem) == before  # nothing touched the live memory
    (tmp_path / "mem" / "manifest.json").unlink()
    with pytest.raises(CorruptFileError):
        LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder(), allow_unsigned=True)


def test_embedder_dimension_mismatch_is_reported(tmp_path):
    busy_memory().save(tmp_path / "mem")
    with pytest.raises(CorruptFileError, match="dimension"):
        LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder(dim=64))


def test_failed_save_keeps_the_previous_save(tmp_path, monkeypatch):
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    first = state_of(LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder()))
    mem.observe("a brand new fact that must not be half saved", block="semantic")

    def broken_save(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "save", broken_save)
    with pytest.raises(OSError):
        mem.save(tmp_path / "mem")
    monkeypatch.undo()

    def broken_replace(*args, **kwargs):
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        mem.save(tmp_path / "mem")
    monkeypatch.undo()
    assert state_of(LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mem"]  # no temporary leftovers
    mem.save(tmp_path / "mem")
    assert state_of(LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())) == \
        state_of(mem)


def test_second_rename_failure_restores_the_previous_save(tmp_path, monkeypatch):
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    first = state_of(LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder()))
    mem.observe("another fact", block="semantic")
    real_replace, calls = os.replace, []

    def second_fails(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("crash between the renames")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", second_fails)
    with pytest.raises(OSError):
        mem.save(tmp_path / "mem")
    monkeypatch.undo()
    assert state_of(LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())) == first


def test_load_falls_back_to_the_backup_after_a_crash(tmp_path):
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    os.replace(tmp_path / "mem", tmp_path / ".mem.bak")  # as a crash after the first rename
    assert state_of(LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())) == \
        state_of(mem)


_KILL_BETWEEN_RENAMES = """
import os, sys
sys.path.insert(0, {root!r})
from tests.test_memory_persistence import busy_memory
mem = busy_memory()
mem.save({path!r})
mem.observe("a fact only the second save has", block="semantic")
real_replace, calls = os.replace, []
def replace(src, dst):
    calls.append(dst)
    real_replace(src, dst)
    if len(calls) == {after}:
        os.kill(os.getpid(), 9)  # the process dies here, as under kill -9 or a power cut
os.replace = replace
mem.save({path!r})
"""


@pytest.mark.parametrize("after", [1, 2])
def test_a_save_killed_between_or_after_its_renames_loads(tmp_path, after):
    # killed after the first rename: only `.mem.bak` (the first save) is there, and load reads
    # it; after the second: the new save is in place and its backup left behind
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[1])
    script = _KILL_BETWEEN_RENAMES.format(root=root, path=str(tmp_path / "mem"), after=after)
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    assert (tmp_path / ".mem.bak").is_dir()
    loaded = LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())
    texts = {loaded.graph.nodes[n]["text"] for n in loaded.graph.nodes}
    assert ("a fact only the second save has" in texts) == (after == 2)
    assert len(loaded) == len(busy_memory()) + (after == 2)


def test_a_flipped_byte_in_the_embeddings_is_refused(tmp_path):
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    emb = tmp_path / "mem" / "embeddings.npy"
    data = bytearray(emb.read_bytes())
    data[-5] ^= 0x01  # inside the last vector: still a valid float, still a valid .npy
    emb.write_bytes(bytes(data))
    with pytest.raises(CorruptFileError, match="embeddings.npy does not match its SHA-256"):
        LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())
    (tmp_path / "mem" / "manifest.json").unlink()  # unsigned, graph.json's checksum catches it
    with pytest.raises(CorruptFileError, match="checksum"):
        LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder(), allow_unsigned=True)
    assert emb.read_bytes() == bytes(data)  # the file is left as it was


def _load(path: Path, **kw) -> LiquidMemory:
    return LiquidMemory.load(path, embedder=HashingEmbedder(), **kw)


def _refused(path: Path, *names: str) -> CorruptFileError:
    """The error loading `path` raises; its cause names `names`."""
    with pytest.raises(CorruptFileError) as err:
        _load(path)
    assert all(name in err.value.cause for name in names), err.value.cause
    return err.value


def test_one_edited_character_of_a_node_text_is_refused(tmp_path):
    busy_memory().save(tmp_path / "mem")
    graph = tmp_path / "mem" / "graph.json"
    text = graph.read_text()
    graph.write_text(text.replace("purple glarb", "purple glarp", 1))
    err = _refused(tmp_path / "mem", str(graph), "does not match its SHA-256", "manifest.json")
    assert "allow_unsigned=True" in err.fix


def test_a_halved_edge_weight_is_refused(tmp_path):
    busy_memory().save(tmp_path / "mem")
    _edit_json(tmp_path / "mem", lambda d: d["edges"][0].update(weight=d["edges"][0]["weight"] / 2))
    _refused(tmp_path / "mem", "graph.json does not match its SHA-256")


def test_a_deleted_checksum_and_a_flipped_vector_byte_are_refused(tmp_path):
    busy_memory().save(tmp_path / "mem")
    _edit_json(tmp_path / "mem", lambda d: d.pop("embeddings_sha256"))
    emb = tmp_path / "mem" / "embeddings.npy"
    data = bytearray(emb.read_bytes())
    data[-5] ^= 0x01
    emb.write_bytes(bytes(data))
    _refused(tmp_path / "mem", "graph.json does not match its SHA-256")
    _resign(tmp_path / "mem")  # re-signed, it is a valid save without the checksum
    assert _load(tmp_path / "mem").graph


def test_a_deleted_manifest_loads_only_with_allow_unsigned(tmp_path):
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    (tmp_path / "mem" / "manifest.json").unlink()
    err = _refused(tmp_path / "mem", str(tmp_path / "mem" / "manifest.json"), "unsigned save")
    assert "allow_unsigned=True" in err.fix
    assert state_of(_load(tmp_path / "mem", allow_unsigned=True)) == state_of(mem)


def test_a_stray_file_in_the_save_is_refused(tmp_path):
    busy_memory().save(tmp_path / "mem")
    (tmp_path / "mem" / "notes.txt").write_text("mine")
    err = _refused(tmp_path / "mem", str(tmp_path / "mem" / "notes.txt"), "not part of the save")
    assert "move it out" in err.fix


@pytest.mark.parametrize("edit", ["wrong size", "bad digest", "extra entry", "version 1",
                                  "not json"])
def test_a_malformed_manifest_is_refused(tmp_path, edit):
    busy_memory().save(tmp_path / "mem")
    manifest = tmp_path / "mem" / "manifest.json"
    doc = json.loads(manifest.read_text())
    if edit == "wrong size":
        doc["files"]["embeddings.npy"]["size"] += 1
    elif edit == "bad digest":
        doc["files"]["graph.json"]["sha256"] = "0" * 63
    elif edit == "extra entry":
        doc["files"]["notes.txt"] = doc["files"]["graph.json"]
    elif edit == "version 1":
        doc["version"] = 1
    manifest.write_text("{" if edit == "not json" else json.dumps(doc))
    _refused(tmp_path / "mem", "manifest.json" if edit != "wrong size" else "embeddings.npy")


def test_a_version_1_save_loads_with_allow_unsigned_and_is_signed_by_saving(tmp_path):
    """What saves looked like before the manifest: version 1, maybe without the checksum."""
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    (tmp_path / "mem" / "manifest.json").unlink()
    _edit_json(tmp_path / "mem", lambda d: (d.update(version=1), d.pop("embeddings_sha256")))
    _refused(tmp_path / "mem", "unsigned save")
    old = _load(tmp_path / "mem", allow_unsigned=True)
    assert state_of(old) == state_of(mem)
    old.save(tmp_path / "mem")
    assert state_of(_load(tmp_path / "mem")) == state_of(mem)
    _resign(tmp_path / "mem")  # a version-1 graph.json is never a signed save
    _edit_json(tmp_path / "mem", _set(["version"], 1))
    _resign(tmp_path / "mem")
    _refused(tmp_path / "mem", "version 1 is not supported")


def test_a_bad_checksum_field_is_refused_even_unsigned(tmp_path):
    busy_memory().save(tmp_path / "mem")
    (tmp_path / "mem" / "manifest.json").unlink()
    _edit_json(tmp_path / "mem", _set(["embeddings_sha256"], "not hex"))
    with pytest.raises(CorruptFileError, match="embeddings_sha256"):
        _load(tmp_path / "mem", allow_unsigned=True)


def test_a_save_with_the_flat_config_of_before_the_groups_loads(tmp_path):
    """Memories saved before MemoryConfig was split into groups stored its fields flat; they
    load into the same config, and snapshots taken from them decay the same way."""
    mem = busy_memory()
    mem.save(tmp_path / "mem")
    graph = tmp_path / "mem" / "graph.json"
    doc = json.loads(graph.read_text())
    assert set(doc["config"]) == {"engram", "recall", "dynamics", "consolidation", "objective",
                                  "index"}
    doc["config"] = mem.config.flat()
    graph.write_text(json.dumps(doc))
    _resign(tmp_path / "mem")
    loaded = LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())
    assert loaded.config == mem.config and state_of(loaded) == state_of(mem)


def test_recall_refuses_a_negative_k_and_texts_past_the_limit():
    from mags_lib.memory.types import MAX_ITEM_CHARS

    mem = busy_memory()
    assert mem.recall("glarb", k=0) == []
    for k in (-1, 2.5, True):
        with pytest.raises(MagsError, match="k must be an integer"):
            mem.recall("glarb", k=k)
    with pytest.raises(MagsError, match="above the limit"):
        mem.recall("x" * (MAX_ITEM_CHARS + 1), k=3)
    before = len(mem)
    with pytest.raises(MagsError, match="above the limit") as err:
        mem.observe("word " * 200_000, block="semantic")
    assert "split the text" in err.value.fix and len(mem) == before
    mem.observe("w" * MAX_ITEM_CHARS, block="semantic")
    assert len(mem) == before + 1


def test_save_refuses_to_overwrite_a_foreign_directory(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "thesis.tex").write_text("precious")
    with pytest.raises(MagsError):
        busy_memory().save(tmp_path / "notes")
    assert (tmp_path / "notes" / "thesis.tex").read_text() == "precious"


def test_rollback_restores_the_exact_state_and_future():
    mem = busy_memory()
    snap = mem.snapshot()
    before = state_of(mem)
    first_run = play(mem)
    after_first = state_of(mem)
    assert after_first != before
    mem.rollback(snap)
    assert state_of(mem) == before
    assert play(mem) == first_run
    assert state_of(mem) == after_first
    mem.rollback(snap)  # a snapshot can be used again
    assert state_of(mem) == before


def test_diff_lists_added_removed_and_reweighted():
    mem = make_memory(min_edge_weight=0.99, temporal_weight=0.99, decay_rate=0.0)
    a = mem.observe("The glarb guards the bridge.", block="semantic")
    b = mem.observe("Quartz crystals shimmer violet.", block="semantic")
    mem._connect(a, b, 0.5, "link")
    s0 = mem.snapshot()
    c = mem.observe("The zorp sleeps in caves.", block="semantic")
    mem._connect(b, c, 0.4, "link")
    mem._reweight(a, b, lambda w: 0.7)
    mem.observe("On rainy turns the purple glarb eats carrots.", block="semantic")
    d = mem.diff(s0)
    assert d.nodes_added == [c, c + 1] and d.nodes_removed == []
    assert d.edges_added == [(b, c)] and d.edges_reweighted[(a, b)] == (0.5, 0.7)
    assert d.nodes_changed == {}
    s1 = mem.snapshot()
    assert mem.diff(s0, s1) == d and mem.diff(s1).empty
    back = mem.diff(s1, s0)
    assert back.nodes_removed == [c, c + 1] and back.edges_removed == [(b, c)]


def test_snapshot_ids_and_limits():
    mem = make_memory(max_snapshots=2)
    ids = [mem.snapshot() for _ in range(3)]
    assert ids == [0, 1, 2]
    with pytest.raises(MagsError, match="no snapshot 0"):
        mem.rollback(0)
    mem.rollback(2)


def test_history_survives_removal_of_a_newer_version_without_keep_history(tmp_path):
    mem = make_memory(keep_history=False)
    old = mem.observe(RULES[0], block="semantic")
    new = mem.observe(RULES[2], block="semantic")
    assert mem.node(old)["superseded_by"] == new and not mem.graph.edges[new, old]["solid"]
    mem._remove_nodes([new])
    assert [h.node_id for h in mem.history(old)] == [old]
    assert mem.recall("glarb eats", 3) == []  # the old version is not current either
    mem.save(tmp_path / "mem")
    loaded = LiquidMemory.load(tmp_path / "mem", embedder=HashingEmbedder())
    assert state_of(loaded) == state_of(mem)
