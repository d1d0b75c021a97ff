"""Quantise a float GGUF with llama.cpp's own quantiser (the one `llama-quantize` runs).

    quantize("models/gguf/ask-grpo-f16.gguf", "models/gguf/ask-grpo-q4_k_m.gguf", "q4_k_m")

It goes through llama-cpp-python's binding (`llama_model_quantize`), so no llama.cpp binaries
are needed. Tensors whose rows do not fit a k-quant block (SmolLM2's 576 columns are not a
multiple of 256) are given a fallback type by llama.cpp itself, as `llama-quantize` does.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from pathlib import Path

from mags_lib.atomic import atomic_path
from mags_lib.errors import BackendUnavailableError, CorruptFileError, MagsError
from mags_lib.export.config import QUANT_TYPES


def ftype(quant: str) -> int:
    """The llama_ftype number of a GGUF type name such as 'q4_k_m'."""
    if quant not in QUANT_TYPES:
        raise MagsError(f"unknown GGUF type {quant!r}", f"pick from {', '.join(QUANT_TYPES)}")
    try:
        import llama_cpp
    except ImportError as exc:
        raise BackendUnavailableError("llama-cpp-python is not installed",
                                      "run `make setup`") from exc
    return int(getattr(llama_cpp, QUANT_TYPES[quant]))


def quantize(src: str | Path, dst: str | Path, quant: str, n_threads: int | None = None,
             quiet: bool = True) -> Path:
    """Write `src` (an F16/F32 GGUF) quantised to `quant` at `dst`, atomically."""
    import llama_cpp

    from mags_lib.llm.llamacpp import _quiet_stderr
    from mags_lib.models import check_gguf

    src, dst = check_gguf(Path(src)), Path(dst)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype(quant)
    params.nthread = n_threads or os.cpu_count() or 1
    with atomic_path(dst) as tmp:
        with _quiet_stderr() if quiet else contextlib.nullcontext():
            status = llama_cpp.llama_model_quantize(str(src).encode(), str(tmp).encode(),
                                                    ctypes.byref(params))
        if status != 0 or not tmp.is_file():
            raise CorruptFileError(f"llama.cpp could not quantise {src} to {quant} (status "
                                   f"{status})", "check that the source is a complete F16/F32 "
                                   "GGUF (re-export it); run with quiet=False to see llama.cpp's "
                                   "log")
    return dst
