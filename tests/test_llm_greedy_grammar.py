"""llama.cpp chat: the kept system-prompt prefix and the grammar consulted only when it must be.

Both are speed-ups that must not change a token: each is compared with llama-cpp-python's own
constrained sampler, evaluating every prompt from scratch, on the roles' real prompts.
"""

from __future__ import annotations

import pytest

from mags_lib.actions import engram_grammar, recall_grammar
from mags_lib.agents.role_prompts import play_ask_messages, play_write_messages
from mags_lib.llm import LLMConfig, load_llm

WRITES = ["My sister Ada moved to Lisbon in May.", "What a lovely morning it is.",
          "I started a new job at the bakery on Elm Street.", "Ada left Lisbon, she is in Porto."]
ASKS = ["Where does Ada live now?", "Which job did I start in spring?"]


def _library(llm, messages, grammar, max_tokens=64, stop=None):
    """llama-cpp-python's own path: reset, the full prompt, the grammar on every token."""
    llm._reset()
    out = llm.llama.create_chat_completion(
        messages=messages, grammar=llm._grammar(grammar), max_tokens=max_tokens,
        temperature=0.0, seed=0, stop=stop or [])
    choice = out["choices"][0]
    return choice["message"]["content"], out["usage"]["completion_tokens"], choice["finish_reason"]


@pytest.mark.slow
def test_greedy_grammar_gives_the_library_samplers_tokens(embedded_llm):
    cases = [(play_write_messages(t, ["Ada lives in Lisbon."], few_shot=True), engram_grammar(),
              ["</engram>"]) for t in WRITES]
    cases += [(play_ask_messages(q, few_shot=True), recall_grammar(), None) for q in ASKS]
    cases.append((play_write_messages(WRITES[0], []), engram_grammar(), None))  # no stop
    for messages, grammar, stop in cases:
        ours = embedded_llm.chat(messages, grammar=grammar, max_tokens=64, stop=stop)
        text, n, finish = _library(embedded_llm, messages, grammar, stop=stop)
        assert (ours.text, ours.usage["completion_tokens"], ours.finish_reason) == (text, n, finish)


@pytest.mark.slow
def test_max_tokens_ends_a_grammar_reply_with_length(embedded_llm):
    messages = play_write_messages(WRITES[2], [], few_shot=True)
    ours = embedded_llm.chat(messages, grammar=engram_grammar(), max_tokens=5)
    assert ours.finish_reason == "length" and ours.usage["completion_tokens"] == 5
    assert (ours.text, 5, "length") == _library(embedded_llm, messages, engram_grammar(), 5)


@pytest.mark.slow
def test_the_kept_prefix_is_reused_and_changes_no_reply(embedded_llm):
    fresh = load_llm(LLMConfig(cache=False, n_ctx=1024))
    messages = [play_write_messages(t, [], few_shot=True) for t in WRITES]
    first = [embedded_llm.chat(m, max_tokens=32).text for m in messages]
    prefix = embedded_llm._kept
    assert prefix  # the system prompt and worked examples stay evaluated between calls
    embedded_llm.chat([{"role": "user", "content": "Say hi"}], max_tokens=4)  # another prefix
    assert embedded_llm._kept != prefix
    again = [embedded_llm.chat(m, max_tokens=32).text for m in reversed(messages)][::-1]
    alone = [fresh.chat(m, max_tokens=32).text for m in messages[::-1]][::-1]
    assert first == again == alone
