"""A tiny stand-in for the decision LLM, so agents and evaluations can be tested in milliseconds.

`RuleReaderLLM` answers a decision prompt the way a perfect reader would: it reads the memory
lines from the last (most relevant) up and picks the option the first rule about the asked
creature and condition names; with no such rule it picks an option at random (seeded by the
prompt, so the same prompt gets the same answer). With the oracle's lines it scores 100%, with
no lines about 1 / n_items. `fail_after` makes it raise on a later call, like a backend that
dies mid-run.

    >>> llm = RuleReaderLLM()
    >>> prompt = ("On rainy turns, the red quax eats only the slate.\\n"
    ...           "It is a rainy turn. The red quax is offered the iron and the slate. "
    ...           "Which does it eat?\\nAnswer: The red quax eats the")
    >>> llm.complete(prompt, grammar='root ::= " iron" | " slate"').text
    ' slate'
"""

from __future__ import annotations

import re
import zlib
from typing import Any

from mags_lib.llm.base import Completion

_OPTION = re.compile(r'"\s?([^"]+)"')


class RuleReaderLLM:
    """See the module docstring. Counts calls in `calls`."""

    name = "fake:rule-reader"

    def __init__(self, fail_after: int | None = None, chars_per_token: int = 4):
        self.fail_after = fail_after
        self.chars_per_token = chars_per_token
        self.calls = 0

    def _answer(self, text: str, grammar: str | None) -> str:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise ConnectionError("fake backend went away")
        options = [o for o in _OPTION.findall(grammar or "") if not o.startswith("<")] or ["?"]
        if grammar and "<answer>" in grammar:  # the answer model's format (answer_tags)
            return f"<answer>{self._pick(text, options)}</answer>"
        return self._pick(text, options)

    def _pick(self, text: str, options: list[str]) -> str:
        from mags_lib.game.senseless import DECIDE_PATTERN, parse_rule

        lines = text.split("\n")
        asked = None
        for i in range(len(lines) - 1, -1, -1):
            asked = DECIDE_PATTERN.search(lines[i])
            if asked:
                lines = lines[:i]
                break
        for line in reversed(lines):
            rule = parse_rule(line)
            if (asked and rule and rule.creature == asked["creature"]
                    and rule.condition == asked["condition"] and rule.item in options):
                return rule.item
        return options[zlib.crc32(text.encode()) % len(options)]

    def _completion(self, text: str, answer: str) -> Completion:
        return Completion(text=answer, usage={"prompt_tokens": len(text) // self.chars_per_token},
                          seconds=0.001)

    def complete(self, prompt: str, *, grammar: str | None = None, **_: Any) -> Completion:
        return self._completion(prompt, " " + self._answer(prompt, grammar))

    def chat(self, messages: list[dict[str, str]], *, grammar: str | None = None,
             **_: Any) -> Completion:
        text = "\n".join(m["content"] for m in messages)
        return self._completion(text, self._answer(text, grammar))
