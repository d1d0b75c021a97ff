"""The order-debiased choice: rotations of the question, scoring, and the backends' `score`."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mags_lib.agents import AgentConfig
from mags_lib.agents.option_order import debiased_scores, rotations
from mags_lib.agents.prompt import decide
from mags_lib.errors import MagsError
from mags_lib.llm import Completion
from mags_lib.llm.cache import CachedLLM, GenerationCache

LINES = ["On frosty turns, the grilb eats only the pebble."]
QUESTION = "A frosty turn comes. Which of the pebble and the felt does the grilb want?"


class LastNamedLLM:
    """Scores like the 135M answer model unsure of itself: +3 for the option the question names
    last, +2 for the option a memory line says the creature eats (and counts its calls)."""

    name = "fake:last-named"

    def __init__(self):
        self.calls = 0

    def score(self, prompt: str, continuations: list[str]) -> list[float]:
        self.calls += 1
        question = prompt.splitlines()[-2]
        notes = " ".join(prompt.splitlines()[:-2])
        items = [re.match(r"\s*(\w+)", c).group(1) for c in continuations]
        last = max(items, key=lambda i: question.rfind(f"the {i}"))
        return [3.0 * (i == last) + 2.0 * (f"only the {i}" in notes) for i in items]

    def complete(self, prompt: str, **_kw) -> Completion:  # greedy: the best score, as scored
        question = prompt.splitlines()[-2]
        options = re.findall(r"the (\w+)", question.split("Which of")[-1])[:-1]
        scores = self.score(prompt, options)
        return Completion(text=" " + options[int(np.argmax(scores))])


def test_rotations_move_every_option_through_every_place():
    two = rotations(QUESTION, ("pebble", "felt"))
    assert two == [QUESTION, QUESTION.replace("pebble", "@").replace("felt", "pebble")
                   .replace("@", "felt")]
    three = rotations("Give the grilb the a, the b or the c.", ["c", "a", "b"])
    assert len(three) == 3 and len(set(three)) == 3
    for place in range(3):  # each option stands once in each place
        assert {re.findall(r"the (\w)\b", q)[place] for q in three} == {"a", "b", "c"}


@pytest.mark.parametrize("question, options", [
    ("Feed the grilb the felt or the felted felt.", ("felt", "felted")),  # named twice
    ("Feed the grilb.", ("felt", "pebble")),  # not named
    ("Feed the grilb the felt.", ("felt",)),  # nothing to rotate
])
def test_a_question_whose_options_cannot_be_placed_is_asked_as_it_came(question, options):
    assert rotations(question, options) == [question]


def test_the_debiased_choice_follows_the_notes_where_greedy_follows_the_position():
    llm = LastNamedLLM()
    greedy = decide(llm, LINES, QUESTION, ("pebble", "felt"))
    assert greedy.action == "felt"  # the option named last, against the note
    chosen = decide(llm, LINES, QUESTION, ("pebble", "felt"), debias_order=True)
    assert chosen.action == "pebble" and chosen.text == " pebble"
    assert chosen.scores == {"pebble": 3.5, "felt": 1.5}
    assert chosen.prompt.endswith(QUESTION + "\nAnswer:")  # the question as it came
    tagged = decide(llm, LINES, QUESTION, ("pebble", "felt"), debias_order=True,
                    answer_tags=True)
    assert tagged.text == "<answer>pebble</answer>"


def test_debiased_scores_average_the_rotations_and_need_a_scoring_backend():
    llm = LastNamedLLM()
    prompts = [f"{LINES[0]}\n{q}\nAnswer:" for q in rotations(QUESTION, ("pebble", "felt"))]
    assert debiased_scores(llm, prompts, ("pebble", "felt"), " {}") == [3.5, 1.5]
    assert llm.calls == 2

    class NoScore:
        name = "openai:served"

    with pytest.raises(MagsError, match="cannot score") as err:
        debiased_scores(NoScore(), prompts, ("pebble", "felt"))
    assert "debias_order=False" in str(err.value)


def test_the_cache_serves_repeated_scores_and_keeps_a_backend_without_score_unable(tmp_path):
    inner = LastNamedLLM()
    llm = CachedLLM(inner, GenerationCache(tmp_path / "c.sqlite"))
    first = decide(llm, LINES, QUESTION, ("pebble", "felt"), debias_order=True)
    second = decide(llm, LINES, QUESTION, ("pebble", "felt"), debias_order=True)
    assert first.action == second.action == "pebble" and inner.calls == 2  # 2 rotations, once

    class NoScore:
        name = "fake:no-score"

    with pytest.raises(MagsError, match="cannot score"):
        decide(CachedLLM(NoScore(), GenerationCache(tmp_path / "d.sqlite")), LINES, QUESTION,
               ("pebble", "felt"), debias_order=True)


def test_debias_order_refuses_chat_prompts_and_sampling():
    with pytest.raises(MagsError, match="prompt_format='completion'"):
        AgentConfig(debias_order=True, prompt_format="chat")
    with pytest.raises(MagsError, match="temperature"):
        AgentConfig(debias_order=True, temperature=0.7)
    with pytest.raises(MagsError, match="decide: .*completion"):
        decide(LastNamedLLM(), LINES, QUESTION, ("pebble", "felt"), prompt_format="chat",
               debias_order=True)
    from mags_lib.evaluation import EvalConfig

    with pytest.raises(MagsError, match="EvalConfig.debias_order"):
        EvalConfig(prompt_format="chat")  # debias_order is on by default
    assert EvalConfig(prompt_format="chat", debias_order=False).prompt_format == "chat"


@pytest.mark.slow
def test_llamacpp_scores_equal_the_log_probabilities_of_a_full_forward_pass(embedded_llm):
    import llama_cpp

    prompt = "\n".join([*LINES, QUESTION, "Answer:"])
    conts = [" pebble", " felt", " pebble and the felt"]
    scores = embedded_llm.score(prompt, conts)
    ref = llama_cpp.Llama(model_path=str(embedded_llm.path), logits_all=True, n_ctx=256,
                          verbose=False)
    n = len(ref.tokenize(prompt.encode(), add_bos=True, special=True))
    for cont, got in zip(conts, scores, strict=True):
        ids = ref.tokenize((prompt + cont).encode(), add_bos=True, special=True)
        ref.reset()
        ref.eval(ids)
        logits = ref.scores[: len(ids)].astype(np.float64)
        top = logits.max(1, keepdims=True)
        logp = logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))
        want = sum(logp[i - 1, ids[i]] for i in range(n, len(ids)))
        # Q4_1 numerics depend on the batch split: the same reference evaluated one token
        # at a time differs from this one by up to 0.16; an off-by-one token is nats away
        assert got == pytest.approx(want, abs=0.25)
    assert scores[2] < scores[0]  # more tokens, more log-probability spent
    # the scoring leaves generation as it was: the same greedy text before and after
    again = embedded_llm.complete(prompt, max_tokens=4)
    embedded_llm.score(prompt, conts)
    assert embedded_llm.complete(prompt, max_tokens=4).text == again.text


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["llamacpp", "transformers"])
def test_scores_follow_the_chain_rule(backend, embedded_llm):
    """log P(a b | p) = log P(a | p) + log P(b | p a): each token is scored once, in place."""
    if backend == "llamacpp":
        llm, tol = embedded_llm, 0.25  # Q4_1, batch-split numerics (see above)
    else:
        from mags_lib.llm.hf import TransformersLLM
        from mags_lib.models import torch_checkpoint

        llm, tol = TransformersLLM(torch_checkpoint()), 1e-3
    prompt = "\n".join([*LINES, QUESTION, "Answer:"])
    whole, = llm.score(prompt, [" pebble and the felt"])
    head, = llm.score(prompt, [" pebble"])
    tail, = llm.score(prompt + " pebble", [" and the felt"])
    assert whole == pytest.approx(head + tail, abs=tol)
    assert whole < head < 0


@pytest.mark.slow
def test_llamacpp_scores_the_rotations_sharing_their_beginning(embedded_llm):
    """`score_prompts` evaluates what a rotation shares with the one before once, and scores as
    `score` does, whatever ran before it."""
    prompts = ["\n".join([*LINES, q, "Answer:"]) for q in rotations(QUESTION, ("pebble", "felt"))]
    conts = [" pebble", " felt"]
    alone = [embedded_llm.score(p, conts) for p in prompts]
    llama = embedded_llm.llama
    evaluated: list[int] = []
    real_eval = llama.eval

    def counting_eval(tokens):
        evaluated.append(len(tokens))
        return real_eval(tokens)

    llama.eval = counting_eval
    try:
        together = embedded_llm.score_prompts(prompts, conts)
    finally:
        del llama.eval
    n = [len(llama.tokenize(p.encode(), add_bos=True, special=True)) for p in prompts]
    prompt_evals = [k for k in evaluated if k > 1]  # continuations go one token at a time
    assert prompt_evals[0] == n[0] and prompt_evals[1] < n[1] // 2  # the notes not again
    for got, want in zip(together, alone, strict=True):
        assert got == pytest.approx(want, abs=0.05)
    embedded_llm.score(QUESTION, [" felt"])  # something else in between
    assert embedded_llm.score_prompts(prompts, conts) == together
    assert embedded_llm.score_prompts([], conts) == []


def test_the_cache_keeps_a_backends_rotations_as_one_request(tmp_path):
    class Together(LastNamedLLM):
        def score_prompts(self, prompts, continuations):
            self.batches = getattr(self, "batches", 0) + 1
            return [self.score(p, continuations) for p in prompts]

    inner = Together()
    llm = CachedLLM(inner, GenerationCache(tmp_path / "c.sqlite"))
    for _ in range(2):
        assert decide(llm, LINES, QUESTION, ("pebble", "felt"), debias_order=True).scores == {
            "pebble": 3.5, "felt": 1.5}
    assert inner.batches == 1 and inner.calls == 2  # both rotations in one request, cached
