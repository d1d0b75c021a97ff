"""A SQLite cache of generations, keyed by a hash of model, settings and messages (HippoRAG's idea).

Generation is deterministic at temperature 0 and for a fixed seed, so a cached answer is the
answer: re-running an evaluation costs lookups instead of forward passes. Only successful
completions are stored. The database is safe for several processes (SQLite WAL).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path

from mags_lib.llm.base import ChatLLM, Completion, Message, score_each

_SCHEMA = """CREATE TABLE IF NOT EXISTS generations (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, request TEXT NOT NULL,
    text TEXT NOT NULL, usage TEXT NOT NULL, seconds REAL NOT NULL, finish TEXT NOT NULL)"""


def cache_key(model: str, kind: str, payload, **settings) -> str:
    blob = json.dumps({"model": model, "kind": kind, "payload": payload, **settings},
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class GenerationCache:
    """get/put of Completions in one SQLite file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, usage, seconds, finish FROM generations WHERE key=?", (key,)
            ).fetchone()
        if row is None:
            return None
        return Completion(text=row[0], usage=json.loads(row[1]), seconds=row[2],
                          finish_reason=row[3], cached=True)

    def put(self, key: str, model: str, request: dict, out: Completion) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO generations VALUES (?,?,?,?,?,?,?)",
                (key, model, json.dumps(request, ensure_ascii=False), out.text,
                 json.dumps(out.usage), out.seconds, out.finish_reason),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]


class CachedLLM:
    """Wraps any ChatLLM; identical requests are answered from the cache."""

    def __init__(self, inner: ChatLLM, cache: GenerationCache):
        self.inner = inner
        self.cache = cache
        self.name = inner.name

    def __getattr__(self, attr):  # expose the backend's extras (e.g. .llama, .model)
        return getattr(self.inner, attr)

    def _cached(self, kind: str, payload, call, **settings) -> Completion:
        key = cache_key(self.name, kind, payload, **settings)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        out = call()
        self.cache.put(key, self.name, {"kind": kind, "payload": payload, **settings}, out)
        return replace(out, cached=False)

    def chat(self, messages: list[Message], **kw) -> Completion:
        return self._cached("chat", messages, lambda: self.inner.chat(messages, **kw), **kw)

    def complete(self, prompt: str, **kw) -> Completion:
        return self._cached("complete", prompt, lambda: self.inner.complete(prompt, **kw), **kw)

    def score(self, prompt: str, continuations: list[str]) -> list[float]:
        """The backend's `score`, cached like a generation (the scores as JSON text)."""
        def call() -> Completion:
            t0 = time.perf_counter()
            scores = self.inner.score(prompt, list(continuations))
            return Completion(text=json.dumps(scores), seconds=time.perf_counter() - t0)

        return json.loads(self._cached("score", [prompt, list(continuations)], call).text)

    def score_prompts(self, prompts: list[str], continuations: list[str]) -> list[list[float]]:
        """The backend's `score_each` (`llm.base`), cached as one request."""
        def call() -> Completion:
            t0 = time.perf_counter()
            scores = score_each(self.inner, prompts, continuations)
            return Completion(text=json.dumps(scores), seconds=time.perf_counter() - t0)

        return json.loads(self._cached("score_prompts", [list(prompts), list(continuations)],
                                       call).text)
