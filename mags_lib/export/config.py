"""What an export run does: which models, which GGUF types, how hard to check them.

    cfg = ExportConfig(models=["models/ask-grpo"], quant_types=["f16", "q8_0", "q4_k_m"])
    cfg = ExportConfig(smoke=True).resolved()     # the same run, shrunk to about a minute

`smoke=True` shrinks sizes (prompts, tokens, models) through `resolved()`; same code path.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from mags_lib.errors import MagsError
from mags_lib.paths import GGUF_DIR, SYNTH_DATA_DIR

QUANT_TYPES: dict[str, str] = {
    "f32": "LLAMA_FTYPE_ALL_F32",
    "f16": "LLAMA_FTYPE_MOSTLY_F16",
    "q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0",
    "q6_k": "LLAMA_FTYPE_MOSTLY_Q6_K",
    "q5_k_m": "LLAMA_FTYPE_MOSTLY_Q5_K_M",
    "q4_k_m": "LLAMA_FTYPE_MOSTLY_Q4_K_M",
    "q4_1": "LLAMA_FTYPE_MOSTLY_Q4_1",
    "q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0",
}
"""GGUF types by name -> the `llama_ftype` constant in llama_cpp that llama.cpp quantises to."""

FLOAT_TYPES = ("f32", "f16")
"""Types the exporter writes itself; every other type is quantised from one of these."""



@dataclass
class ExportConfig:
    """HF checkpoints -> GGUF files for llama.cpp, and a check that they still agree."""

    models: list[str] = field(default_factory=lambda: ["embedded"], metadata={
        "help": "checkpoint dirs to export (models/<name>/ from notebooks 02/03, config.json + "
                "safetensors), or 'embedded' (SmolLM2-135M-Instruct, dequantised: the round "
                "trip that checks the exporter)"})
    quant_types: list[str] = field(default_factory=lambda: ["f16", "q8_0", "q4_k_m"], metadata={
        "help": f"GGUF types to write: {', '.join(QUANT_TYPES)}; non-float types are made by "
                "llama.cpp's own quantiser"})
    base_type: str = field(default="f16", metadata={
        "help": "float file written first and quantised from: 'f16' or 'f32' (removed "
                "afterwards unless also listed in quant_types)"})
    reference_gguf: str = field(default="embedded", metadata={
        "help": "GGUF whose tokenizer and hyper-parameters are copied (a LoRA fine-tune keeps "
                "them): 'embedded' or a .gguf path; shapes and vocab are checked against it"})
    out_dir: str | None = field(default=None, metadata={
        "help": "where <name>-<type>.gguf files go; None = models/gguf/"})
    verify: bool = field(default=True, metadata={
        "help": "after export, greedy-generate with llama.cpp and transformers and compare"})
    n_prompts: int = field(default=8, metadata={
        "help": "held-out prompts for the comparison (test/val rows of data/synth/, else "
                "built-in prompts)"})
    max_tokens: int = field(default=48, metadata={"help": "greedy tokens per prompt"})
    prompts_dir: str | None = field(default=None, metadata={
        "help": "folder with <task>/{test,val}.jsonl to draw prompts from; None = data/synth/"})
    n_threads: int | None = field(default=None, metadata={
        "help": "CPU threads for llama.cpp (quantise and generate); None = all cores"})
    n_ctx: int = field(default=2048, metadata={"help": "llama.cpp context for the comparison"})
    smoke: bool = field(default=False, metadata={
        "help": "shrink sizes (prompts, tokens, models) for a minute-long run; same code path"})

    def __post_init__(self) -> None:
        unknown = [q for q in self.quant_types if q not in QUANT_TYPES]
        if unknown or not self.quant_types:
            raise MagsError(f"unknown or no GGUF types {unknown or self.quant_types!r}",
                            f"pick from {', '.join(QUANT_TYPES)}")
        if self.base_type not in FLOAT_TYPES:
            raise MagsError(f"base_type {self.base_type!r} is not a float type",
                            "use base_type='f16' (or 'f32' for the most exact quantisation)")

    @property
    def gguf_dir(self) -> Path:
        return Path(self.out_dir) if self.out_dir else GGUF_DIR

    @property
    def prompts_root(self) -> Path:
        return Path(self.prompts_dir) if self.prompts_dir else SYNTH_DATA_DIR

    def resolved(self) -> ExportConfig:
        """This config as it will run: SMOKE sizes applied when `smoke` is set."""
        if not self.smoke:
            return self
        # every model stays: notebook 06 plays each role's GGUF, even in SMOKE mode
        return replace(self, quant_types=self.quant_types[:1], n_prompts=min(self.n_prompts, 3),
                       max_tokens=min(self.max_tokens, 16))

    def to_dict(self) -> dict:
        return asdict(self)
