"""GGUF export: tensor names, the Q/K permutation, errors, and the base-model round trip."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mags_lib.errors import CorruptFileError, MagsError, ModelNotFoundError
from mags_lib.export import ExportConfig, agreement, trained_models
from mags_lib.export.prompts import BUILTIN_PROMPTS, heldout_prompts
from mags_lib.export.run import summarise
from mags_lib.export.tensors import gguf_name, permute_qk, reverse_permute_qk, to_gguf_tensor
from mags_lib.export.writer import (
    check_compatible,
    check_vocab,
    load_hf_config,
    open_gguf,
    read_reference,
)

LLAMA_CONFIG = {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                "num_hidden_layers": 30, "hidden_size": 576, "intermediate_size": 1536,
                "num_attention_heads": 9, "num_key_value_heads": 3, "vocab_size": 49152,
                "rope_parameters": {"rope_theta": 100000.0}, "tie_word_embeddings": True}
HF_SUFFIXES = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
               "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "input_layernorm",
               "post_attention_layernorm"]


def _checkpoint(tmp_path, config: dict):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "model.safetensors").write_bytes(b"")
    return tmp_path


def _reference_fields():
    """The hyper-parameter fields of the embedded GGUF, as `read_reference` returns them."""
    values = {"general.architecture": "llama", "llama.block_count": 30,
              "llama.embedding_length": 576, "llama.feed_forward_length": 1536,
              "llama.attention.head_count": 9, "llama.attention.head_count_kv": 3,
              "llama.vocab_size": 49152, "llama.rope.freq_base": 100000.0}
    return {k: (v, []) for k, v in values.items()}


# names and permutation -------------------------------------------------------------------


def test_names_match_gguf_packages_llama_map():
    import gguf

    official = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 3)
    names = ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"] + [
        f"model.layers.{i}.{s}.weight" for i in range(3) for s in HF_SUFFIXES]
    for name in names:
        assert gguf_name(name) == official.get_name(name, try_suffixes=(".weight",)), name
    assert gguf_name("model.layers.0.self_attn.q_proj.bias") is None
    assert gguf_name("model.layers.0.self_attn.q_proj.lora_A.weight") is None


@pytest.mark.parametrize("rows,n_head,n_kv", [(576, 9, 9), (192, 9, 3), (64, 4, 2)])
def test_permute_then_reverse_is_identity(rows, n_head, n_kv):
    w = np.random.default_rng(0).normal(size=(rows, 24)).astype(np.float32)
    assert np.array_equal(reverse_permute_qk(permute_qk(w, n_head, n_kv), n_head, n_kv), w)
    assert not np.array_equal(permute_qk(w, n_head, n_kv), w)


def test_reverse_permute_matches_transformers():
    from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

    w = np.random.default_rng(1).normal(size=(192, 16)).astype(np.float32)
    theirs = LlamaTensorProcessor()._reverse_permute_weights(w, 9, 3)
    assert np.array_equal(reverse_permute_qk(w, 9, 3), theirs)
    q = np.random.default_rng(2).normal(size=(576, 8)).astype(np.float32)
    assert np.array_equal(LlamaTensorProcessor()._reverse_permute_weights(
        to_gguf_tensor("model.layers.0.self_attn.q_proj.weight", q, 9, 3), 9, 9), q)


def test_permute_interleaves_rotary_halves():
    """GGUF row 2i of a head is HF row i, row 2i+1 is HF row i + head_dim/2."""
    w = np.arange(8, dtype=np.float32)[:, None]  # one head of dim 8
    assert permute_qk(w, 1)[:, 0].tolist() == [0, 4, 1, 5, 2, 6, 3, 7]
    v = np.ones((8, 2), dtype=np.float32)
    assert to_gguf_tensor("model.layers.0.self_attn.v_proj.weight", v, 1, 1) is v


# errors ----------------------------------------------------------------------------------


def test_missing_source_dir_says_how_to_fix(tmp_path):
    with pytest.raises(ModelNotFoundError) as err:
        load_hf_config(tmp_path / "nope")
    assert "config.json" in err.value.cause and "notebooks 02/03" in err.value.fix


def test_non_llama_architecture_points_to_llamacpp_converter(tmp_path):
    src = _checkpoint(tmp_path / "qwen", {**LLAMA_CONFIG, "model_type": "qwen2",
                                          "architectures": ["Qwen2ForCausalLM"]})
    with pytest.raises(MagsError) as err:
        load_hf_config(src)
    assert "qwen2" in err.value.cause and "convert_hf_to_gguf.py" in err.value.fix


def test_shape_mismatch_with_reference_names_the_field(tmp_path):
    fields = _reference_fields()
    check_compatible(LLAMA_CONFIG, fields, tmp_path, tmp_path / "ref.gguf")  # the real shapes
    with pytest.raises(MagsError) as err:
        check_compatible({**LLAMA_CONFIG, "hidden_size": 960, "vocab_size": 49153}, fields,
                         tmp_path, tmp_path / "ref.gguf")
    assert "hidden size: checkpoint 960 vs reference 576" in err.value.cause
    assert "vocab size" in err.value.cause and "reference_gguf" in err.value.fix


def test_vocab_mismatch_is_reported(tmp_path):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    Tokenizer(WordLevel({"a": 0, "c": 1, "b": 2}, unk_token="a")).save(
        str(tmp_path / "tokenizer.json"))
    check_vocab(tmp_path, ["a", "c", "b"])
    with pytest.raises(MagsError) as err:
        check_vocab(tmp_path, ["a", "b", "c"])
    assert "2 tokens have other ids" in err.value.cause


def test_corrupt_reference_and_source_gguf(tmp_path):
    from mags_lib.export.quantize import quantize
    from mags_lib.export.writer import reference_path

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf at all")
    with pytest.raises(CorruptFileError):
        reference_path(str(junk))
    truncated = tmp_path / "trunc.gguf"
    truncated.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\xff" * 40)
    with pytest.raises(CorruptFileError) as err:
        read_reference(truncated)
    assert "trunc.gguf" in err.value.cause
    with pytest.raises(CorruptFileError) as err:
        quantize(truncated, tmp_path / "out.gguf", "q8_0")
    assert not [p for p in tmp_path.iterdir() if "out.gguf" in p.name]  # nothing half-written


def test_config_rejects_unknown_types():
    with pytest.raises(MagsError) as err:
        ExportConfig(quant_types=["q3_xs"])
    assert "q4_k_m" in err.value.fix
    with pytest.raises(MagsError):
        ExportConfig(base_type="q8_0")
    small = ExportConfig(models=["a", "b"], smoke=True).resolved()
    assert small.models == ["a", "b"] and small.quant_types == ["f16"]
    assert small.n_prompts <= 3 and small.max_tokens <= 16


def test_cli_reports_missing_model(tmp_path, capsys):
    from mags_lib.export.__main__ import main

    assert main([str(tmp_path / "missing"), "--quant", "q8_0", "--no-verify"]) == 2
    assert "config.json missing" in capsys.readouterr().err


# pure helpers ----------------------------------------------------------------------------


def test_agreement_counts_first_token_exact_and_prefix():
    out = agreement([[1, 2, 3, 4], [5, 6], []], [[1, 2, 0, 0], [5, 6], []])
    assert out == {"first_token_agreement": 1.0, "token_exact_match": 2 / 3,
                   "prefix_agreement": (0.5 + 1.0 + 0.0) / 3}
    with pytest.raises(ValueError):
        agreement([[1]], [])


def test_trained_models_prefers_last_stage(tmp_path):
    for name in ("ask-sft", "ask-grpo", "write-sft", "custom", "base/SmolLM2", "gguf"):
        _checkpoint(tmp_path / name, LLAMA_CONFIG)
    (tmp_path / "empty").mkdir()
    assert [p.split("/")[-1] for p in trained_models(tmp_path)] == ["ask-grpo", "custom",
                                                                     "write-sft"]
    assert len(trained_models(tmp_path, final_only=False)) == 4
    assert trained_models(tmp_path / "none") == []


def test_trained_models_follow_the_recorded_selection(tmp_path):
    from mags_lib.checkpoints import final_model_name, selection_path, write_selection

    for name in ("write-sft", "write-grpo", "ask-sft", "ask-grpo"):
        _checkpoint(tmp_path / name, LLAMA_CONFIG)
    write_selection("write", "sft", "SFT judged better", tmp_path / "write-sft", tmp_path)
    assert [p.split("/")[-1] for p in trained_models(tmp_path)] == ["ask-grpo", "write-sft"]
    assert final_model_name("write", tmp_path) == "write-sft"
    assert final_model_name("ask", tmp_path) == "ask-grpo"  # no selection: the last stage
    selection_path("ask", tmp_path).write_text("{not json")  # unreadable: the last stage
    assert final_model_name("ask", tmp_path) == "ask-grpo"


def test_heldout_prompts_interleave_tasks_or_fall_back(tmp_path):
    assert heldout_prompts(3, tmp_path / "none") == BUILTIN_PROMPTS[:3]
    for task in ("ask", "write"):
        (tmp_path / task).mkdir()
        rows = [{"prompt": [{"role": "user", "content": f"{task} {i}"}]} for i in range(3)]
        (tmp_path / task / "test.jsonl").write_text(
            "\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    got = [p[0]["content"] for p in heldout_prompts(4, tmp_path)]
    assert got == ["ask 0", "write 0", "ask 1", "write 1"]


def test_summarise_means_over_models():
    q = {"first_token_agreement": 1.0, "exact_match": 0.5, "size_mb": 100.0, "tokens_per_s": 10.0}
    results = {"a": {"verify": {"quants": {"q8_0": q}, "transformers": {"size_mb": 500.0,
                                                                         "tokens_per_s": 2.0}}},
               "b": {"verify": {"quants": {"q8_0": {**q, "exact_match": 1.0}},
                                "transformers": {"size_mb": 500.0, "tokens_per_s": 4.0}}}}
    out = summarise(results)
    assert out["q8_0"]["exact_match"] == 0.75 and out["transformers"]["tokens_per_s"] == 3.0


# the round trip --------------------------------------------------------------------------


@pytest.mark.slow
def test_base_round_trip_agrees_and_requantises_to_the_shipped_file(tmp_path):
    """Unchanged base: dequantised checkpoint -> F16 GGUF agrees token for token with the torch
    model, and F16 -> Q4_1 reproduces the tensors of the shipped Q4_1 file bit for bit."""
    import gguf

    from mags_lib.export import export_and_verify
    from mags_lib.models import embedded_gguf_path

    cfg = ExportConfig(models=["embedded"], quant_types=["f16", "q4_1"], out_dir=str(tmp_path),
                       n_prompts=3, max_tokens=8, prompts_dir=str(tmp_path / "no-data"),
                       n_threads=1)
    out = export_and_verify(cfg)["models"]["SmolLM2-135M-Instruct"]
    f16 = out["verify"]["quants"]["f16"]
    assert f16["first_token_agreement"] == 1.0 and f16["exact_match"] == 1.0
    assert f16["tokenizer_agreement"] == 1.0
    mine = {t.name: t for t in gguf.GGUFReader(out["files"]["q4_1"]["path"]).tensors}
    shipped = open_gguf(embedded_gguf_path()).tensors  # cached: the export read it already
    assert len(mine) == len(shipped)
    for t in shipped:
        assert mine[t.name].tensor_type == t.tensor_type, t.name
        assert np.array_equal(np.asarray(mine[t.name].data), np.asarray(t.data)), t.name
