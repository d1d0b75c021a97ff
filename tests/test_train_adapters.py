"""An adapter's trip (train/adapters.py): saved in bf16, merged back onto the base elsewhere."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
peft = pytest.importorskip("peft")
transformers = pytest.importorskip("transformers")

from mags_lib.errors import CorruptFileError, MagsError  # noqa: E402
from mags_lib.train.adapters import merge_adapter, save_adapter_bf16  # noqa: E402


def tiny_llama(seed: int = 0):
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=64)
    return transformers.LlamaForCausalLM(cfg).eval()


def trained_adapter(tmp_path, r: int = 4):
    """A LoRA on every linear layer with non-zero B (as after training), saved as PEFT saves."""
    base = tiny_llama()
    model = peft.get_peft_model(base, peft.LoraConfig(r=r, lora_alpha=2 * r,
                                                      target_modules="all-linear"))
    torch.manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_" in name:
                p.normal_(0, 0.2)
    model.save_pretrained(str(tmp_path / "adapter"))
    return model


def test_the_merged_model_after_the_trip_is_the_trainers_merge(tmp_path):
    model = trained_adapter(tmp_path)
    ids = torch.tensor([[1, 5, 9, 13, 2]])
    with torch.no_grad():
        want = model.merge_and_unload()(ids).logits
    config = save_adapter_bf16(tmp_path / "adapter", tmp_path / "trip.safetensors")
    assert config["r"] == 4 and config["lora_alpha"] == 8
    rebuilt = merge_adapter(tiny_llama(), tmp_path / "trip.safetensors", config)
    with torch.no_grad():
        got = rebuilt(ids).logits
    assert not any("lora_" in n for n, _ in rebuilt.named_parameters())  # merged, not wrapped
    # bf16 keeps ~3 significant digits of each adapter weight: close, and far from the base's
    with torch.no_grad():
        base = tiny_llama()(ids).logits
    assert (got - want).abs().max() < 0.02 * (want - base).abs().max()


def test_an_adapter_that_does_not_fit_the_base_is_refused(tmp_path):
    trained_adapter(tmp_path, r=4)
    config = save_adapter_bf16(tmp_path / "adapter", tmp_path / "trip.safetensors")
    with pytest.raises(MagsError, match="does not fit"):
        merge_adapter(tiny_llama(), tmp_path / "trip.safetensors", {**config, "r": 8})
    with pytest.raises(MagsError, match="not found"):
        merge_adapter(tiny_llama(), tmp_path / "absent.safetensors", config)
    with pytest.raises(MagsError, match="adapter_model.safetensors"):
        save_adapter_bf16(tmp_path, tmp_path / "x.safetensors")


def test_an_adapter_with_weights_missing_or_extra_is_refused_not_merged_in_part(tmp_path):
    """The same rank and shapes, other target layers: merging what fits would give a model that
    is neither the base nor the trained one."""
    trained_adapter(tmp_path, r=4)  # every linear layer
    config = save_adapter_bf16(tmp_path / "adapter", tmp_path / "all.safetensors")
    with pytest.raises(MagsError, match=r"0 adapter weights missing, \d+ unexpected"):
        merge_adapter(tiny_llama(), tmp_path / "all.safetensors",
                      {**config, "target_modules": ["q_proj"]})
    base = peft.get_peft_model(tiny_llama(), peft.LoraConfig(r=4, lora_alpha=8,
                                                             target_modules=["q_proj"]))
    base.save_pretrained(str(tmp_path / "q_only"))
    q_config = save_adapter_bf16(tmp_path / "q_only", tmp_path / "q.safetensors")
    with pytest.raises(MagsError, match=r"[1-9]\d* adapter weights missing, 0 unexpected"):
        merge_adapter(tiny_llama(), tmp_path / "q.safetensors",
                      {**q_config, "target_modules": "all-linear"})


def test_a_truncated_adapter_file_names_the_file_and_the_fix(tmp_path):
    trained_adapter(tmp_path, r=4)
    config = save_adapter_bf16(tmp_path / "adapter", tmp_path / "trip.safetensors")
    data = (tmp_path / "trip.safetensors").read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFileError, match="cut.safetensors cannot be read") as info:
        merge_adapter(tiny_llama(), tmp_path / "cut.safetensors", config)
    assert "copy it back again" in info.value.fix
