"""`python -m mags_lib.bench memory`: build a `LiquidMemory` of N synthetic facts, time recall.

Per size, in a fresh process (so that peak RSS is that size's own): make N facts and their
`HashingEmbedder` embeddings, then write them with `observe_many(batch, embeddings=...)` in
batches of `batch` (one `step()` after each batch, timed apart), every `semantic_every`-th fact in
the semantic block and the rest as episodes. Then time `recall(question, k, query_embedding=...)`
for `queries` questions about stored facts, after a few untimed warm-up recalls.

`run_size` is the in-process measurement; `bench_memory` runs it once per size in a subprocess
(`python -m mags_lib.bench memory --single N`) and checks the targets at the largest size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from mags_lib.bench import MEMORY_TARGETS
from mags_lib.bench.corpus import make_corpus
from mags_lib.bench.timing import latency_summary, machine_info, time_each
from mags_lib.rss import peak_rss_mb


@dataclass
class MemoryBenchConfig:
    sizes: list[int] = field(default_factory=lambda: [1_000, 10_000, 100_000],
                             metadata={"help": "numbers of facts written, one subprocess each"})
    queries: int = field(default=200, metadata={"help": "timed recalls per size"})
    seed: int = field(default=0, metadata={"help": "corpus, query and memory seed"})
    dim: int = field(default=384, metadata={"help": "HashingEmbedder dimension"})
    k: int = field(default=10, metadata={"help": "hits per recall"})
    batch: int = field(default=1_000, metadata={"help": "facts per observe_many call"})
    semantic_every: int = field(default=3, metadata={
        "help": "every n-th fact goes to the semantic block (contradiction checks run there)"})
    warmup: int = field(default=5, metadata={"help": "untimed recalls before the timed ones"})
    exact_below: int | None = field(default=None, metadata={
        "help": "MemoryConfig.exact_below (vector index exact below this size); None = default"})
    memory_config: dict = field(default_factory=dict, metadata={
        "help": "other MemoryConfig overrides, e.g. {'hnsw_expansion_add': 32}"})


BLAS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""One BLAS thread per size's process: a memory shares the CPU with an LLM, and a BLAS pool that
spins on both cores of a loaded 2-core machine makes small products 10-30x slower."""


def run_size(n: int, cfg: MemoryBenchConfig) -> dict:
    """Build a memory of `n` facts and time its writes and recalls, in this process."""
    from mags_lib.embed import HashingEmbedder
    from mags_lib.memory import LiquidMemory, MemoryConfig

    corpus = make_corpus(n, cfg.seed)
    embedder = HashingEmbedder(cfg.dim)
    t = time.perf_counter()
    vectors = embedder.encode(corpus.facts)
    embed_s = time.perf_counter() - t
    picked = np.random.default_rng(cfg.seed + 1).integers(n, size=cfg.queries + cfg.warmup)
    questions = [corpus.questions[i] for i in picked]
    q_vectors = embedder.encode(questions)
    items = [{"text": fact, "source": f"bench/{j}", "time": float(j),
              "block": "semantic" if j % cfg.semantic_every == 0 else "episodic"}
             for j, fact in enumerate(corpus.facts)]
    rss_before = peak_rss_mb()

    overrides = {"seed": cfg.seed, **cfg.memory_config}
    if cfg.exact_below is not None:
        overrides["exact_below"] = cfg.exact_below
    memory = LiquidMemory(config=MemoryConfig.from_dict(overrides), embedder=embedder)
    node_of: list[int] = []
    write_s, batch_rates, step_ms = 0.0, [], []
    for start in range(0, n, cfg.batch):
        t = time.perf_counter()
        node_of += memory.observe_many(items[start:start + cfg.batch],
                                       embeddings=vectors[start:start + cfg.batch])
        dt = time.perf_counter() - t
        write_s += dt
        batch_rates.append((len(node_of), min(cfg.batch, n - start) / dt))
        t = time.perf_counter()
        memory.step()
        step_ms.append((time.perf_counter() - t) * 1e3)

    def recall(j: int):
        return memory.recall(questions[j], k=cfg.k, query_embedding=q_vectors[j])

    for j in range(cfg.warmup):
        recall(j)
    ms, hits = time_each(recall, list(range(cfg.warmup, cfg.warmup + cfg.queries)))
    answered = [_current(memory, node_of[picked[cfg.warmup + i]]) in {h.node_id for h in found}
                for i, found in enumerate(hits)]
    tail = [rate for done, rate in batch_rates if done > 0.9 * n] or [batch_rates[-1][1]]
    return {"size": n,
            "nodes": memory.graph.number_of_nodes(),
            "edges": memory.graph.number_of_edges(),
            "vector_index_approximate": bool(memory.index is not None
                                             and getattr(memory.index, "approximate", False)),
            "embed_s_not_counted": embed_s,
            "build_s": write_s,
            "engram_per_s": n / write_s,
            "nodes_per_s": memory.graph.number_of_nodes() / write_s,
            "engram_per_s_last_10pct": float(np.mean(tail)),
            "step": latency_summary(step_ms),
            "recall": latency_summary(ms),
            "recall_answer_hit_rate": float(np.mean(answered)) if answered else 0.0,
            "peak_rss_mb": peak_rss_mb(),
            "peak_rss_mb_before_build": rss_before}


def _current(memory, node_id: int) -> int | None:
    """The node that now holds a fact: itself, or the newer version that superseded it (the
    synthetic corpus reuses subject-slot pairs, so the contradiction check supersedes some facts;
    recall then rightly returns the newer version). None if the fact was forgotten."""
    nodes = memory.graph.nodes
    seen = set()
    while node_id in nodes and nodes[node_id].get("superseded_by") is not None and node_id not in seen:
        seen.add(node_id)
        node_id = nodes[node_id]["superseded_by"]
    return node_id if node_id in nodes else None


def _single_cmd(n: int, cfg: MemoryBenchConfig) -> list[str]:
    cmd = [sys.executable, "-m", "mags_lib.bench", "memory", "--single", str(n),
           "--queries", str(cfg.queries), "--seed", str(cfg.seed)]
    if cfg.exact_below is not None:
        cmd += ["--exact-below", str(cfg.exact_below)]
    return cmd + [f"--set={key}={json.dumps(value)}" for key, value in cfg.memory_config.items()]


def meets_targets(result: dict) -> dict[str, bool]:
    """The targets of `MEMORY_TARGETS`, checked on one size's result."""
    t = MEMORY_TARGETS
    return {"recall_p50": result["recall"]["p50_ms"] <= t["recall_p50_ms_max"],
            "recall_p95": result["recall"]["p95_ms"] <= t["recall_p95_ms_max"],
            "engram_throughput": result["engram_per_s"] >= t["engram_per_s_min"],
            "peak_rss": result["peak_rss_mb"] <= t["peak_rss_mb_max"]}


def bench_memory(cfg: MemoryBenchConfig) -> dict:
    """`run_size` for every size, each in a fresh subprocess; targets checked at the largest."""
    machine = machine_info()
    results = []
    from mags_lib.progress import progress

    for n in progress(cfg.sizes, "memory sizes"):
        proc = subprocess.run(_single_cmd(n, cfg), capture_output=True, text=True, check=False,
                              env={**os.environ, **BLAS_ENV})
        if proc.returncode != 0:
            raise RuntimeError(f"memory bench at size {n} failed:\n{proc.stderr[-4000:]}")
        results.append(json.loads(proc.stdout))
    largest = max(results, key=lambda r: r["size"])
    machine["load_average_after"] = machine_info().get("load_average_1m_5m_15m")
    return {"benchmark": "memory", "config": asdict(cfg), "machine": machine,
            "targets": MEMORY_TARGETS, "env": BLAS_ENV, "targets_evaluated_at_size": largest["size"],
            "meets_targets": meets_targets(largest), "results": results}
