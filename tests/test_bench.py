"""Tests of the benchmark harness at tiny sizes (`python -m mags_lib.bench ...` in a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mags_lib.bench.corpus import make_corpus


def run_bench(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "mags_lib.bench", *args], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)  # exactly one JSON object on stdout


def test_corpus_is_deterministic_and_lexically_varied():
    a, b = make_corpus(500, seed=3), make_corpus(500, seed=3)
    assert a.facts == b.facts and a.questions == b.questions and len(a.facts) == 500
    assert make_corpus(500, seed=4).facts != a.facts
    words = {w for fact in a.facts for w in fact.lower().split()}
    assert len(words) > 400


def test_memory_bench_tiny(tmp_path):
    out = tmp_path / "bench.json"
    result = run_bench("memory", "--sizes", "200", "--queries", "20", "--out", str(out))
    assert json.loads(out.read_text()) == result
    assert {"config", "machine", "targets", "meets_targets", "results"} <= set(result)
    assert set(result["meets_targets"]) == {"recall_p50", "recall_p95", "engram_throughput",
                                            "peak_rss"}
    assert all(isinstance(v, bool) for v in result["meets_targets"].values())
    assert result["machine"]["cpu_count"] >= 1 and result["machine"]["numpy"]
    (size,) = result["results"]
    assert size["size"] == 200
    for key in ("nodes", "edges", "build_s", "engram_per_s", "peak_rss_mb"):
        assert size[key] > 0, key
    assert 0 < size["recall"]["p50_ms"] <= size["recall"]["p95_ms"]
    assert size["nodes"] <= 200


def test_index_bench_tiny():
    result = run_bench("index", "--sizes", "300", "--queries", "10")
    (size,) = result["results"]
    assert size["vector"]["recall_at_10"] == pytest.approx(1.0)  # exact below the threshold
    assert size["vector"]["search"]["p50_ms"] > 0
    assert size["bm25"]["add_us_per_doc"] > 0 and size["bm25"]["search_question"]["p50_ms"] > 0


def test_parser_bench_tiny(tmp_path):
    out = tmp_path / "parser.json"
    result = run_bench("parser", "--sizes", "20000,2000", "--repeats", "1",
                       "--shapes", "opens_then_mismatched_closes,lt_line", "--out", str(out))
    assert json.loads(out.read_text()) == result
    assert {"config", "machine", "targets", "meets_targets", "results", "growth"} <= set(result)
    shapes = {"opens_then_mismatched_closes", "lt_line"}
    assert [row["size"] for row in result["results"]] == [2000, 20000]
    assert all(set(row["ms"]) == shapes and min(row["ms"].values()) > 0
               for row in result["results"])
    assert set(result["growth"]) == shapes and set(result["meets_targets"]["linear"]) == shapes
    assert result["meets_targets"]["ms_at_1mb"] == {}  # no 1 MB size was asked for
    assert result["targets"]["ms_at_1mb_max"] == 50.0


def test_parser_bench_shapes_have_their_size():
    from mags_lib.bench.parser_bench import SHAPES, adversarial_text

    for shape in SHAPES:
        text = adversarial_text(shape, 10_000)
        assert 9_000 <= len(text) <= 10_000, shape
    proc = subprocess.run([sys.executable, "-m", "mags_lib.bench", "parser", "--shapes", "nope"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode != 0 and "unknown parser shapes ['nope']" in proc.stderr


def test_agent_bench_summaries_and_targets():
    from mags_lib.bench import agent_bench

    marks = [{"turn_s": {"p50_s": 0.5}, "prompt_tokens_per_turn": 100.0},
             {"turn_s": {"p50_s": 0.6}, "prompt_tokens_per_turn": 110.0}]
    full = [{"turn_s": {"p50_s": 0.3}, "prompt_tokens_per_turn": 50.0},
            {"turn_s": {"p50_s": 2.0}, "prompt_tokens_per_turn": 400.0}]
    out = agent_bench.agent_targets({"mags": {"marks": marks}, "full_context": {"marks": full}})
    assert out["mags_p50_at_most_1s"] and out["mags_flat"]
    assert out["full_context_tokens_per_turn"] == [50.0, 400.0]
    slow = agent_bench.agent_targets({"mags": {"marks": [*marks, {"turn_s": {"p50_s": 1.2}}]}})
    assert not slow["mags_p50_at_most_1s"] and not slow["mags_flat"]


def test_agent_bench_judges_flatness_by_kind_of_turn():
    """A window with more decision turns has a higher pooled p50; flat means each kind of turn
    costs the same at the last mark as at the first, and a kind that grows is not flat."""
    from mags_lib.bench import agent_bench

    def mark(pooled, decision, other):
        return {"turn_s": {"p50_s": pooled}, "decision_turn_s": {"p50_s": decision},
                "other_turn_s": {"p50_s": other}}

    mixed = agent_bench.agent_targets({"mags": {"marks": [mark(0.34, 0.79, 0.31),
                                                          mark(0.67, 0.80, 0.32)]}})
    assert mixed["mags_flat"] and not mixed["mags_flat_pooled"]
    assert mixed["mags_p50_by_kind"] == {"decision": [0.79, 0.80], "other": [0.31, 0.32]}
    growing = agent_bench.agent_targets({"mags": {"marks": [mark(0.34, 0.79, 0.31),
                                                            mark(0.40, 0.80, 0.50)]}})
    assert not growing["mags_flat"] and growing["mags_flat_pooled"]
    rows = [{"turn": t, "decision": t % 3 == 0, "observe_s": 0.1,
             **({"act_s": 0.5} if t % 3 == 0 else {}), "stages": {}, "tokens": {}}
            for t in range(30)]
    first, last = agent_bench.summarise_turns(rows, [10, 30], 9)
    assert first["decisions_timed"] == 3 and last["other_turn_s"]["p50_s"] == 0.1
    assert last["decision_turn_s"]["p50_s"] == 0.6


@pytest.mark.slow
def test_agent_bench_plays_and_times_every_stage(tmp_path):
    """The CLI with the embedded model (the trained ones when notebook 04 made them)."""
    import json
    import subprocess
    import sys

    out = tmp_path / "agent.json"
    proc = subprocess.run([sys.executable, "-m", "mags_lib.bench", "agent", "--turns", "12,24",
                           "--window", "10", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert json.loads(out.read_text())["agents"] == result["agents"]
    mags = result["agents"]["mags"]["marks"]
    assert [m["turn"] for m in mags] == [12, 24] and all(m["turns_timed"] == 10 for m in mags)
    assert {"write", "apply_step"} <= set(mags[-1]["stages"])
    assert mags[-1]["prompt_tokens_per_turn"] > 0
    assert "mags_p50_at_most_1s" in result["targets"]


@pytest.mark.slow
def test_conversation_bench_reads_and_answers_with_mags(tmp_path):
    """The CLI on a development persona (LoCoMo need not be there), a few turns."""
    import json
    import subprocess
    import sys

    out = tmp_path / "conversation.json"
    proc = subprocess.run([sys.executable, "-m", "mags_lib.bench", "conversation", "--source",
                           "persona", "--conversation", "10000", "--turns", "4", "--questions",
                           "1", "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["conversation"] == "persona-dev-10000" and result["turns"] == 4
    assert result["questions"] <= 1 and result["turn_s"]["p50"] > 0
    assert set(result["targets"]) == {"turn_p50", "question_p50"}
    assert {"write", "apply_step"} <= set(result["stages_p50"]["turn"])
    assert "answer" in result["stages_p50"]["question"]
    # the reader is the evaluation's ('auto'): the trained answer model where notebook 04 wrote
    # one, else the embedded base model, said which
    assert result["reader"]["model"] == "embedded" or result["reader"]["model"].endswith(".gguf")
    assert result["reader"]["what"]
    assert json.loads(out.read_text())["turn_s"] == result["turn_s"]


def test_llm_bench_times_the_embedded_model(tmp_path):
    """`bench llm` loads the embedded Q4_1 model as the loop does and times a prompt read from an
    empty cache and each new token; the JSON names the quantization."""
    out = tmp_path / "llm.json"
    result = run_bench("llm", "--models", "embedded", "--prompt-tokens", "24", "--gen-tokens",
                       "2", "--repeats", "2", "--out", str(out))
    assert json.loads(out.read_text()) == result
    (model,) = result["models"]
    assert model["file_type"] == "Q4_1" and model["model"].endswith(".gguf")
    assert len(model["prompt_s"]) == 2 and model["prompt_s_p50"] > 0
    # the rate is rounded to 0.1 token/s: on a loaded machine (3 tokens/s) that is over 1%
    assert model["prompt_tokens_per_s"] == pytest.approx(24 / model["prompt_s_p50"], rel=0.01,
                                                         abs=0.051)
    assert model["new_token_ms_p50"] > 0 and model["load_s"] > 0
    assert result["config"]["prompt_tokens"] == 24 and "cpu_count" in result["machine"]


def test_llm_bench_names_gguf_types_from_llama_cpps_constants():
    from mags_lib.bench.llm_bench import file_type_name

    assert [file_type_name(c) for c in (0, 1, 3, 7, 15, 32, "18")] == [
        "F32", "F16", "Q4_1", "Q8_0", "Q4_K_M", "BF16", "Q6_K"]
    assert file_type_name(None) == "?" and file_type_name(999) == "type 999"
    assert file_type_name("odd") == "type odd"


def test_llm_bench_names_the_file_it_cannot_read(tmp_path, monkeypatch):
    from mags_lib.bench.llm_bench import LLMBenchConfig, bench_llm, model_paths
    from mags_lib.errors import MagsError

    monkeypatch.setattr("mags_lib.paths.GGUF_DIR", tmp_path / "no_gguf")
    assert [p.name for p in model_paths(["gguf"])] == []  # no exports yet: nothing, no error
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(MagsError, match="broken.gguf"):
        bench_llm(LLMBenchConfig(models=[str(bad)], repeats=1))
    with pytest.raises(MagsError, match="not found|no such|does not exist"):
        model_paths([str(tmp_path / "absent.gguf")])
    with pytest.raises(MagsError, match="repeats"):
        LLMBenchConfig(repeats=0)
    proc = subprocess.run([sys.executable, "-m", "mags_lib.bench", "llm", "--models",
                           str(tmp_path / "absent.gguf"), "--out", str(tmp_path / "x.json")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2 and "absent.gguf" in proc.stderr and "fix:" in proc.stderr
    assert not (tmp_path / "x.json").exists()
