"""transformers / torch backend: HF checkpoints, hub ids (with a network) and LoRA adapters.

Use it for models being trained (notebooks 02-03) and to check a trained adapter before GGUF
export. It cannot constrain output with a GBNF grammar: pass `grammar=None`, or export to GGUF
(notebook 04) and use the llama.cpp backend, which can.
"""

from __future__ import annotations

import time
from pathlib import Path

from mags_lib.errors import BackendUnavailableError, MagsError, ModelNotFoundError
from mags_lib.llm.base import Completion, LLMConfig, Message


def _pick_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise BackendUnavailableError(
            f"device {device!r} was asked for, but torch sees no CUDA GPU",
            "set LLMConfig.device='cpu' (or 'auto')",
        )
    return device


class TransformersLLM:
    """A causal LM loaded by transformers, optionally with a PEFT LoRA adapter on top."""

    def __init__(self, model_path: str | Path, config: LLMConfig | None = None, model=None,
                 tokenizer=None):
        self.config = config or LLMConfig()
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = _pick_device(self.config.device)
        try:
            self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(str(model_path))
            self.model = model or AutoModelForCausalLM.from_pretrained(
                str(model_path), dtype=torch.float32 if self.device == "cpu" else "auto"
            )
        except OSError as exc:
            raise ModelNotFoundError(
                f"transformers could not load {model_path!s}: {exc}",
                "check the path or hub id; offline, use model='embedded' or a local checkpoint",
            ) from exc
        if self.config.adapter:
            from peft import PeftModel

            if not Path(self.config.adapter, "adapter_config.json").is_file():
                raise ModelNotFoundError(
                    f"no LoRA adapter at {self.config.adapter} (adapter_config.json missing)",
                    "train one (notebooks 02/03) or set LLMConfig.adapter=None",
                )
            self.model = PeftModel.from_pretrained(self.model, self.config.adapter)
        self.model.to(self.device).eval()
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.name = f"transformers:{model_path}" + (f"+{self.config.adapter}" if self.config.adapter else "")

    def _generate(self, prompt: str, *, grammar, max_tokens, temperature, seed, stop) -> Completion:
        if grammar:
            raise MagsError(
                "the transformers backend cannot constrain output with a GBNF grammar",
                "pass grammar=None and parse the output, or export the model to GGUF "
                "(notebook 04) and use the llama.cpp backend",
            )
        import torch

        enc = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(self.device)
        torch.manual_seed(seed)
        kwargs = dict(max_new_tokens=max_tokens, pad_token_id=self.tokenizer.pad_token_id)
        if temperature > 0:
            kwargs.update(do_sample=True, temperature=temperature)
        else:
            kwargs.update(do_sample=False)
        t0 = time.perf_counter()
        with torch.no_grad():
            out = self.model.generate(**enc, **kwargs)
        seconds = time.perf_counter() - t0
        new = out[0, enc["input_ids"].shape[1]:]
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        finish = "length" if len(new) >= max_tokens else "stop"
        for s in stop or []:
            if s in text:
                text, finish = text[: text.index(s)], "stop"
        usage = {"prompt_tokens": int(enc["input_ids"].shape[1]), "completion_tokens": int(len(new))}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return Completion(text=text, usage=usage, seconds=seconds, finish_reason=finish)

    def score(self, prompt: str, continuations: list[str]) -> list[float]:
        """Log-probability of each continuation after `prompt` (the sum over its tokens)."""
        import torch

        n_prompt = len(self.tokenizer(prompt, add_special_tokens=False)["input_ids"])
        scores = []
        for cont in continuations:
            ids = self.tokenizer(prompt + cont, return_tensors="pt",
                                 add_special_tokens=False)["input_ids"].to(self.device)
            with torch.no_grad():
                logp = torch.log_softmax(self.model(ids).logits[0, :-1].float(), dim=-1)
            target = ids[0, 1:]
            picked = logp.gather(1, target[:, None])[:, 0]
            scores.append(float(picked[n_prompt - 1:].sum()))
        return scores

    def score_prompts(self, prompts: list[str], continuations: list[str]) -> list[list[float]]:
        """`score` for each prompt (no shared evaluation here: this backend is for checks)."""
        return [self.score(p, continuations) for p in prompts]

    def chat_prompt(self, messages: list[Message]) -> str:
        """The text `chat` generates after: the chat template with the assistant's turn open."""
        return self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                  add_generation_prompt=True)

    def chat(self, messages: list[Message], *, grammar: str | None = None, max_tokens: int = 128,
             temperature: float = 0.0, seed: int = 0, stop: list[str] | None = None) -> Completion:
        return self._generate(self.chat_prompt(messages), grammar=grammar, max_tokens=max_tokens,
                              temperature=temperature, seed=seed, stop=stop)

    def complete(self, prompt: str, *, grammar: str | None = None, max_tokens: int = 128,
                 temperature: float = 0.0, seed: int = 0, stop: list[str] | None = None) -> Completion:
        return self._generate(prompt, grammar=grammar, max_tokens=max_tokens,
                              temperature=temperature, seed=seed, stop=stop)
