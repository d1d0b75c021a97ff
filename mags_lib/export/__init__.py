"""GGUF export of fine-tuned models, for fast local inference with llama.cpp (notebook 04).

    from mags_lib.export import ExportConfig, export_and_verify, trained_models
    metrics = export_and_verify(ExportConfig(models=trained_models() or ["embedded"]))
    load_llm(LLMConfig(model="models/gguf/ask-grpo-q4_k_m.gguf"))      # then run it

Modules: `config` (ExportConfig, GGUF types), `tensors` (HF -> GGUF names, Q/K permutation),
`writer` (checkpoint -> F16/F32 GGUF, metadata from a reference GGUF), `quantize` (llama.cpp's
quantiser), `prompts` (held-out prompts), `verify` (greedy agreement, size, speed), `run` (the
whole run), `figures`. Command line: `python -m mags_lib.export <model_dir> --quant q8_0`.
Importing this package is cheap: torch, gguf and llama_cpp load inside the functions.
"""

from mags_lib.export.config import QUANT_TYPES, ExportConfig
from mags_lib.export.quantize import quantize
from mags_lib.export.run import export_and_verify, export_model, trained_models
from mags_lib.export.verify import agreement, verify_export
from mags_lib.export.writer import write_gguf

__all__ = ["QUANT_TYPES", "ExportConfig", "agreement", "export_and_verify", "export_model",
           "quantize", "trained_models", "verify_export", "write_gguf"]
