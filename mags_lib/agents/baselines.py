"""The baselines MAGS is measured against: no memory, the whole transcript, append-only RAG, and
the oracle that reads the rules in force.

* `BareAgent`: no memory lines; scores chance (1 / n_items) on invented rules.
* `FullContextAgent`: the most recent turns that fit in the context window (the LLM's n_ctx,
  measured with its own tokenizer; see `prompt.count_tokens`) minus the question, the answer
  and a margin. Grows with the game until the window is full: the cost MAGS should avoid.
* `StaticRagAgent`: every observed text, as it came, is appended to an index (each distinct
  text once, its turns kept as sources) and never updated or superseded; the k best matches of
  the question are the memory lines. It retrieves the way MAGS's anchors do: the same embedder
  (all-MiniLM-L6-v2) and the same hybrid score, (1 - w) * cosine + w * BM25 / max BM25 with
  w = `MemoryConfig.lexical_weight`, so a gap to MAGS measures the memory's structure, writes
  and dynamics, not the retriever. The original project's baseline: it "only adds text", so
  after a rule changes both versions match the question about equally well.
* `StaticRagBM25Agent` (`static_rag_bm25`): the same with BM25 alone (the earlier baseline).
* `OracleAgent`: the k rules in force (`env.current_rules()`), the one governing the question
  (from the game's ground truth) last and the others by word overlap with it: a perfect memory,
  the upper bound. Only the oracle and `mags_scripted` read the game's ground truth.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mags_lib.agents.base import Agent, AgentConfig, recalled
from mags_lib.agents.prompt import context_window, count_tokens, render_prompt
from mags_lib.tasks.base import Observation


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
        truth = self.env.ground_truth() if hasattr(self.env, "ground_truth") else None
        governing = getattr(truth, "rule_text", None)
        rules = oracle_rules(self.env.current_rules(), governing, obs.text, self.config.k)
        return [recalled(f"rule:{i}", text, score=None, sources=["env.current_rules"])
                for i, text in enumerate(rules)]


def oracle_rules(rules: list[str], governing: str | None, question: str, k: int) -> list[str]:
    """The k rules most relevant to `question`: `governing` (the rule that decides it, from
    the game's ground truth) last, the others by words shared with the question.

    >>> rules = ["On rainy turns, the red quax eats only the slate.",
    ...          "On sunny turns, the red quax eats only the iron.",
    ...          "On frosty turns, the teal breep eats only the felt."]
    >>> oracle_rules(rules, rules[1], "It is a sunny turn. The red quax is offered the iron.", 2)
    ['On rainy turns, the red quax eats only the slate.', 'On sunny turns, the red quax eats only the iron.']
    """
    from mags_lib.memory.lexical import content_terms

    if k <= 0:
        return []
    asked = set(content_terms(question))

    def relevance(text: str) -> tuple[int, int]:
        return int(text == governing), len(asked & set(content_terms(text)))

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


class StaticRagBM25Agent(Agent):
    """Append-only BM25 retrieval over every text seen; nothing is ever updated."""

    name = "static_rag_bm25"

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
            self.add_document(doc, obs.text)
        self.sources[doc].append(obs.turn)

    def add_document(self, doc: int, text: str) -> None:
        self.index.add(doc, text)

    def scores(self, question: str) -> dict[int, float]:
        """Document -> retrieval score for `question` (BM25 here)."""
        ids, scores = self.index.search(question, len(self.texts))
        return {int(i): float(s) for i, s in zip(ids, scores, strict=True)}

    def memory_lines(self, obs: Observation) -> list[dict[str, Any]]:
        k = self.config.k
        if not self.texts or k <= 0:
            return []
        ranked = sorted(self.scores(obs.text).items(), key=lambda p: (-p[1], p[0]))
        hits = [(i, s) for i, s in ranked if self.texts[i] != obs.text][:k]
        return [recalled(i, self.texts[i], score=round(s, 4), sources=self.sources[i])
                for i, s in reversed(hits)]

    def memory_size(self) -> int:
        return len(self.texts)

    def memory_nodes(self) -> list[dict[str, Any]]:
        return [{"text": t, "valid": True} for t in self.texts]


class StaticRagAgent(StaticRagBM25Agent):
    """Append-only hybrid (dense + BM25) retrieval, scored as MAGS's recall anchors are."""

    name = "static_rag"
    embedder: Any = None

    def reset(self, seed: int) -> None:
        super().reset(seed)
        from mags_lib.memory import MemoryConfig

        if self.embedder is None:
            from mags_lib.embed import MemoEmbedder, default_embedder

            self.embedder = MemoEmbedder(default_embedder())
        self.lexical_weight = MemoryConfig().recall.lexical_weight
        self.vectors: list[np.ndarray] = []

    def add_document(self, doc: int, text: str) -> None:
        super().add_document(doc, text)
        vec = np.asarray(self.embedder.encode([text])[0], dtype=np.float32)
        self.vectors.append(vec / max(float(np.linalg.norm(vec)), 1e-12))

    def scores(self, question: str) -> dict[int, float]:
        lexical = super().scores(question)
        top = max(lexical.values(), default=0.0)
        q = np.asarray(self.embedder.encode([question])[0], dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        cosines = np.stack(self.vectors) @ q
        w = self.lexical_weight
        return {i: (1 - w) * max(float(c), 0.0) + w * (lexical.get(i, 0.0) / top if top > 0
                                                        else 0.0)
                for i, c in enumerate(cosines.tolist())}
