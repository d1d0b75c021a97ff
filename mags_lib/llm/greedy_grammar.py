"""Greedy decoding under a GBNF grammar that asks the grammar only when it has to.

llama-cpp-python puts the grammar in front of the sampler, so at every step the grammar checks
each of the vocabulary's 49k tokens: for SmolLM2 on 2 cores that is about 13 ms a token, as
long as the model's own step. At temperature 0 the constrained choice is the highest-scoring
token the grammar allows, so when the model's own top token is allowed it *is* that choice.
`greedy_grammar` checks that one token and masks the whole vocabulary only when the grammar
rejects it (what llama.cpp's own `common_sampler` does). It yields the tokens of the library's
constrained greedy sampler (ties between equal logits aside; `tests/test_llm_greedy_grammar.py`
compares the two on the roles' prompts) in about half the time for a typical action block.

The caller evaluates the prompt first; this only samples, evaluates each chosen token and stops
at an end-of-generation token, a stop string or `max_tokens`.
With `draft` > 0 it also guesses ahead by prompt lookup: where the last tokens already occurred
in the prompt or the reply (a name copied from the observation, `semantic` after `add`), the
tokens that followed them there are evaluated in one batch with the chosen token, and each is
kept while it is what the greedy choice above would have picked. A batch of a few tokens costs
little more than one on a CPU, where reading the weights bounds a step, so each guess kept saves
most of a step and a guess missed costs a little. The choice itself is unchanged, but a batch
computes its logits in another order of sums than one token at a time, so in a near tie a token
may differ (`LLMConfig.lookahead`'s help gives how often on the roles' prompts).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any


@dataclass
class Generated:
    text: str
    n_tokens: int
    finish_reason: str  # "stop" or "length"
    guessed: int = 0  # tokens guessed ahead (prompt lookup)
    kept: int = 0  # guesses that were the greedy choice


def _token_array(n: int):
    import llama_cpp

    data = (llama_cpp.llama_token_data * n)()
    array = llama_cpp.llama_token_data_array(data=data, size=n, selected=-1, sorted=False)
    return data, array


def lookup(history: list[int], n_draft: int, max_ngram: int = 3) -> list[int]:
    """Up to `n_draft` tokens that followed the latest earlier occurrence of `history`'s last
    `max_ngram` tokens (or fewer, down to one), in `history` itself; [] where none occurred.

    >>> lookup([5, 6, 7, 8, 9, 5, 6], 2)
    [7, 8]
    >>> lookup([1, 2, 3], 2)
    []
    """
    if n_draft <= 0:
        return []
    n_hist = len(history)
    for n in range(min(max_ngram, n_hist - 1), 0, -1):
        tail = history[n_hist - n:]
        for start in range(n_hist - n - 1, -1, -1):
            if history[start:start + n] == tail:
                return history[start + n:start + n + n_draft]
    return []


def _evaluate(llama: Any, batch: list[int]) -> list[Any]:
    """Evaluate `batch` after the tokens `llama` holds, returning the logits after each."""
    import numpy as np

    n_past, n_vocab = llama.n_tokens, llama.n_vocab()
    llama._ctx.kv_cache_seq_rm(-1, n_past, -1)  # what a guess missed left behind
    llama._batch.set_batch(batch=batch, n_past=n_past, logits_all=True)
    llama._ctx.decode(llama._batch)
    llama.input_ids[n_past:n_past + len(batch)] = batch
    llama.n_tokens += len(batch)
    return [np.array(np.ctypeslib.as_array(llama._ctx.get_logits_ith(i), shape=(n_vocab,)))
            for i in range(len(batch))]


def greedy_grammar(llama: Any, grammar: Any, *, max_tokens: int,
                   stop: list[str] | None = None, draft: int = 0) -> Generated:
    """Greedy tokens after the evaluated prompt of `llama` (a `llama_cpp.Llama`), each allowed
    by `grammar` (a `llama_cpp.LlamaGrammar`); `draft` tokens guessed ahead by prompt lookup
    (0: none)."""
    import llama_cpp
    import numpy as np

    vocab = llama._model.vocab
    n_vocab = llama.n_vocab()
    sampler = llama_cpp.llama_sampler_init_grammar(
        vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
    if not sampler:
        raise ValueError("llama.cpp could not build a sampler from the grammar")
    one, one_array = _token_array(1)
    full, full_array = _token_array(n_vocab)
    full_view = np.ctypeslib.as_array(full)  # a structured view: id, logit, p
    ids = np.arange(n_vocab, dtype=np.int32)

    def choose(logits: Any) -> int | None:
        """The highest-scoring token the grammar allows (None: it allows none)."""
        token = int(np.argmax(logits))
        one[0].id, one[0].logit, one[0].p = token, float(logits[token]), 0.0
        one_array.size, one_array.selected = 1, -1
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(one_array))
        if np.isfinite(one[0].logit):
            return token
        full_view["id"], full_view["logit"], full_view["p"] = ids, logits, 0.0  # it breaks it
        full_array.size, full_array.selected = n_vocab, -1
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(full_array))
        masked = full_view["logit"]
        if not np.isfinite(masked).any():
            return None
        return int(full_view["id"][int(np.argmax(masked))])

    prompt = [int(t) for t in llama.input_ids[:llama.n_tokens]] if draft > 0 else []
    rows = [np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(n_vocab,))]
    ahead: list[int] = []  # guessed tokens evaluated past the ones kept, rows[i] after ahead[i]
    tokens: list[int] = []
    text, finish, guessed, kept = "", "length", 0, 0
    try:
        for _ in range(max_tokens):
            token = choose(rows.pop(0))
            if token is None:
                finish = "stop"  # nothing is allowed: the grammar is stuck
                break
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                finish = "stop"
                break
            llama_cpp.llama_sampler_accept(sampler, token)
            tokens.append(token)
            text = llama.detokenize(tokens).decode("utf-8", errors="ignore")
            cut = min((text.find(s) for s in stop or [] if s and s in text), default=-1)
            if cut >= 0:
                text, finish = text[:cut], "stop"
                break
            if len(tokens) >= max_tokens:
                break
            if ahead and ahead[0] == token:  # a guess kept: its logits are in rows[0]
                ahead.pop(0)
                kept += 1
                continue
            if ahead:  # a guess missed: forget it and the ones after it
                llama.n_tokens -= len(ahead)
                ahead = []
            if draft <= 0:
                llama.eval([token])
                rows = [np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(n_vocab,))]
                continue
            ahead = lookup(prompt + tokens, min(draft, max_tokens - len(tokens) - 1))
            rows = _evaluate(llama, [token, *ahead])
            guessed += len(ahead)
    finally:
        llama.n_tokens -= len(ahead)  # the unchosen guesses are not part of the reply
        llama_cpp.llama_sampler_free(sampler)
    return Generated(text=text, n_tokens=len(tokens), finish_reason=finish, guessed=guessed,
                     kept=kept)
