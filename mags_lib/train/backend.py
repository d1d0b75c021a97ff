"""A trainable model with a LoRA adapter: Unsloth on a CUDA GPU when it is there, else PEFT.

    model, tokenizer, info = load_trainable("embedded", SFTStageConfig())
    info["backend"]   # "unsloth" or "peft"; info["reason"] says why

The choice is `choose_backend(use_unsloth, cuda, unsloth_installed)`, a pure function: Unsloth
needs CUDA and the `unsloth` package; asking for it (`use_unsloth=True`) without them warns and
falls back to transformers + PEFT, which runs anywhere (fp32 on CPU, bf16 on a GPU that has it).
Both paths return the same thing: a PEFT model whose only trainable weights are the adapter.
"""

from __future__ import annotations

import importlib.util
import logging
import warnings
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# What "all-linear" means for Unsloth, which wants explicit names (llama-family projections).
LLAMA_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def choose_backend(use_unsloth: str | bool, cuda: bool, unsloth_installed: bool) -> tuple[str, str]:
    """("unsloth" | "peft", reason). Warns when Unsloth was asked for but cannot be used.

    >>> choose_backend("auto", cuda=False, unsloth_installed=True)
    ('peft', 'auto: no CUDA GPU, using transformers + PEFT')
    >>> choose_backend("auto", cuda=True, unsloth_installed=True)
    ('unsloth', 'CUDA and unsloth available')
    """
    if use_unsloth is False:
        return "peft", "use_unsloth=False"
    missing = [why for ok, why in ((cuda, "no CUDA GPU"),
                                   (unsloth_installed, "unsloth not installed")) if not ok]
    if not missing:
        return "unsloth", "CUDA and unsloth available"
    asked = "auto" if use_unsloth == "auto" else "use_unsloth=True"
    reason = f"{asked}: {' and '.join(missing)}, using transformers + PEFT"
    if use_unsloth is True:
        warnings.warn(f"Unsloth was asked for but cannot be used ({reason}); install it on a "
                      "CUDA machine with `pip install -e '.[gpu]'`", UserWarning, stacklevel=3)
    return "peft", reason


def model_path(spec: str) -> str:
    """A transformers-loadable path or hub id for a model spec (GGUF converted once)."""
    from mags_lib.models import torch_checkpoint

    return str(torch_checkpoint(spec))


def _lora_targets(target_modules: str | list[str], backend: str) -> str | list[str]:
    if target_modules == "all-linear" and backend == "unsloth":
        return LLAMA_PROJECTIONS
    return target_modules


def _load_unsloth(path: str, cfg) -> tuple[Any, Any]:
    from unsloth import FastLanguageModel

    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name=path, max_seq_length=getattr(cfg, "max_length", 1024), dtype=None,
        load_in_4bit=False)
    model = FastLanguageModel.get_peft_model(
        model, r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
        target_modules=_lora_targets(cfg.target_modules, "unsloth"), bias="none",
        use_gradient_checkpointing="unsloth" if cfg.gradient_checkpointing else False,
        random_state=cfg.seed)
    return model, tokenizer


def _load_peft(path: str, cfg, device: str) -> tuple[Any, Any]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    bf16 = device == "cuda" and torch.cuda.is_bf16_supported()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(
        path, dtype=torch.bfloat16 if bf16 else torch.float32)
    lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=_lora_targets(cfg.target_modules, "peft"), bias="none",
                      task_type="CAUSAL_LM")
    torch.manual_seed(cfg.seed)  # the adapter's random init
    return get_peft_model(model, lora), tokenizer


def load_trainable(spec: str | Path, cfg) -> tuple[Any, Any, dict]:
    """(PEFT model, tokenizer, info) for `spec` with the LoRA settings of `cfg` (a StageConfig).

    `info`: backend ("unsloth" | "peft"), reason, device, dtype, model_path, trainable and
    total parameter counts.
    """
    import torch

    cuda = torch.cuda.is_available()
    installed = importlib.util.find_spec("unsloth") is not None
    backend, reason = choose_backend(cfg.use_unsloth, cuda, installed)
    log.info("training backend: %s (%s)", backend, reason)
    path = model_path(str(spec))
    if backend == "unsloth":
        model, tokenizer = _load_unsloth(path, cfg)
    else:
        model, tokenizer = _load_peft(path, cfg, "cuda" if cuda else "cpu")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    info = {"backend": backend, "reason": reason, "device": "cuda" if cuda else "cpu",
            "dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
            "model_path": path, "trainable_params": trainable, "total_params": total}
    return model, tokenizer, info
