"""Stand-ins for the LLMs, so agents and evaluations can be tested in milliseconds.

They know the fixed surface's templates (that is why they live beside the game, not among the
agents): `RuleReaderLLM` is a perfect decision maker, `RuleReaderRoleLLM` a perfect ask and
write model for the closed loop (`agents/loop.py`).

`RuleReaderLLM` answers a decision prompt the way a perfect reader would: it reads the memory
lines from the last (most relevant) up and picks the option the first rule about the asked
creature (or the creature an alias line says the asked name stands for) and condition names;
with no such rule it picks an option at random (seeded by the
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
        from mags_lib.game.senseless import ALIAS_PATTERN, DECIDE_PATTERN, parse_rule

        lines = text.split("\n")
        asked = None
        for i in range(len(lines) - 1, -1, -1):
            asked = DECIDE_PATTERN.search(lines[i])
            if asked:
                lines = lines[:i]
                break
        if asked:
            # the asked name, and the creature it stands for when a line states it is an alias
            names = {asked["creature"]}
            for line in reversed(lines):
                alias = ALIAS_PATTERN.search(line)
                if alias and alias["alias"] == asked["creature"]:
                    names.add(alias["creature"])
                    break
            for line in reversed(lines):
                rule = parse_rule(line)
                if (rule and rule.creature in names and rule.condition == asked["condition"]
                        and rule.item in options):
                    return rule.item
        return options[zlib.crc32(text.encode()) % len(options)]

    def _completion(self, text: str, answer: str) -> Completion:
        return Completion(text=answer, usage={"prompt_tokens": len(text) // self.chars_per_token},
                          seconds=0.001)

    def complete(self, prompt: str, *, grammar: str | None = None, **_: Any) -> Completion:
        return self._completion(prompt, " " + self._answer(prompt, grammar))

    def score(self, prompt: str, continuations: list[str]) -> list[float]:
        """0 for the option a perfect reader picks, -5 for the others (the order-debiased
        choice's `llm.score`); each continuation is an option, maybe with `</answer>`."""
        options = [c.replace("</answer>", "").strip() for c in continuations]
        grammar = " | ".join(f'"{o}"' for o in options)
        picked = self._answer(prompt.removesuffix("<answer>"), grammar)
        return [0.0 if o == picked else -5.0 for o in options]

    def chat(self, messages: list[dict[str, str]], *, grammar: str | None = None,
             **_: Any) -> Completion:
        text = "\n".join(m["content"] for m in messages)
        return self._completion(text, self._answer(text, grammar))


class RuleReaderRoleLLM(RuleReaderLLM):
    """A perfect ask and write model on the fixed surface, and a decision maker as above.

    A write prompt (its last message holds "Memory holds:") whose observation states a rule gets
    `add` (or `update` when a held line states the same rule with another item) of the rule's
    canonical sentence, anything else the empty block; an ask prompt gets a query naming the
    asked creature and condition. `garbage=True` answers every role prompt with text that does
    not parse (the malformed-output path).

    >>> llm = RuleReaderRoleLLM()
    >>> msgs = [{"role": "system", "content": "..."}, {"role": "user", "content":
    ...         "Observation: A scroll reads: On rainy turns, the red quax eats only the slate."
    ...         "\\nMemory holds:\\n(nothing yet)"}]
    >>> print(llm.chat(msgs).text)
    <engram>
    add semantic 0.90: On rainy turns, the red quax eats only the slate.
    </engram>
    """

    name = "fake:rule-reader-roles"

    def __init__(self, garbage: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.garbage = garbage
        self.role_calls = {"ask": 0, "write": 0}

    def chat(self, messages: list[dict[str, str]], *, grammar: str | None = None,
             **kw: Any) -> Completion:
        from mags_lib.game.senseless import DECIDE_PATTERN, parse_rule

        user = messages[-1]["content"]
        if "Memory holds:" in user:
            self.role_calls["write"] += 1
            if self.garbage:
                return self._completion(user, "I would store that, yes.")
            obs, _, held = user.partition("Memory holds:")
            rule = parse_rule(obs)
            if rule is None:
                return self._completion(user, "<engram>\n</engram>")
            held_rules = [r for r in map(parse_rule, held.split("\n")) if r is not None]
            if any(r.key == rule.key and r.item == rule.item for r in held_rules):
                return self._completion(user, "<engram>\n</engram>")
            op = "update" if any(r.key == rule.key for r in held_rules) else "add"
            return self._completion(user, f"<engram>\n{op} semantic 0.90: {rule.text}\n</engram>")
        asked = DECIDE_PATTERN.search(user)
        decision = grammar is not None and grammar.startswith("root ::=")  # options_grammar
        if asked and not decision:
            self.role_calls["ask"] += 1
            if self.garbage:
                return self._completion(user, "<recall>\nfly: away")
            query = f"what does the {asked['creature']} eat on {asked['condition']} turns"
            return self._completion(user, f"<recall>\nquery: {query}\n</recall>")
        return super().chat(messages, grammar=grammar, **kw)
