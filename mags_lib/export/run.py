"""One export run: checkpoints -> GGUF files of each type -> a comparison with the checkpoint.

    cfg = ExportConfig(models=trained_models() or ["embedded"]).resolved()
    metrics = export_and_verify(cfg)        # {"models": {name: {...}}, "summary": {...}}

Files are `models/gguf/<name>-<type>.gguf`; `<name>` is the checkpoint folder's name
(SmolLM2-135M-Instruct for 'embedded'). Each is written to a temporary file and renamed.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from mags_lib.export.config import FLOAT_TYPES, ExportConfig
from mags_lib.paths import BASE_MODELS_DIR, MODELS_DIR

_STAGES = ("sft", "grpo")  # training order: a later stage supersedes an earlier one
_NOT_TRAINED = {BASE_MODELS_DIR.name, "gguf"}


def trained_models(models_dir: str | Path | None = None, final_only: bool = True) -> list[str]:
    """Merged checkpoints under models/ (notebooks 02/03: models/<role>-<stage>/).

    With `final_only`, one stage stands for each run: the one its training selected
    (`models/<role>-selected.json`, see `mags_lib.checkpoints`), else the last stage
    (ask-grpo, not ask-sft, when both are there); other folder names are all kept.
    """
    from mags_lib.checkpoints import selected_stage

    root = Path(models_dir) if models_dir else MODELS_DIR
    if not root.is_dir():
        return []
    found = sorted(p for p in root.iterdir() if p.is_dir() and p.name not in _NOT_TRAINED
                   and (p / "config.json").is_file() and list(p.glob("*.safetensors")))
    if not final_only:
        return [str(p) for p in found]
    best: dict[str, Path] = {}
    for p in found:
        m = re.fullmatch(r"(.+)-(" + "|".join(_STAGES) + ")", p.name)
        key, rank = (m.group(1), _STAGES.index(m.group(2))) if m else (p.name, 0)
        if key not in best or rank > _stage_rank(best[key]):
            best[key] = p
    for key in list(best):
        chosen = root / f"{key}-{selected_stage(key, root)}"
        if chosen in found:
            best[key] = chosen
    return [str(p) for p in sorted(best.values())]


def _stage_rank(path: Path) -> int:
    stage = path.name.rsplit("-", 1)[-1]
    return _STAGES.index(stage) if stage in _STAGES else 0


def source_dir(spec: str) -> tuple[str, Path]:
    """(export name, checkpoint dir) for 'embedded' or a checkpoint directory."""
    from mags_lib.models import EMBEDDED_LLM, EMBEDDED_LLM_NAME, torch_checkpoint

    if spec == EMBEDDED_LLM:
        return EMBEDDED_LLM_NAME, Path(torch_checkpoint(EMBEDDED_LLM))
    path = Path(spec).expanduser()
    return path.name, path


def export_model(spec: str, cfg: ExportConfig) -> dict:
    """Write every type in `cfg.quant_types` for one model; returns paths, sizes, seconds."""
    from mags_lib.export.quantize import quantize
    from mags_lib.export.writer import load_hf_config, write_gguf

    name, src = source_dir(spec)
    load_hf_config(src)  # fail before any work on a missing or non-llama checkpoint
    out = cfg.gguf_dir
    files: dict[str, dict] = {}
    t0 = time.perf_counter()
    base = out / f"{name}-{cfg.base_type}.gguf"
    info = write_gguf(src, base, reference=cfg.reference_gguf, float_type=cfg.base_type,
                      name=name)
    files[cfg.base_type] = {"path": str(base), "seconds": round(time.perf_counter() - t0, 2)}
    for quant in cfg.quant_types:
        if quant == cfg.base_type:
            continue
        t0 = time.perf_counter()
        dst = out / f"{name}-{quant}.gguf"
        if quant in FLOAT_TYPES:
            write_gguf(src, dst, reference=cfg.reference_gguf, float_type=quant, name=name)
        else:
            quantize(base, dst, quant, n_threads=cfg.n_threads)
        files[quant] = {"path": str(dst), "seconds": round(time.perf_counter() - t0, 2)}
    if cfg.base_type not in cfg.quant_types:
        base.unlink()
        del files[cfg.base_type]
    for f in files.values():
        f["size_mb"] = round(os.path.getsize(f["path"]) / 2**20, 1)
    return {"name": name, "source": str(src), "chat_template_from": info["chat_template_from"],
            "reference": info["reference"], "files": {q: files[q] for q in cfg.quant_types}}


def export_and_verify(cfg: ExportConfig) -> dict:
    """Export every model in `cfg.models`, then (if `cfg.verify`) compare each file with it."""
    from mags_lib.export.prompts import heldout_prompts

    cfg = cfg.resolved()
    prompts = heldout_prompts(cfg.n_prompts, cfg.prompts_root) if cfg.verify else []
    results = {}
    for spec in cfg.models:
        exported = export_model(spec, cfg)
        if cfg.verify:
            exported["verify"] = _verify(exported, prompts, cfg)
        results[exported["name"]] = exported
    return {"models": results, "summary": summarise(results),
            "prompts_from": "builtin" if not prompts or _builtin(prompts) else "heldout_data",
            "loadavg_1m": round(os.getloadavg()[0], 2)}


def _builtin(prompts: list) -> bool:
    from mags_lib.export.prompts import BUILTIN_PROMPTS

    return prompts[0] in BUILTIN_PROMPTS


def _verify(exported: dict, prompts: list, cfg: ExportConfig) -> dict:
    import torch

    from mags_lib.export.verify import verify_export

    before = torch.get_num_threads()
    if cfg.n_threads:
        torch.set_num_threads(cfg.n_threads)
    try:
        return verify_export(exported["source"], {q: f["path"] for q, f in
                                                  exported["files"].items()},
                             prompts, cfg.max_tokens, cfg.n_threads, cfg.n_ctx)
    finally:
        torch.set_num_threads(before)


def summarise(results: dict) -> dict:
    """Per GGUF type, the mean over models of agreement, size and speed (pure)."""
    rows: dict[str, list[dict]] = {}
    for r in results.values():
        for quant, m in r.get("verify", {}).get("quants", {}).items():
            rows.setdefault(quant, []).append(m)
        if "verify" in r:
            rows.setdefault("transformers", []).append(r["verify"]["transformers"])
    keys = ("first_token_agreement", "exact_match", "prefix_agreement", "tokenizer_agreement",
            "size_mb", "tokens_per_s", "load_s")
    return {q: {k: round(sum(m[k] for m in ms) / len(ms), 4) for k in keys if k in ms[0]}
            for q, ms in rows.items()}
