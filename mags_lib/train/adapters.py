"""LoRA adapters that travel: a trained stage's adapter as one small bf16 file, merged back here.

    meta = save_adapter_bf16(Path("models/write-sft/adapter"), Path("out/write-sft.safetensors"))
    model = merge_adapter(base_model, Path("out/write-sft.safetensors"), meta)   # fp32, merged

A machine that trains (a GPU, `tools/write_recipes.py`) keeps the merged checkpoints, 270-540 MB
a stage; only the adapters (~10 MB in bf16 for LoRA r 16 on every linear layer of SmolLM2-135M)
fit what comes back. Each stage's adapter was trained on the model the stage before it merged,
so a run is rebuilt by merging its adapters in order onto the same base
(`tools/rebuild_from_adapters.py`). The adapter is rounded to bf16 on the way; the merged
weights then differ from the trainer's own merge by that rounding (the H200-trained write model
of 2026-11-26, rebuilt here: the same op confusion on 60 held-out rows, F1 0.848 against 0.849).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mags_lib.errors import CorruptFileError, MagsError

CONFIG_KEYS = ("r", "lora_alpha", "target_modules", "bias", "task_type")
"""The fields of PEFT's adapter_config.json that rebuild the adapter's shape and scale."""


def save_adapter_bf16(adapter_dir: Path, out: Path) -> dict[str, Any]:
    """Write `adapter_dir`'s weights (PEFT's adapter_model.safetensors) to `out` in bf16;
    returns the adapter's config, which `merge_adapter` needs."""
    import torch
    from safetensors.torch import load_file, save_file

    weights_file = Path(adapter_dir) / "adapter_model.safetensors"
    if not weights_file.is_file():
        raise MagsError(f"{adapter_dir} holds no adapter_model.safetensors",
                        "point at a stage's `adapter/` folder (written by save_merged)")
    weights = load_file(str(weights_file))
    out.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.to(torch.bfloat16).contiguous() for k, v in weights.items()}, str(out))
    config = json.loads((Path(adapter_dir) / "adapter_config.json").read_text())
    return {k: config[k] for k in CONFIG_KEYS if k in config}


def merge_adapter(model, adapter_file: Path, config: dict[str, Any]):
    """`model` (a transformers causal LM) with the adapter in `adapter_file` applied and merged.

    Raises `MagsError` when the file's weights do not fit the model (another base, another
    LoRA rank or target), rather than merging a partial adapter."""
    import torch
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
    from safetensors.torch import load_file

    if not Path(adapter_file).is_file():
        raise MagsError(f"adapter file {adapter_file} not found",
                        "bring back the `<variant>-s<seed>-<stage>.safetensors` files that "
                        "tools/write_recipes.py writes beside its JSON")
    dtype = next(model.parameters()).dtype
    peft_model = get_peft_model(model, LoraConfig(
        **{k: config[k] for k in CONFIG_KEYS if k in config}, lora_dropout=0.0))
    try:
        weights = load_file(str(adapter_file))
    except Exception as exc:  # safetensors' own error: a truncated or foreign file
        raise CorruptFileError(f"adapter file {adapter_file} cannot be read ({exc})"[:500],
                               "copy it back again from the training machine (it may have been "
                               "cut short on the way)") from exc
    expected = {k for k in peft_model.state_dict() if ".lora_" in k}
    try:
        result = set_peft_model_state_dict(peft_model, {k: v.to(dtype) for k, v in weights.items()})
    except RuntimeError as exc:  # a shape mismatch: another rank or another base
        raise MagsError(f"{adapter_file} does not fit this model: {exc}"[:500],
                        "merge it onto the base the adapter was trained from, with its own "
                        "adapter config") from exc
    missing = [k for k in getattr(result, "missing_keys", []) if k in expected]
    unexpected = list(getattr(result, "unexpected_keys", []))
    if missing or unexpected:
        raise MagsError(
            f"{adapter_file} does not fit this model ({len(missing)} adapter weights missing, "
            f"{len(unexpected)} unexpected, e.g. {(missing + unexpected)[:2]})",
            "merge it onto the base the adapter was trained from, with its own adapter config")
    with torch.no_grad():
        return peft_model.merge_and_unload()
