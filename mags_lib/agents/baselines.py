"""The baselines MAGS is measured against: no memory, the whole transcript, append-only RAG, and
the oracle that reads the rules in force.

* `BareAgent`: no memory lines; scores chance (1 / n_items) on invented rules.
* `FullContextAgent`: the most recent turns that fit in the context window (the LLM's n_ctx,
  measured with its own tokenizer; see `prompt.count_tokens`) minus the question, the answer
  and a margin. Grows with the game until the window is full: the cost MAGS should avoid.
* `StaticRagAgent`: every observed text is appended to a BM25 index (each distinct text once,
  its turns kept as sources) and never updated or superseded; the k best matches of the
  question are the memory lines. The original project's baseline: it "only adds text", so after
  a rule changes both versions match the question equally well.
* `OracleAgent`: the k rules in force (`env.current_rules()`), the one governing the question
  last and the others by word overlap with it: a perfect memory, the upper bound.
"""

from __future__ import annotations

from typing import Any

from mags_lib.agents.base import Agent, AgentConfig, recalled
from mags_lib.agents.prompt import context_window, count_tokens, render_prompt
from mags_lib.game.base import Observation


class BareAgent(Agent):
    """No memory at all."""

    name = "bare"

    def reset(self, seed: int) -> None:
        pass

    def observe(self, obs: Observation, reward: float | None = None,
                info: dict[str, Any] | None = None) -> None:
        pass

    def memory_lines(self, obs: Observation) -> list[dict[str, Any]]:
        return []


class OracleAgent(Agent):
    """Reads the rules in force from the env it is attached to."""

    name = "oracle"

    def __init__(self, llm: Any, config: AgentConfig | None = None, env: Any | None = None):
        super().__init__(llm, config)
        self.env = env

    def attach(self, env: Any) -> None:
        self.env = env

    def reset(self, seed: int) -> None:
        pass

    def observe(self, obs: Observation, reward: float | None = None,
                info: dict[str, Any] | None = None) -> None:
        pass

    def memory_lines(self, obs: Observation) -> list[dict[str, Any]]:
        if self.env is None:
            from mags_lib.errors import MagsError

            raise MagsError("the oracle agent has no env to read the rules from",
                            "pass env= to make_agent or call agent.attach(env)")
        rules = oracle_rules(self.env.current_rules(), obs.text, self.config.k)
        return [recalled(f"rule:{i}", text, score=None, sources=["env.current_rules"])
                for i, text in enumerate(rules)]


def oracle_rules(rules: list[str], question: str, k: int) -> list[str]:
    """The k rules most relevant to `question`, the governing one (same creature and condition)
    last, the others by shared words, least relevant first.

    >>> rules = ["On rainy turns, the red quax eats only the slate.",
    ...          "On sunny turns, the red quax eats only the iron.",
    ...          "On frosty turns, the teal breep eats only the felt."]
    >>> oracle_rules(rules, "It is a sunny turn. The red quax is offered the iron and the felt.", 2)
    ['On rainy turns, the red quax eats only the slate.', 'On sunny turns, the red quax eats only the iron.']
    """
    from mags_lib.game.senseless import DECIDE_PATTERN, parse_rule
    from mags_lib.memory.lexical import content_terms

    if k <= 0:
        return []
    m = DECIDE_PATTERN.search(question)
    asked = set(content_terms(question))

    def relevance(text: str) -> tuple[int, int]:
        rule = parse_rule(text)
        governs = bool(m and rule and rule.creature == m["creature"]
                       and rule.condition == m["condition"])
        return int(governs), len(asked & set(content_terms(text)))

    ranked = sorted(rules, key=lambda r: (relevance(r), r), reverse=True)[:k]
    return ranked[::-1]


class FullContextAgent(Agent):
    """The transcript, cut to the most recent turns that fit in the context window."""

    name = "full_context"

    def reset(self, seed: int) -> None:
        self.turns: list[tuple[int, str, int]] = []  # (turn, text, tokens incl. newline)

    def observe(self, obs: Observation, reward: float | None = None,
                info: dict[str, Any] | None = None) -> None:
        if obs.text:
            self.turns.append((obs.turn, obs.text, count_tokens(self.llm, obs.text) + 1))

    def budget(self, obs: Observation) -> int:
        """Tokens left for transcript lines once the question and the answer are in."""
        cfg = self.config
        window = cfg.context_window or context_window(self.llm)
        fixed = count_tokens(self.llm, render_prompt([], obs.text, cfg.prompt_format))
        return window - fixed - cfg.max_tokens - cfg.context_margin

    def memory_lines(self, obs: Observation) -> list[dict[str, Any]]:
        left = self.budget(obs)
        kept: list[tuple[int, str]] = []
        for turn, text, tokens in reversed(self.turns):
            if turn == obs.turn:
                continue  # the question itself is asked below the lines
            if tokens > left:
                break
            left -= tokens
            kept.append((turn, text))
        return [recalled(f"turn:{t}", text, sources=[t]) for t, text in reversed(kept)]

    def memory_size(self) -> int:
        return len(self.turns)


class StaticRagAgent(Agent):
    """Append-only BM25 retrieval over every text seen; nothing is ever updated."""

    name = "static_rag"

    def reset(self, seed: int) -> None:
        from mags_lib.memory.lexical import BM25Index

        self.index = BM25Index()
        self.texts: list[str] = []
        self.sources: list[list[int]] = []
        self.doc_of: dict[str, int] = {}

    def observe(self, obs: Observation, reward: float | None = None,
                info: dict[str, Any] | None = None) -> None:
        if not obs.text or (obs.legal_actions and not self.config.remember_questions):
            return
        doc = self.doc_of.get(obs.text)
        if doc is None:
            doc = self.doc_of[obs.text] = len(self.texts)
            self.texts.append(obs.text)
            self.sources.append([])
            self.index.add(doc, obs.text)
        self.sources[doc].append(obs.turn)

    def memory_lines(self, obs: Observation) -> list[dict[str, Any]]:
        k = self.config.k
        ids, scores = self.index.search(obs.text, k + 1)
        hits = [(int(i), float(s)) for i, s in zip(ids, scores, strict=True)
                if self.texts[int(i)] != obs.text][:k]
        return [recalled(i, self.texts[i], score=s, sources=self.sources[i])
                for i, s in reversed(hits)]

    def memory_size(self) -> int:
        return len(self.texts)

    def memory_nodes(self) -> list[dict[str, Any]]:
        return [{"text": t, "valid": True} for t in self.texts]
