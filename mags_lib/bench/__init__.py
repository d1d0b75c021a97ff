"""Benchmarks of the memory (`python -m mags_lib.bench memory`, `... index`) and of the action
parser (`... parser`).

Each prints one JSON object on stdout (and writes it with `--out PATH`).

* `memory`: for each size N, a fresh subprocess builds a `LiquidMemory` with a `HashingEmbedder`
  from N synthetic facts (`corpus.make_corpus`) whose embeddings are computed beforehand, so the
  throughput is that of the graph and its indexes, not of the embedder; then it times `recall`
  with precomputed query embeddings, and reports node and edge counts, peak RSS, and whether the
  targets in `MEMORY_TARGETS` are met (`memory_bench.py`).
* `index`: `VectorIndex` and `BM25Index` alone, at the same sizes (`index_bench.py`).
* `parser`: `parse_actions` on adversarial texts (thousands of mismatched tags, a 1 MB line,
  ...) at two or more sizes, with how its time grows with the size (`parser_bench.py`).

Timings are wall-clock on a shared machine: the JSON records the load average next to them.
"""

MEMORY_TARGETS = {
    "recall_p50_ms_max": 20.0,   # at 100k nodes
    "recall_p95_ms_max": 50.0,   # at 100k nodes
    "engram_per_s_min": 2000.0,  # observations written per second (embeddings precomputed)
    "peak_rss_mb_max": 2048.0,   # whole process at 100k nodes
}

PARSER_TARGETS = {
    "ms_at_1mb_max": 50.0,  # one parse of a 1 MB adversarial text (best of the repeats)
    "growth_max": 3.0,      # time per character, largest size over smallest (1 when linear)
}
