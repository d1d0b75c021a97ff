"""Does an exported GGUF still behave like its checkpoint? Greedy outputs, size and speed.

    report = verify_export("models/ask-grpo", {"f16": f16_path, "q4_k_m": q4_path}, prompts)
    report["quants"]["q4_k_m"]["first_token_agreement"]

Both sides get the same prompt token ids (the checkpoint's chat template and tokenizer), so the
comparison tests the weights; the GGUF tokenizer is checked separately (`tokenizer_agreement`:
share of prompts llama.cpp tokenises to the same ids). Generation is greedy, one prompt at a
time, stopping at the checkpoint's end-of-sequence tokens. Speeds are end-to-end generated
tokens per second (prompt evaluation included) on whatever CPU threads each back-end uses.
"""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

from mags_lib.errors import MagsError
from mags_lib.llm.base import LLMConfig


def common_prefix(a: list[int], b: list[int]) -> int:
    """Number of leading tokens two sequences share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def agreement(reference: list[list[int]], candidate: list[list[int]]) -> dict[str, float]:
    """How closely greedy outputs follow the reference, per prompt averaged.

    >>> agreement([[1, 2, 3], [4, 5]], [[1, 2, 9], [7, 5]])
    {'first_token_agreement': 0.5, 'token_exact_match': 0.0, 'prefix_agreement': 0.3333333333333333}
    """
    if len(reference) != len(candidate) or not reference:
        raise ValueError(f"need equally many outputs, got {len(reference)} and {len(candidate)}")
    pairs, n = list(zip(reference, candidate, strict=True)), len(reference)
    return {
        "first_token_agreement": sum(r[:1] == c[:1] for r, c in pairs) / n,
        "token_exact_match": sum(r == c for r, c in pairs) / n,
        "prefix_agreement": sum(common_prefix(r, c) / max(len(r), len(c), 1)
                                for r, c in pairs) / n,
    }


def stop_ids(model, tokenizer) -> set[int]:
    """End-of-sequence ids from the generation config and the tokenizer."""
    eos = model.generation_config.eos_token_id
    ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids


def hf_generate(model, tokenizer, prompt_ids: list[list[int]], max_tokens: int,
                stops: set[int]) -> tuple[list[list[int]], float]:
    """Greedy continuations from transformers, and the wall seconds they took."""
    import torch

    out, t0 = [], time.perf_counter()
    for ids in prompt_ids:
        x = torch.tensor([ids])
        with torch.no_grad():
            y = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=max_tokens,
                               do_sample=False, eos_token_id=sorted(stops),
                               pad_token_id=tokenizer.pad_token_id)
        new = y[0, len(ids):].tolist()
        out.append(new[:next((i for i, t in enumerate(new) if t in stops), len(new))])
    return out, time.perf_counter() - t0


def gguf_generate(llama, prompt_ids: list[list[int]], max_tokens: int,
                  stops: set[int]) -> tuple[list[list[int]], float]:
    """Greedy continuations from llama.cpp (temperature 0: its greedy sampler)."""
    out, t0 = [], time.perf_counter()
    for ids in prompt_ids:
        llama.reset()
        new: list[int] = []
        for tok in llama.generate(ids, temp=0.0, top_k=1, top_p=1.0, min_p=0.0,
                                  repeat_penalty=1.0, reset=True):
            if tok in stops:
                break
            new.append(int(tok))
            if len(new) >= max_tokens:
                break
        out.append(new)
    return out, time.perf_counter() - t0


def _size_mb(paths) -> float:
    return round(sum(Path(p).stat().st_size for p in paths) / 2**20, 1)


def _last_user(prompt: list[dict]) -> str:
    text = next((m["content"] for m in reversed(prompt) if m["role"] == "user"), "")
    return text if len(text) <= 200 else "…" + text[-199:]


def verify_export(model_dir: str | Path, ggufs: dict[str, str | Path],
                  prompts: list[list[dict]], max_tokens: int = 48, n_threads: int | None = None,
                  n_ctx: int = 2048, n_examples: int = 3) -> dict:
    """Compare each GGUF in `ggufs` ({type: path}) with the checkpoint in `model_dir`."""
    import torch

    from mags_lib.llm.hf import TransformersLLM
    from mags_lib.llm.llamacpp import LlamaCppLLM

    t0 = time.perf_counter()
    hf = TransformersLLM(model_dir, LLMConfig(model=str(model_dir), device="cpu", cache=False))
    hf_load = time.perf_counter() - t0
    tok = hf.tokenizer
    texts = [tok.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
             for p in prompts]
    prompt_ids = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    longest = max(map(len, prompt_ids)) + max_tokens
    if longest > n_ctx:
        raise MagsError(f"a prompt of {longest - max_tokens} tokens + {max_tokens} new tokens "
                        f"exceeds the llama.cpp context of {n_ctx}",
                        "raise ExportConfig.n_ctx or use shorter prompts")
    stops = stop_ids(hf.model, tok)
    ref, ref_s = hf_generate(hf.model, tok, prompt_ids, max_tokens, stops)
    ref_text = [tok.decode(r, skip_special_tokens=True) for r in ref]
    n_ref = sum(map(len, ref))
    report = {
        "model_dir": str(model_dir), "n_prompts": len(prompts), "max_tokens": max_tokens,
        "transformers": {"size_mb": _size_mb(Path(model_dir).glob("*.safetensors")),
                         "load_s": round(hf_load, 2), "n_tokens": n_ref,
                         "tokens_per_s": round(n_ref / max(ref_s, 1e-9), 1),
                         "threads": torch.get_num_threads()},
        "quants": {},
        "examples": [{"prompt": _last_user(p), "transformers": t}
                     for p, t in zip(prompts[:n_examples], ref_text, strict=False)],
    }
    del hf
    gc.collect()
    threads = n_threads or os.cpu_count() or 1
    for quant, path in ggufs.items():
        t0 = time.perf_counter()
        llm = LlamaCppLLM(path, LLMConfig(model=str(path), n_ctx=n_ctx, n_threads=threads,
                                          cache=False))
        load_s = time.perf_counter() - t0
        same_tok = [llm.llama.tokenize(t.encode(), add_bos=False, special=True) == ids
                    for t, ids in zip(texts, prompt_ids, strict=True)]
        gen, gen_s = gguf_generate(llm.llama, prompt_ids, max_tokens, stops)
        gen_text = [tok.decode(g, skip_special_tokens=True) for g in gen]
        n_gen = sum(map(len, gen))
        report["quants"][quant] = {
            "path": str(path), "size_mb": _size_mb([path]), "load_s": round(load_s, 2),
            "n_tokens": n_gen, "tokens_per_s": round(n_gen / max(gen_s, 1e-9), 1),
            "threads": threads, **agreement(ref, gen),
            "exact_match": sum(map(str.__eq__, ref_text, gen_text)) / len(prompts),
            "tokenizer_agreement": sum(same_tok) / len(prompts),
        }
        for example, text in zip(report["examples"], gen_text, strict=False):
            example[quant] = text
        llm.llama.close()
        del llm
        gc.collect()
    return report
