"""llama.cpp backend (llama-cpp-python) for GGUF files: the default for inference.

Determinism: llama-cpp-python reuses the KV cache of a matching prompt prefix, so the same prompt
could be evaluated in different batch splits depending on the previous call and, in rare cases,
greedy decoding diverges. So a prompt is never evaluated from whatever the last call left:

- `chat` and `stream_chat` keep one fixed prefix, every message but the last as the chat
  template renders them (a role's system prompt and worked examples), evaluated on its own. A
  call whose prompt begins with the kept prefix evaluates only the rest, from the same
  position; any other call resets and evaluates its own prefix alone first. The same messages
  therefore always go through the same computation, whatever ran before, and a role's repeated
  system prompt is paid once (on 2 cores the prompt is most of a write call's time: its system
  prompt is 75 of about 175 tokens).
- `complete` and `score` reset first.

So at temperature 0 (and at any temperature with a fixed seed) the same prompt gives the same
text. A `chat` under a grammar at temperature 0 (the ask and write roles in play) samples with
`greedy_grammar`, which consults the grammar only when the model's own top token breaks it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mags_lib.errors import BackendUnavailableError, CorruptFileError, MagsError
from mags_lib.llm.base import Completion, LLMConfig, Message
from mags_lib.models import check_gguf, file_digest


def check_grammar(vocab, grammar: str) -> None:
    """Parse `grammar` once with llama.cpp and free it; raise MagsError if it does not parse.

    llama-cpp-python only stores the grammar text and parses it when sampling starts; a grammar
    that fails there gives a NULL sampler and the process segfaults. So every grammar is checked
    here first, where a failure is an ordinary exception.
    """
    import llama_cpp

    with _quiet_stderr():
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
    if not sampler:
        raise MagsError(
            "llama.cpp could not parse the GBNF grammar (syntax error, or no `root` rule)",
            "check the grammar text against llama.cpp's GBNF syntax; the grammars for memory "
            "actions come from `mags_lib.actions.grammar_for(kind)`",
        )
    llama_cpp.llama_sampler_free(sampler)


@contextlib.contextmanager
def _quiet_stderr():
    """llama.cpp prints load logs on fd 2 even with verbose=False; keep notebooks clean."""
    try:
        fd = os.dup(2)
    except OSError:
        yield
        return
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(fd, 2)
            os.close(fd)


class LlamaCppLLM:
    """A GGUF model run by llama.cpp on the CPU (or GPU when built with CUDA)."""

    def __init__(self, gguf_path: str | Path, config: LLMConfig | None = None):
        try:
            import llama_cpp
        except ImportError as exc:
            raise BackendUnavailableError(
                "llama-cpp-python is not installed",
                'run `make setup` (it builds llama-cpp-python with CMAKE_ARGS="-DGGML_NATIVE=OFF")',
            ) from exc
        self.config = config or LLMConfig()
        self.path = check_gguf(Path(gguf_path))
        self._grammars: dict[str, object] = {}
        self._kept: list[int] = []  # the chat prefix in the KV cache, evaluated on its own
        self._prefixes: dict[str, list[int]] = {}  # rendered prefix text -> its tokens
        # the content digest, not just name and size: a retrained model exported under the same
        # name has the same size, and must not be served the old one's cached generations
        self.name = f"llamacpp:{self.path.name}:{file_digest(self.path)[:16]}" + (
            ":fa" if self.config.flash_attn else "")
        threads = self.config.n_threads or max(1, os.cpu_count() or 1)
        try:
            with _quiet_stderr():
                self.llama = llama_cpp.Llama(
                    model_path=str(self.path),
                    n_ctx=self.config.n_ctx,
                    n_batch=self.config.n_batch,
                    n_threads=threads,
                    n_threads_batch=threads,
                    flash_attn=self.config.flash_attn,
                    seed=0,
                    verbose=False,
                )
        except Exception as exc:  # noqa: BLE001
            raise CorruptFileError(
                f"llama.cpp could not load {self.path}: {exc}",
                "the file may be truncated or of an unsupported architecture; re-export it "
                "(notebook 04_export_gguf) or use model='embedded'",
            ) from exc
        self._chat_formatters = self._formatters()

    def _formatters(self) -> dict[bool, Any] | None:
        """The GGUF's chat template as llama-cpp-python renders it, with and without the
        assistant's turn opened (None where the model is served another chat format)."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self.llama.metadata.get("tokenizer.chat_template")
        if not template or self.llama.chat_format != "chat_template.default":
            return None
        model = self.llama._model
        eos, bos = self.llama.token_eos(), self.llama.token_bos()
        return {g: Jinja2ChatFormatter(
            template=template, eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "",
            add_generation_prompt=g) for g in (True, False)}

    def _grammar(self, grammar: str | None):
        if not grammar:
            return None
        if grammar not in self._grammars:
            from llama_cpp import LlamaGrammar

            check_grammar(self.llama._model.vocab, grammar)
            self._grammars[grammar] = LlamaGrammar.from_string(grammar, verbose=False)
        return self._grammars[grammar]

    def _count(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode(), add_bos=False, special=True))

    def _check_fits(self, n_prompt: int, max_tokens: int) -> None:
        if n_prompt + max_tokens > self.config.n_ctx:
            raise MagsError(
                f"prompt of {n_prompt} tokens + {max_tokens} new tokens exceeds the context "
                f"window of {self.config.n_ctx}",
                "shorten the prompt (recall fewer memories) or raise LLMConfig.n_ctx",
            )

    def _reset(self) -> None:
        self.llama.reset()
        self._kept = []

    def _render(self, messages: list[Message]) -> tuple[list[int], list[int]]:
        """(prefix, prompt): the tokens of every message but the last as the chat template
        renders them, and of the whole prompt ending in the assistant's turn. The prefix is
        empty unless the prompt's tokens begin with it (then the call evaluates from scratch)."""
        formatters = self._chat_formatters
        if formatters is None:
            return [], []

        def render(msgs: list[Message], generation: bool) -> str:
            return formatters[generation](messages=msgs).prompt

        def tokens(text: str) -> list[int]:
            return self.llama.tokenize(text.encode(), add_bos=False, special=True)

        prompt = tokens(render(messages, True))
        if len(messages) < 2:
            return [], prompt
        text = render(messages[:-1], False)
        if text not in self._prefixes:
            if len(self._prefixes) > 64:
                self._prefixes.clear()
            self._prefixes[text] = tokens(text)
        prefix = self._prefixes[text]
        return (prefix if prompt[:len(prefix)] == prefix and len(prompt) > len(prefix)
                else []), prompt

    def _start_chat(self, prefix: list[int]) -> None:
        """Leave exactly `prefix` in the KV cache, evaluated on its own."""
        if prefix and prefix == self._kept and self.llama.n_tokens >= len(prefix):
            self.llama.n_tokens = len(prefix)  # the next eval drops the cache past this point
            return
        self._reset()
        if prefix:
            self._check_fits(len(prefix), 1)
            self.llama.eval(prefix)
            self._kept = prefix

    def _chat_greedy_grammar(self, prefix: list[int], prompt: list[int], grammar: str,
                             max_tokens: int, stop: list[str] | None) -> Completion:
        """`chat` at temperature 0 under a grammar, by `greedy_grammar` (same tokens, faster)."""
        from mags_lib.llm.greedy_grammar import greedy_grammar

        compiled = self._grammar(grammar)  # a bad grammar fails before any evaluation
        self._check_fits(len(prompt), max_tokens)
        t0 = time.perf_counter()
        self._start_chat(prefix)
        self.llama.eval(prompt[self.llama.n_tokens:])
        out = greedy_grammar(self.llama, compiled, max_tokens=max_tokens, stop=stop)
        return Completion(text=out.text, seconds=time.perf_counter() - t0,
                          finish_reason=out.finish_reason,
                          usage={"prompt_tokens": len(prompt), "completion_tokens": out.n_tokens,
                                 "total_tokens": len(prompt) + out.n_tokens})

    def chat(self, messages: list[Message], *, grammar: str | None = None, max_tokens: int = 128,
             temperature: float = 0.0, seed: int = 0, stop: list[str] | None = None) -> Completion:
        prefix, prompt = self._render(messages)
        if grammar and temperature == 0.0 and prompt:
            return self._chat_greedy_grammar(prefix, prompt, grammar, max_tokens, stop)
        t0 = time.perf_counter()
        self._start_chat(prefix)
        out = self.llama.create_chat_completion(
            messages=messages,
            grammar=self._grammar(grammar),
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            stop=stop or [],
        )
        seconds = time.perf_counter() - t0
        choice = out["choices"][0]
        return Completion(
            text=choice["message"]["content"] or "",
            usage=dict(out.get("usage", {})),
            seconds=seconds,
            finish_reason=choice.get("finish_reason") or "stop",
        )

    def stream_chat(self, messages: list[Message], *, grammar: str | None = None,
                    max_tokens: int = 128, temperature: float = 0.0, seed: int = 0,
                    stop: list[str] | None = None) -> Iterator[str]:
        """`chat`, yielding the reply's text piece by piece as it is generated."""
        self._start_chat(self._render(messages)[0])
        for chunk in self.llama.create_chat_completion(
                messages=messages, grammar=self._grammar(grammar), max_tokens=max_tokens,
                temperature=temperature, seed=seed, stop=stop or [], stream=True):
            piece = chunk["choices"][0].get("delta", {}).get("content")
            if piece:
                yield piece

    def chat_prompt(self, messages: list[Message]) -> str:
        """The text `chat` evaluates for `messages`: the chat template with the assistant's
        turn opened (for `score`-ing the beginnings of a reply)."""
        if self._chat_formatters is None:
            raise MagsError(f"{self.name} is served another chat format than its template",
                            "score replies with a GGUF that carries tokenizer.chat_template")
        return self._chat_formatters[True](messages=messages).prompt

    def score(self, prompt: str, continuations: list[str]) -> list[float]:
        """Log-probability of each continuation after `prompt` (the sum over its tokens).

        The prompt is evaluated once; each continuation is evaluated after it, one token at a
        time, reading the next token's logits (so `logits_all` stays off and nothing else
        changes). A continuation is tokenized together with the prompt, and its tokens are those
        past the prompt's, so a word is split as it would be in generated text. (One batch per
        continuation, keeping each position's logits, was 3% faster on the answer model and
        moved scores by up to 0.03: not worth reaching further into llama-cpp-python.)
        """
        return self.score_prompts([prompt], continuations)[0]

    def score_prompts(self, prompts: list[str], continuations: list[str]) -> list[list[float]]:
        """`score` for each of several prompts that share a beginning (the rotations of one
        question): the tokens a prompt shares with the one before are not evaluated again.

        Deterministic: the cache is reset first, so the same prompts give the same scores
        whatever ran before. A prompt after the first can differ from its own `score` call in
        the last digits, as its shared beginning was evaluated in another batch split.
        """
        import numpy as np

        if not continuations or not prompts:
            return [[] for _ in prompts]
        n_vocab = self.llama.n_vocab()

        def logprobs() -> np.ndarray:
            row = np.ctypeslib.as_array(self.llama._ctx.get_logits_ith(-1), shape=(n_vocab,))
            row = row.astype(np.float64)
            return row - (row.max() + np.log(np.exp(row - row.max()).sum()))

        self._reset()
        before: list[int] = []  # the previous prompt's tokens, still in the KV cache
        out = []
        for prompt in prompts:
            prompt_ids = self.llama.tokenize(prompt.encode(), add_bos=True, special=True)
            full_ids = [self.llama.tokenize((prompt + c).encode(), add_bos=True, special=True)
                        for c in continuations]
            self._check_fits(len(prompt_ids), max(len(f) for f in full_ids) - len(prompt_ids) + 1)
            keep = 0  # at least the last token is evaluated again, for its logits
            while (keep < min(len(before), len(prompt_ids) - 1)
                   and before[keep] == prompt_ids[keep]):
                keep += 1
            self.llama.n_tokens = keep  # eval() drops the cache past this point
            self.llama.eval(prompt_ids[keep:])
            before = prompt_ids
            first = logprobs()
            scores = []
            for ids in full_ids:
                if ids[: len(prompt_ids)] != prompt_ids:  # the join merged across the boundary
                    ids = prompt_ids + self.llama.tokenize(
                        continuations[len(scores)].encode(), add_bos=False, special=True)
                rest = ids[len(prompt_ids):]
                self.llama.n_tokens = len(prompt_ids)  # drop the last continuation's tokens
                total, lp = 0.0, first
                for i, tok in enumerate(rest):
                    total += float(lp[tok])
                    if i + 1 < len(rest):
                        self.llama.eval([tok])
                        lp = logprobs()
                scores.append(total)
            out.append(scores)
        self._reset()
        return out

    def complete(self, prompt: str, *, grammar: str | None = None, max_tokens: int = 128,
                 temperature: float = 0.0, seed: int = 0, stop: list[str] | None = None) -> Completion:
        self._check_fits(self._count(prompt), max_tokens)
        self._reset()
        t0 = time.perf_counter()
        out = self.llama.create_completion(
            prompt=prompt,
            grammar=self._grammar(grammar),
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            stop=stop or [],
        )
        seconds = time.perf_counter() - t0
        choice = out["choices"][0]
        return Completion(
            text=choice["text"],
            usage=dict(out.get("usage", {})),
            seconds=seconds,
            finish_reason=choice.get("finish_reason") or "stop",
        )
