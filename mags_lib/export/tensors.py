"""Llama tensors, Hugging Face layout -> GGUF layout: names and the Q/K row permutation.

    gguf_name("model.layers.3.self_attn.q_proj.weight")   # "blk.3.attn_q.weight"
    permute_qk(q_weight, n_head=9, n_head_kv=9)           # HF rows -> llama.cpp rows

llama.cpp's rotary embedding pairs neighbouring dimensions (0,1), (2,3), ... of each head, while
transformers pairs the two halves (0, d/2), (1, d/2+1), ... So llama.cpp's converter reorders
the rows of the Q and K projections (`permute`), and transformers undoes that when it reads a
GGUF (`reverse_permute`). An exporter must permute again, or the model runs and writes nonsense.
Pure numpy; no model is loaded here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_LAYER = re.compile(r"^model\.layers\.(\d+)\.(.+)\.weight$")
_LAYER_NAMES = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}
_GLOBAL_NAMES = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
SKIPPED = re.compile(r"rotary_emb\.inv_freq$")
"""HF buffers that are recomputed at load time and have no GGUF tensor."""


def gguf_name(hf_name: str) -> str | None:
    """The GGUF tensor name of a Llama parameter, or None if the name is not a Llama weight."""
    if hf_name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[hf_name]
    match = _LAYER.match(hf_name)
    if match and match.group(2) in _LAYER_NAMES:
        return f"blk.{match.group(1)}.{_LAYER_NAMES[match.group(2)]}.weight"
    return None


def permute_qk(weights: np.ndarray, n_head: int, n_head_kv: int | None = None) -> np.ndarray:
    """llama.cpp's `permute` (convert_hf_to_gguf.py): HF Q/K rows -> GGUF Q/K rows.

    For K pass the number of key/value heads as `n_head_kv` (grouped-query attention).
    """
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    _check_rows(weights, n_head)
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def reverse_permute_qk(weights: np.ndarray, n_head: int,
                       n_head_kv: int | None = None) -> np.ndarray:
    """The inverse of `permute_qk` (what transformers applies when it reads a GGUF)."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    _check_rows(weights, n_head)
    return (weights.reshape(n_head, weights.shape[0] // n_head // 2, 2, *weights.shape[1:])
            .swapaxes(2, 1).reshape(weights.shape))


def _check_rows(weights: np.ndarray, n_head: int) -> None:
    if weights.shape[0] % (2 * n_head):
        raise ValueError(f"{weights.shape[0]} rows cannot be split into {n_head} heads of "
                         "rotary pairs")


def to_gguf_tensor(hf_name: str, weights: np.ndarray, n_head: int, n_head_kv: int) -> np.ndarray:
    """A parameter as GGUF stores it: Q and K permuted, everything else unchanged."""
    if hf_name.endswith("self_attn.q_proj.weight"):
        return permute_qk(weights, n_head, n_head)
    if hf_name.endswith("self_attn.k_proj.weight"):
        return permute_qk(weights, n_head, n_head_kv)
    return weights
