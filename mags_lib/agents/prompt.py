"""The one decision prompt every agent uses, and the grammar that makes the answer a legal action.

Agents differ only in the memory lines they hand to `decide`; the layout, the question and the
constrained choice are the same for all of them, so a difference in accuracy is a difference in
memory, not in output format.

Two formats (`PROMPT_FORMATS`):

* "completion" (default): a plain text continuation: the memory lines, the observation as it
  came, and a generic answer stem; the grammar continues it with one legal item:

      On frosty turns, the lanky grilb eats only the slate.      <- memory lines, most relevant last
      It is a frosty turn. The lanky grilb is offered the cello and the slate. Which does it eat?
      Answer:                                                    <- the grammar continues: " slate"

  The stem is the same for every observation: no code here reads the game's question or
  restates it in the rules' words (that would hand every agent the game's template; a test
  checks that no agent or prompt module imports the game's structure).

* "chat": the same lines and question as one user message, answered with the bare item.

With `answer_tags=True` the grammar wraps the item in `<answer>...</answer>`: the output format
of the answer model trained in notebook 02 (its rows in `data/synth/answer/` end so), so a
trained answer model plugs into the evaluation as the decision LLM unchanged.

The choice is greedy (temperature 0, unless `AgentConfig.temperature` says otherwise) under a
GBNF alternation of the options (`root ::= " cello" | " slate"`), so the model always names
exactly one legal action.

    >>> options_grammar(("cello", "slate"), leading_space=True)
    'root ::= " cello" | " slate"'
    >>> completion_prompt(["The grilb eats slate."], "Which does the grilb eat?").splitlines()
    ['The grilb eats slate.', 'Which does the grilb eat?', 'Answer:']
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from mags_lib.errors import MagsError

PROMPT_FORMATS = ("completion", "chat")
CHAT_SYSTEM = ("You play a game with invented feeding rules. Use the notes to answer with the "
               "one item the creature eats.")
ANSWER_STEM = "Answer:"
ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"
_TAGGED = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.S)
_TAGGED_EXTRA_TOKENS = 10  # "<answer>" and "</answer>" are several tokens each
_CHARS_PER_TOKEN = 3.0  # a safe (pessimistic) estimate for English text with a BPE tokenizer


@dataclass(frozen=True)
class Choice:
    """What the LLM chose and what it cost: the action, the prompt as sent, the usage."""

    action: str | None
    text: str
    prompt: str
    prompt_tokens: int
    llm_seconds: float
    cached: bool
    scores: dict[str, float] | None = None  # the debiased choice's mean log-probabilities


def options_grammar(options: tuple[str, ...] | list[str], *, leading_space: bool,
                    tagged: bool = False) -> str:
    """GBNF alternation of the legal actions (each a string literal); `tagged` wraps it in
    `<answer>...</answer>` (no leading space then, as in the answer model's training rows).

    >>> options_grammar(("cello", "slate"), leading_space=False, tagged=True)
    'root ::= "<answer>" ( "cello" | "slate" ) "</answer>"'
    """
    if not options:
        raise MagsError("a decision without legal actions", "call act() only on decision turns")
    space = " " if leading_space and not tagged else ""
    alternation = " | ".join(f'"{space}{_gbnf_escape(o)}"' for o in options)
    if tagged:
        return f'root ::= "{ANSWER_OPEN}" ( {alternation} ) "{ANSWER_CLOSE}"'
    return "root ::= " + alternation


def strip_answer_tags(text: str) -> str:
    """The item inside `<answer>...</answer>` (the text itself when it has no tags)."""
    m = _TAGGED.search(text)
    return m.group(1).strip() if m else text


def _gbnf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def completion_prompt(lines: list[str], question: str) -> str:
    """Memory lines (most relevant last), the question, the answer stem."""
    return "\n".join([*lines, question, ANSWER_STEM])


def chat_messages(lines: list[str], question: str) -> list[dict[str, str]]:
    notes = "\n".join(lines) if lines else "(no notes)"
    return [{"role": "system", "content": CHAT_SYSTEM},
            {"role": "user", "content": f"Notes:\n{notes}\n\n{question}\nAnswer with one word."}]


def render_prompt(lines: list[str], question: str, prompt_format: str) -> str:
    """The text the LLM reads (for a chat, the messages joined), for records and token counts."""
    if prompt_format == "completion":
        return completion_prompt(lines, question)
    return "\n\n".join(m["content"] for m in chat_messages(lines, question))


def decide(llm: Any, lines: list[str], question: str, options: tuple[str, ...], *,
           prompt_format: str = "completion", max_tokens: int = 8, seed: int = 0,
           answer_tags: bool = False, temperature: float = 0.0,
           debias_order: bool = False) -> Choice:
    """Ask `llm` to pick one of `options` given the memory `lines`, constrained, greedy unless
    `temperature` > 0 (`answer_tags`: as `<answer>item</answer>`, the trained answer model's
    format). `debias_order`: score every option under every rotation of the options' order in
    the question and take the best mean (`option_order.py`; completion format, greedy)."""
    from mags_lib.tasks.base import match_action

    if prompt_format not in PROMPT_FORMATS:
        raise MagsError(f"unknown prompt format {prompt_format!r}",
                        f"use one of {', '.join(PROMPT_FORMATS)}")
    if debias_order:
        return _decide_debiased(llm, lines, question, tuple(options), prompt_format=prompt_format,
                                answer_tags=answer_tags, temperature=temperature)
    chat = prompt_format == "chat"
    grammar = options_grammar(options, leading_space=not chat, tagged=answer_tags)
    if answer_tags:
        max_tokens += _TAGGED_EXTRA_TOKENS
    if chat:
        out = llm.chat(chat_messages(lines, question), grammar=grammar, max_tokens=max_tokens,
                       temperature=temperature, seed=seed)
    else:
        out = llm.complete(completion_prompt(lines, question), grammar=grammar,
                           max_tokens=max_tokens, temperature=temperature, seed=seed)
    prompt = render_prompt(lines, question, prompt_format)
    tokens = int(out.usage.get("prompt_tokens") or count_tokens(llm, prompt))
    action = match_action(strip_answer_tags(out.text).strip(), options)
    return Choice(action=action, text=out.text, prompt=prompt,
                  prompt_tokens=tokens, llm_seconds=float(out.seconds),
                  cached=bool(getattr(out, "cached", False)))


def _decide_debiased(llm: Any, lines: list[str], question: str, options: tuple[str, ...], *,
                     prompt_format: str, answer_tags: bool, temperature: float) -> Choice:
    """The option with the best mean log-probability over the rotations of the question."""
    from mags_lib.agents.option_order import check_settings, debiased_scores, rotations

    check_settings(prompt_format, temperature, "decide")
    if not options:
        raise MagsError("a decision without legal actions", "call act() only on decision turns")
    t0 = time.perf_counter()
    prompts = [completion_prompt(lines, q) + (ANSWER_OPEN if answer_tags else "")
               for q in rotations(question, options)]
    scores = debiased_scores(llm, prompts, options,
                             "{}" + ANSWER_CLOSE if answer_tags else " {}")
    best = max(range(len(options)), key=lambda i: (scores[i], -i))
    action = options[best]
    prompt = completion_prompt(lines, question)
    text = f"{ANSWER_OPEN}{action}{ANSWER_CLOSE}" if answer_tags else f" {action}"
    return Choice(action=action, text=text, prompt=prompt,
                  prompt_tokens=sum(count_tokens(llm, p) for p in prompts),
                  llm_seconds=time.perf_counter() - t0, cached=False,
                  scores=dict(zip(options, (round(x, 4) for x in scores), strict=True)))


def count_tokens(llm: Any, text: str) -> int:
    """Tokens of `text` by the LLM's own tokenizer (llama.cpp `llm.llama.tokenize`, or a
    `count_tokens` method), else a pessimistic estimate of one token per 3 characters."""
    counter = getattr(llm, "count_tokens", None)
    if callable(counter):
        return int(counter(text))
    llama = getattr(llm, "llama", None)
    if llama is not None and hasattr(llama, "tokenize"):
        return len(llama.tokenize(text.encode(), add_bos=False, special=True))
    return int(len(text) / _CHARS_PER_TOKEN) + 1


def context_window(llm: Any, default: int = 2048) -> int:
    """The LLM's context window in tokens (`llm.config.n_ctx`), else `default`."""
    n_ctx = getattr(getattr(llm, "config", None), "n_ctx", None)
    return int(n_ctx) if isinstance(n_ctx, int) and n_ctx > 0 else default
