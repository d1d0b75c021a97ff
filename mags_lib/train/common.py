"""What an SFT run and a GRPO run share: trainer arguments, TensorBoard, the saved model layout.

A trained model lives in `models/<name>/`:

    config.json, model.safetensors, tokenizer files   the merged model (load_llm(model=that dir))
    adapter/                                          the LoRA adapter alone
    tensorboard/                                      training curves (when tensorboard is installed)
    manifest.json                                     base model, data hash, config, metrics, time, RSS
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mags_lib.manifest import manifest, write_json
from mags_lib.rss import current_rss_mb, peak_rss_mb


def trainer_kwargs(cfg, out_dir: Path, cuda: bool) -> dict[str, Any]:
    """Keyword arguments for a TRL `SFTConfig` / `GRPOConfig` from a StageConfig."""
    import torch
    from transformers import TrainingArguments

    tensorboard = importlib.util.find_spec("tensorboard") is not None
    # transformers >= 5.x renamed gradient_checkpointing to activation_checkpointing
    checkpointing = ("activation_checkpointing"
                     if "activation_checkpointing" in TrainingArguments.__dataclass_fields__
                     else "gradient_checkpointing")
    return dict(
        output_dir=str(out_dir / "trainer"), learning_rate=cfg.learning_rate,
        lr_scheduler_type=cfg.lr_scheduler_type, warmup_steps=cfg.warmup_steps,
        num_train_epochs=cfg.num_train_epochs, max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.per_device_train_batch_size,
        per_device_eval_batch_size=cfg.per_device_train_batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps,
        **{checkpointing: cfg.gradient_checkpointing}, logging_steps=cfg.logging_steps,
        seed=cfg.seed, data_seed=cfg.seed, eval_strategy="no",
        save_strategy="steps" if cfg.save_steps > 0 else "no",
        save_steps=max(cfg.save_steps, 1), save_total_limit=1,
        report_to=["tensorboard"] if tensorboard else "none",
        bf16=bool(cuda and torch.cuda.is_bf16_supported()), fp16=False, use_cpu=not cuda,
        dataloader_pin_memory=cuda, disable_tqdm=True,
    )


@contextmanager
def run_context(cfg):
    """Seed everything and, if the config asks, run with `cfg.torch_threads` CPU threads
    (restored afterwards, so a notebook or test session keeps its own setting)."""
    import torch

    from mags_lib.seed import seed_everything

    before = torch.get_num_threads()
    if cfg.torch_threads:
        torch.set_num_threads(cfg.torch_threads)
    seed_everything(cfg.seed)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def is_main_process() -> bool:
    """True outside a distributed launch, and on rank 0 inside one (`accelerate launch`)."""
    return int(os.environ.get("RANK", "0")) == 0


def wait_for_everyone() -> None:
    """Barrier across the processes of a distributed launch; a no-op in a single process."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        from accelerate import PartialState

        PartialState().wait_for_everyone()


def point_tensorboard(trainer, log_dir: Path) -> Path | None:
    """Send the trainer's TensorBoard callback (if any) to `log_dir` instead of a dated folder."""
    for cb in trainer.callback_handler.callbacks:
        if type(cb).__name__ == "TensorBoardCallback":
            cb.logging_dir = str(log_dir)
            return log_dir
    return None


@contextmanager
def peak_memory(interval_s: float = 0.2):
    """`with peak_memory() as m: ...` then `m["rss_mb"]` is the peak resident memory during the
    block (sampled every `interval_s` on Linux; elsewhere the process peak so far) and
    `m["cuda_mb"]` the peak CUDA memory allocated (None without CUDA)."""
    import threading

    torch = sys.modules.get("torch")
    cuda = torch is not None and torch.cuda.is_available()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    out: dict[str, float | None] = {"rss_mb": current_rss_mb(), "cuda_mb": None}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(interval_s):
            now = current_rss_mb()
            if now is not None:
                out["rss_mb"] = max(out["rss_mb"] or 0.0, now)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join()
        now = current_rss_mb()
        out["rss_mb"] = max(out["rss_mb"] or 0.0, now) if now is not None else peak_rss_mb()
        if cuda:
            out["cuda_mb"] = torch.cuda.max_memory_allocated() / (1024 * 1024)


@contextmanager
def timed():
    """`with timed() as t: ...` then `t["s"]` holds the wall seconds."""
    out = {"s": 0.0}
    t0 = time.perf_counter()
    try:
        yield out
    finally:
        out["s"] = time.perf_counter() - t0


def lora_state(model) -> dict[str, Any]:
    """A detached copy of the trainable (adapter) weights, to check that training moved them."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def lora_change(before: dict[str, Any], model) -> float:
    """Largest absolute change of any adapter weight since `before`."""
    now = dict(model.named_parameters())
    return max((float((now[n].detach() - p).abs().max()) for n, p in before.items()), default=0.0)


def save_merged(model, tokenizer, out_dir: Path):
    """Save the adapter under `out_dir/adapter`, then merge it and save the merged model in
    `out_dir`; returns the merged model in eval mode (the PEFT wrapper is used up)."""
    if "ref" in getattr(model, "peft_config", {}):  # GRPO's frozen copy for the KL term
        model.delete_adapter("ref")
    main = is_main_process()  # under `accelerate launch` every rank merges, rank 0 writes
    if main:
        out_dir.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(str(out_dir / "adapter"))
        tokenizer.save_pretrained(str(out_dir / "adapter"))
    merged = model.merge_and_unload()
    merged.eval()
    if main:
        merged.save_pretrained(str(out_dir))
        tokenizer.save_pretrained(str(out_dir))
    wait_for_everyone()
    return merged


def load_merged(out_dir: Path):
    """(model, tokenizer) of a merged model saved by `save_merged`, in eval mode, on the GPU
    when there is one (where a trainer would have left it)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(out_dir))
    if torch.cuda.is_available():
        model = model.to("cuda")
    model.eval()
    return model, AutoTokenizer.from_pretrained(str(out_dir))


def curve(log_history: list[dict], marker: str, prefixes: tuple[str, ...]) -> list[dict]:
    """The training-step entries of `trainer.state.log_history` that hold `marker` (e.g.
    "loss", "reward"), keeping `step` and the keys that start with any of `prefixes`."""
    return [{k: v for k, v in e.items() if k == "step" or k.startswith(prefixes)}
            for e in log_history if marker in e]


def write_manifest(out_dir: Path, cfg, **extra) -> Path:
    path = out_dir / "manifest.json"
    if is_main_process():
        write_json(path, manifest(cfg, peak_rss_mb=peak_rss_mb(), **extra))
    return path
