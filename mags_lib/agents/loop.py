"""The closed loop: MAGS's own models write and read its memory during play.

Every turn the router picks the roles (`agents/router.py`: a turn with legal actions needs
ask + answer, anything else is information for the write model; with
`AgentConfig.remember_questions` a decision turn goes to the write model first as well, for
games whose decision turns also inform, as TextWorld's room descriptions do), then:

* **write**: memory is recalled on the observation (`write_context` lines, no learning), the
  write model reads the observation with those lines (`role_prompts.play_write_messages`) and
  emits an `<engram>` block; its actions (add / update / link / forget) are applied with
  `memory.apply`. Whether a new fact merges, supersedes or adds is decided by the model's op
  and the memory's own detectors (`update` supersedes the closest same-block fact), never by
  the game. Output that does not parse changes nothing and is counted; so does a fact that
  names what the turn never said (`LoopConfig.grounding`) or shares no word with it
  (`grounding_words`, on for `mags`; `agents.grounding`).
* **ask** (decision turns): the ask model emits a `<recall>` block under the recall grammar;
  each query runs the memory's read path (hybrid anchors, traversal along strong edges,
  Hebbian use), the hits are merged by node (best score), and the `k` best valid ones become
  the answer prompt's memory lines. A block that does not parse falls back to recalling the
  observation itself (counted).
* **working memory**: every information turn is also `memory.perceive`d into the memory's
  working block (the recent turns, `MemoryConfig.consolidation.working_capacity`, for
  `working_ttl` steps); an ask query similar to an item counts as a use. With
  `working_lines > 0` the answer prompt shows up to that many recent turns whose cosine to an
  ask query reaches `working_min_cosine`, first, in place of the weakest recalled lines: the raw
  sentence of a rule stated a few turns ago, next to what the writer made of it. Items leave
  the block unstored unless `consolidate_working` lets the memory's consolidation rule (use,
  surprise, importance) store them as episodic nodes: by default only the write model decides
  what enters long-term memory.
* **answer**: the shared decision prompt (`agents/prompt.py`) with the answer LLM, as for every
  agent; then `memory.step(reward)` when the reward arrives with the next observation.

    agent = MagsLoopAgent(answer_llm, AgentConfig(k=3), ask_llm=ask, write_llm=write)
    agent.reset(seed=0); agent.observe(obs); decision = agent.act(obs)
    agent.counts       # parsed / malformed writes and asks, ops, routes
    agent.last_timing  # seconds per stage of the last turn (route, write, apply_step, ask, ...)

`mags_prompted` is the same loop with the untrained base model for every role and a few worked
examples in the prompts (`few_shot=True`): the generic-LLM fallback, and the baseline for what
training adds. `mags_verbatim` is the same loop with no write model (`writer="verbatim"`):
every information turn is stored as it came, `add semantic 0.9: <observation>`, so the memory's
own detectors alone decide what it replaces; it measures what the trained writer adds.
`mags_episodic` is `mags` that also keeps every information turn as it came in the episodic
block (`keep_turns`): what was said beside what the writer made of it, both recalled, with the
observation itself as one more query (`recall_observation`). No code
here reads the game's structure: the observation is all it gets.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mags_lib.agents.base import AgentConfig, memory_reward, recalled
from mags_lib.agents.history_lines import PAST_LINES, earlier_only, history_depth, with_history
from mags_lib.agents.memory_agent import MemoryAgent
from mags_lib.agents.role_prompts import play_ask_messages, play_write_messages
from mags_lib.agents.router import route_turn
from mags_lib.errors import MagsError
from mags_lib.tasks.base import REPLY, Observation

WRITERS = ("model", "verbatim", "none")
"""What writes the memory on information turns (`LoopConfig.writer`)."""


@dataclass
class LoopConfig:
    write_context: int = field(default=3, metadata={
        "help": "memory lines recalled on an observation and shown to the write model"})
    query_k: int = field(default=3, metadata={
        "help": "hits recalled per ask query before the queries' hits are merged"})
    ask_max_tokens: int = field(default=96, metadata={
        "help": "new tokens for the <recall> block (three queries fit)"})
    write_max_tokens: int = field(default=96, metadata={
        "help": "new tokens for the <engram> block (one rule sentence needs about 30)"})
    ask_grammar: bool = field(default=True, metadata={
        "help": "constrain the ask model with the recall GBNF grammar"})
    write_grammar: bool = field(default=False, metadata={
        "help": "constrain the write model with the engram grammar (it cannot express 'store "
                "nothing', so the default leaves the write free and counts malformed blocks)"})
    context: str = field(default="hits", metadata={
        "help": "what the answer prompt gets: 'hits' (each query's recall hits, merged by node) "
                "or 'consolidated' (each query's recall_context items: hits connected in the "
                "recalled subgraph merged into one line, oldest first)"})
    few_shot: bool = field(default=False, metadata={
        "help": "worked examples in the ask / write prompts (mags_prompted, the base model)"})
    working_lines: int = field(default=0, metadata={
        "help": "recent turns from the working-memory block shown to the answer model in place "
                "of the weakest recalled lines (those whose cosine to an ask query reaches "
                "working_min_cosine, best first); 0: the block is filled and used-counted but "
                "not shown"})
    working_min_cosine: float = field(default=0.6, metadata={
        "help": "cosine to an ask query at which a working-memory item is shown"})
    consolidate_working: bool = field(default=False, metadata={
        "help": "let the memory's consolidation rule store working items as episodic nodes "
                "when they leave the block (off: only the write model stores)"})
    writer: str = field(default="model", metadata={
        "help": "'model': the write model emits each information turn's <engram> block; "
                "'verbatim': no write model, every information turn is added as it came "
                "(semantic, confidence 0.9), the ablation `mags_verbatim`; 'none' (with "
                "keep_turns only): no facts at all, the turns kept as said are the whole memory "
                "(what the write model's facts add to `mags_episodic`, "
                "`evaluation.evidence_ladder`)"})
    keep_turns: bool = field(default=False, metadata={
        "help": "also store every information turn as it came, as an episodic node (what was "
                "said, `LiquidMemory.observe`), beside the write model's facts; the write model "
                "is then shown the semantic facts only, so its prompts stay those of `mags` "
                "(`mags_episodic`)"})
    recall_observation: bool = field(default=False, metadata={
        "help": "recall the observation itself as one more query beside the ask model's (its "
                "hits merged with theirs by node), so that words the queries drop still reach "
                "the memory"})
    merge: str = field(default="score", metadata={
        "help": "how the queries' hits are merged (`merged_hits`): 'score' (a node's best "
                "score), 'rrf' (reciprocal rank fusion over the queries) or 'interleave' (each "
                "query's best in turn, the observation's first with recall_observation)"})
    versions: int = field(default=0, metadata={
        "help": "earlier versions shown before each recalled fact, marked '(no longer true)' "
                "(`agents.history_lines`), so that the answer model can name what was true "
                "before; 0: the facts valid now only (the game, whose stale rules only mislead)"})
    past_versions: int = field(default=1, metadata={
        "help": "earlier versions shown, as `versions` does, only where a question without "
                "options asks about the past ('where did I live before?', "
                "`history_lines.asks_about_past`); the larger of the two applies; 0: off"})
    past_lines: str = field(default="earlier", metadata={
        "help": "what a question about the past is shown of a changed fact (with "
                "past_versions > 0): 'earlier' (its earlier versions, marked, in place of the "
                "current one, `history_lines.earlier_only`; on the development personas the "
                "earlier values answered rose from 22 to 33 of 54, docs/journal.md 2026-11-30) "
                "or 'both' (side by side, the current one last)"})
    grounding: bool = field(default=False, metadata={
        "help": "refuse a written add / update that names what the observation never said (a "
                "capitalised word or a number that neither the turn nor an earlier speaker "
                "has, `agents.grounding`): it changes nothing and is counted "
                "(`write_ungrounded`); the rest of the block is applied"})
    grounding_words: bool = field(default=False, metadata={
        "help": "refuse a written add / update that shares no content word with the "
                "observation (its date and the speakers left out, `agents.grounding."
                "unshared_words`): a fact made up for a turn that states none; counted as "
                "`write_ungrounded` too"})
    turn_over_fact: bool = field(default=False, metadata={
        "help": "with keep_turns: a fact written from a turn that is also among the lines "
                "shown is left out, its place given to the next hit, unless the fact has "
                "earlier versions (`agents.turn_lines`): the turn says it in the speaker's "
                "words, where the write model can give it to the wrong person"})
    retired_turns: str = field(default="off", metadata={
        "help": "with keep_turns, for a question about now (not about the past): 'superseded' "
                "leaves out a turn every fact written from which has been superseded, as its "
                "facts are; 'updated' only where the write model's own `update` superseded "
                "them (not the memory's detector on an add); 'off' (`agents.turn_lines`)"})
    fact_share: float = field(default=1.0, metadata={
        "help": "with keep_turns: at most this share of the k lines shown (rounded) are the "
                "write model's facts (semantic nodes); the places left go to the next turns "
                "(`agents.turn_lines.at_most_facts`); 1.0: no cap"})
    none_margin: float = field(default=0.0, metadata={
        "help": "a head start, in log-probability, for storing nothing: where the write "
                "model's block adds or updates, the reply begun '<engram>\\n' is scored, and "
                "if log P('</engram>') + none_margin >= log P('add') and log P('update') the "
                "turn stores nothing (counted as `write_none_by_margin`); 0: off, the greedy "
                "block as it is. Needs a backend that scores text (llama.cpp, transformers; "
                "`tools/op_margin_study.py` reads the op accuracy by margin; 0.75 raised it on "
                "the fresh personas and lost current facts there in the loop, journal "
                "2026-12-07)"})
    write_replies: bool = field(default=True, metadata={
        "help": "give the write model the agent's own turns too (Observation kind `REPLY`: "
                "the persona's assistant, in whose place the agent reads, saying 'Thanks for "
                "the update.'); False: only what others say is written, as the chat never "
                "writes its own replies (the turns are still kept with keep_turns and "
                "perceived; skips counted as `write_skipped_reply`). LoCoMo has no replies. "
                "Judged on 24 development personas (journal 2026-12-08), not adopted: `mags` "
                "unchanged (grounding_words already refuses those writes), `mags_episodic` "
                "earlier answers +4 of 111, current -1, stale +1"})
    judge: bool = field(default=False, metadata={
        "help": "ask the judge LLM (roles['judge']) which of an update's nearest facts it "
                "replaces when the lexical detector flags none, instead of superseding the "
                "nearest (LiquidMemory(judge=...)). Off by default: the 135M base model said "
                "'yes' to every pair it was shown (docs/journal.md)"})

    def __post_init__(self) -> None:
        if self.context not in CONTEXTS:
            raise MagsError(f"unknown loop context {self.context!r}",
                            f"use one of {', '.join(CONTEXTS)}")
        if self.writer not in WRITERS:
            raise MagsError(f"LoopConfig: unknown writer {self.writer!r}",
                            f"use one of {', '.join(WRITERS)}")
        if self.writer == "none" and not self.keep_turns:
            raise MagsError("LoopConfig: writer 'none' without keep_turns stores nothing",
                            "set keep_turns=True (the turns kept as said), or use writer "
                            "'model' or 'verbatim'")
        if self.merge not in MERGES:
            raise MagsError(f"LoopConfig: unknown merge {self.merge!r}",
                            f"use one of {', '.join(MERGES)}")
        if self.retired_turns not in RETIRED_TURNS:
            raise MagsError(f"LoopConfig: unknown retired_turns {self.retired_turns!r}",
                            f"use one of {', '.join(RETIRED_TURNS)}")
        if self.past_lines not in PAST_LINES:
            raise MagsError(f"LoopConfig: unknown past_lines {self.past_lines!r}",
                            f"use one of {', '.join(PAST_LINES)}")
        if self.versions < 0 or self.past_versions < 0:
            raise MagsError(f"LoopConfig: versions = {self.versions}, past_versions = "
                            f"{self.past_versions}",
                            "versions, past_versions >= 0 (earlier versions per recalled "
                            "fact; 0 = none)")
        if not 0.0 <= self.fact_share <= 1.0:
            raise MagsError(f"LoopConfig: fact_share = {self.fact_share}",
                            "fact_share in [0, 1] (1.0 = no cap on the facts shown)")
        if self.none_margin < 0:
            raise MagsError(f"LoopConfig: none_margin = {self.none_margin}",
                            "none_margin >= 0 (0 = the write model's greedy block as it is)")
        if self.working_lines < 0 or not 0.0 <= self.working_min_cosine <= 1.0:
            raise MagsError(f"LoopConfig: working_lines = {self.working_lines}, "
                            f"working_min_cosine = {self.working_min_cosine}",
                            "working_lines >= 0 (0 = not shown), working_min_cosine in [0, 1]")


CONTEXTS = ("hits", "consolidated")
RETIRED_TURNS = ("off", "superseded", "updated")
MERGES = ("score", "rrf", "interleave")


ENGRAM_CLOSE = "</engram>"


def closed(out: Any, tag: str) -> str:
    """The generation with its closing `tag` put back: generation stops at the tag (an
    untrained model would otherwise write on to the token limit, seconds a turn) and backends
    strip a stop string. Put back only when the model stopped (not cut at the token limit)
    inside an opened block.

    >>> from mags_lib.llm import Completion
    >>> closed(Completion("<engram>\\nadd semantic 0.9: x\\n", finish_reason="stop"), "</engram>")
    '<engram>\\nadd semantic 0.9: x\\n</engram>'
    >>> closed(Completion("<engram>\\nadd semantic 0.9: x", finish_reason="length"), "</engram>")
    '<engram>\\nadd semantic 0.9: x'
    """
    text = out.text
    opened = tag.replace("</", "<")
    if out.finish_reason == "stop" and opened in text and tag not in text.split(opened)[-1]:
        return text + tag
    return text


OP_OPENINGS = {"none": ENGRAM_CLOSE, "add": "add", "update": "update"}
"""How an <engram> block goes on after '<engram>\\n', by the op it chooses."""


def op_scores(llm: Any, messages: list[dict[str, str]]) -> dict[str, float]:
    """Log-probability of each op's opening (`OP_OPENINGS`) in a write model's reply to
    `messages`, begun '<engram>\\n' (a backend with `chat_prompt` and `score`)."""
    scores = llm.score(llm.chat_prompt(messages) + "<engram>\n", list(OP_OPENINGS.values()))
    return dict(zip(OP_OPENINGS, scores, strict=True))


def none_wins(scores: dict[str, float], margin: float) -> bool:
    """Whether storing nothing wins with a head start of `margin` (`LoopConfig.none_margin`).

    >>> none_wins({"none": -2.0, "add": -0.5, "update": -3.0}, 1.0)
    False
    >>> none_wins({"none": -2.0, "add": -0.5, "update": -3.0}, 2.0)
    True
    """
    return scores["none"] + margin >= max(scores["add"], scores["update"])


def merged_hits(memory: Any, queries: list[str], query_k: int, k: int,
                block: str | None = None, merge: str = "score") -> list[Any]:
    """Each query's valid recall hits (in `block`, else any), merged by node; the best `k`,
    best first. `merge="score"`: a node's best score; `"rrf"`: reciprocal rank fusion, the sum
    over queries of 1 / (60 + its rank there), so no query's score scale decides alone;
    `"interleave"`: the first query's best, the next query's best, ... then the second of each,
    so every query gets a share of the `k` lines."""
    if merge == "interleave":
        return _interleaved([[h for h in memory.recall(q, query_k, block=block) if h.valid]
                             for q in queries], k)
    best: dict[int, Any] = {}
    fused: dict[int, float] = {}
    for q in queries:
        valid = [h for h in memory.recall(q, query_k, block=block) if h.valid]
        for rank, h in enumerate(valid):
            if merge == "rrf":
                fused[h.node_id] = fused.get(h.node_id, 0.0) + 1.0 / (RRF_K + rank + 1)
            if h.node_id not in best or h.score > best[h.node_id].score:
                best[h.node_id] = h
    rank_of = (lambda h: -fused[h.node_id]) if merge == "rrf" else (lambda h: -h.score)
    return sorted(best.values(), key=rank_of)[:k]


RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al., 2009)."""


def _interleaved(ranked: list[list[Any]], k: int) -> list[Any]:
    """Round robin over the queries' ranked hits, each node once, the first `k`."""
    out: dict[int, Any] = {}
    for rank in range(max((len(r) for r in ranked), default=0)):
        for hits in ranked:
            if rank < len(hits) and hits[rank].node_id not in out:
                out[hits[rank].node_id] = hits[rank]
    return list(out.values())[:k]


def llm_judge(llm: Any):
    """`judge(old, new) -> bool` asking `llm` the yes/no question of `judge_messages`."""
    from mags_lib.agents.role_prompts import JUDGE_GRAMMAR, judge_messages

    def judge(old: str, new: str) -> bool:
        out = llm.chat(judge_messages(old, new), grammar=JUDGE_GRAMMAR, max_tokens=2,
                       temperature=0.0, seed=0)
        return out.text.strip().lower().startswith("yes")

    return judge


class MagsLoopAgent(MemoryAgent):
    """LiquidMemory written by a write model and read through an ask model; see the module."""

    name = "mags"

    def __init__(self, llm: Any, config: AgentConfig | None = None, *, ask_llm: Any = None,
                 write_llm: Any = None, loop: LoopConfig | None = None,
                 memory_config: Any | None = None, embedder: Any | None = None,
                 supersede: bool = True, judge_llm: Any = None):
        self.loop = loop or LoopConfig()
        judge = None
        if self.loop.judge:
            if judge_llm is None:
                raise MagsError("LoopConfig.judge is on but no judge LLM was given",
                                "pass judge_llm (EvalConfig.models['judge']), or judge=False")
            from mags_lib.memory.contradiction import LLMJudgeDetector

            judge = LLMJudgeDetector(llm_judge(judge_llm))
        super().__init__(llm, config, memory_config=memory_config, embedder=embedder,
                         supersede=supersede, judge=judge)
        self.memory_config = self.memory_config.replaced(
            consolidate=self.loop.consolidate_working)
        self.ask_llm = ask_llm or llm
        self.write_llm = write_llm or llm
        self.counts: Counter = Counter()
        self.last_timing: dict[str, float] = {}
        self.last_tokens: dict[str, int] = {}  # prompt tokens of this turn's role calls
        self.last_write: dict[str, Any] | None = None
        self.last_ask: dict[str, Any] | None = None
        self.routes: list[tuple[int, str, tuple[str, ...]]] = []
        self.when: dict[str, str] = {}
        self.speakers: set[str] = set()  # who has spoken so far (grounding)
        self.updated_away: set[int] = set()  # facts superseded by the write model's `update`

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.counts = Counter()
        self.routes = []
        self.last_write = self.last_ask = None
        self.when = {}  # source -> the day the task dated it with
        self.speakers = set()
        self.updated_away = set()

    # ----- every turn -------------------------------------------------------------------
    def observe(self, obs: Observation, reward: float | None = None,
                info: dict[str, Any] | None = None) -> None:
        timing: dict[str, float] = {}
        self.last_tokens = {}
        t0 = time.perf_counter()
        roles = route_turn(obs)
        if self.config.remember_questions and obs.legal_actions and "write" not in roles:
            roles = ("write", *roles)  # a decision turn that also informs (TextWorld's rooms)
        timing["route"] = time.perf_counter() - t0
        self.routes.append((obs.turn, obs.kind, roles))
        if obs.when is not None:
            self.when[f"turn:{obs.turn}"] = obs.when
        if "write" in roles and obs.text:
            if self.loop.writer != "none":
                if self.loop.write_replies or obs.kind != REPLY:
                    self.write(obs, timing)
                else:
                    self.counts["write_skipped_reply"] += 1
            t2 = time.perf_counter()
            if self.loop.keep_turns:
                self.memory.observe(obs.text, block="episodic", source=f"turn:{obs.turn}",
                                    time=float(obs.turn))
            self.memory.perceive(obs.text, source=f"turn:{obs.turn}", time=float(obs.turn))
            timing["perceive"] = time.perf_counter() - t2
        t1 = time.perf_counter()
        self.memory.step(memory_reward(reward))
        timing["apply_step"] = timing.get("apply_step", 0.0) + time.perf_counter() - t1
        self.last_timing = timing

    def write(self, obs: Observation, timing: dict[str, float]) -> None:
        from mags_lib.actions import EngramAdd, EngramUpdate, engram_grammar, parse_actions
        from mags_lib.agents.grounding import speaker_of

        who = speaker_of(obs.text)
        if who:
            self.speakers.add(who)

        if self.loop.writer == "verbatim":
            text = " ".join(obs.text.split())
            parsed = parse_actions(f"<engram>\nadd semantic 0.9: {text}\n</engram>", "engram")
            self.last_write = {"turn": obs.turn, "held": [], "raw": "(verbatim)",
                               "errors": list(parsed.errors)}
        else:
            t0 = time.perf_counter()
            held = [h.text for h in self.memory.recall(
                obs.text, self.loop.write_context, learn=False,
                block="semantic" if self.loop.keep_turns else None)]
            timing["write_recall"] = time.perf_counter() - t0
            messages = play_write_messages(obs.text, held, few_shot=self.loop.few_shot)
            t1 = time.perf_counter()
            out = self.write_llm.chat(messages, max_tokens=self.loop.write_max_tokens,
                                      temperature=0.0, seed=self.config.seed,
                                      stop=[ENGRAM_CLOSE], grammar=engram_grammar()
                                      if self.loop.write_grammar else None)
            timing["write"] = out.generation_seconds(time.perf_counter() - t1)
            self.last_tokens["write"] = int(out.usage.get("prompt_tokens") or 0)
            parsed = parse_actions(closed(out, ENGRAM_CLOSE), "engram")
            self.last_write = {"turn": obs.turn, "held": held, "raw": out.text,
                               "errors": list(parsed.errors)}
            if self.loop.none_margin > 0 and parsed.complete and self._none_wins(messages, parsed):
                self.counts["write_none_by_margin"] += 1
                self.last_write["none_by_margin"] = True
                parsed = parse_actions(f"<engram>\n{ENGRAM_CLOSE}", "engram")
        self.counts["write_calls"] += 1
        if not parsed.complete:
            self.counts["write_malformed"] += 1
            return  # a block that does not parse changes nothing
        self.counts["write_parsed"] += 1
        if not parsed.actions:
            self.counts["op_none"] += 1
        for action in parsed.actions:
            self.counts[f"op_{type(action).__name__.removeprefix('Engram').lower()}"] += 1
        actions = self.grounded(parsed.actions, obs.text)
        t2 = time.perf_counter()
        report = self.memory.apply(actions, source=f"turn:{obs.turn}")
        timing["apply_step"] = time.perf_counter() - t2
        self.counts["nodes_added"] += len(report.added)
        self.counts["nodes_superseded"] += len(report.superseded)
        if any(isinstance(a, EngramUpdate) for a in actions):  # the block's supersessions,
            self.updated_away.update(old for _, old in report.superseded)  # all of them
        self.counts["actions_skipped"] += len(report.skipped)
        self.last_write["applied"] = {"added": report.added, "merged": report.merged,
                                      "superseded": report.superseded,
                                      "skipped": report.skipped}
        # the sentences stored (add / update), for scoring what the writer made of the text
        self.last_write["stored"] = [a.text for a in actions
                                     if isinstance(a, EngramAdd | EngramUpdate)]

    def _none_wins(self, messages: list[dict[str, str]], parsed: Any) -> bool:
        """Whether storing nothing wins under `LoopConfig.none_margin` for a block that adds or
        updates (`parsed`): the reply begun '<engram>\\n', its next words scored."""
        from mags_lib.actions import EngramAdd, EngramUpdate

        if not any(isinstance(a, EngramAdd | EngramUpdate) for a in parsed.actions):
            return False
        if not callable(getattr(self.write_llm, "chat_prompt", None)) \
                or not callable(getattr(self.write_llm, "score", None)):
            raise MagsError(f"LoopConfig.none_margin needs a write model that scores text; "
                            f"{getattr(self.write_llm, 'name', self.write_llm)} does not",
                            "serve the write model with llama.cpp or transformers, or set "
                            "none_margin=0")
        return none_wins(op_scores(self.write_llm, messages), self.loop.none_margin)

    def grounded(self, actions: list[Any], observation: str) -> list[Any]:
        """`actions` less the adds / updates whose names the observation (or an earlier
        speaker) does not have, under `LoopConfig.grounding`, and those that share no content
        word with it, under `LoopConfig.grounding_words`; those are counted and kept in
        `last_write["ungrounded"]`."""
        from mags_lib.agents.grounding import split_grounded

        if not (self.loop.grounding or self.loop.grounding_words):
            return list(actions)
        kept, refused = split_grounded(actions, observation, self.speakers,
                                       names=self.loop.grounding,
                                       words=self.loop.grounding_words)
        self.counts["write_ungrounded"] += len(refused)
        if self.last_write is not None:
            self.last_write["ungrounded"] = refused
        return kept

    # ----- decision turns ---------------------------------------------------------------
    def queries(self, obs: Observation) -> list[str]:
        """The ask model's queries for `obs` (the observation itself when none parse)."""
        from mags_lib.actions import query_texts, recall_grammar

        messages = play_ask_messages(obs.text, few_shot=self.loop.few_shot)
        t0 = time.perf_counter()
        out = self.ask_llm.chat(messages, max_tokens=self.loop.ask_max_tokens, temperature=0.0,
                                seed=self.config.seed,
                                grammar=recall_grammar() if self.loop.ask_grammar else None)
        self.last_timing["ask"] = out.generation_seconds(time.perf_counter() - t0)
        self.last_tokens["ask"] = int(out.usage.get("prompt_tokens") or 0)
        texts, complete = query_texts(out.text)
        self.counts["ask_calls"] += 1
        if not complete or not texts:
            self.counts["ask_malformed"] += 1
            texts = [obs.text]
        self.last_ask = {"turn": obs.turn, "raw": out.text, "queries": texts}
        return texts

    def memory_lines(self, obs: Observation) -> list[dict[str, Any]]:
        # `queries` times the ask model's call (`last_timing["ask"]`)
        return self.lines_for(obs, self.queries(obs))

    def recall_texts(self, obs: Observation, asked: list[str]) -> list[str]:
        """What recall is given for `obs`: the ask model's queries `asked`, and under
        `recall_observation` the observation itself, last for the score merges (order-free),
        first when interleaving, so that the observation's best hit leads."""
        if not self.loop.recall_observation or obs.text in asked:
            return list(asked)
        return [obs.text, *asked] if self.loop.merge == "interleave" else [*asked, obs.text]

    def lines_for(self, obs: Observation, asked: list[str]) -> list[dict[str, Any]]:
        """The memory lines shown for `obs`, given the ask model's queries `asked`."""
        texts = self.recall_texts(obs, asked)
        t1 = time.perf_counter()
        lines = (self._consolidated(texts) if self.loop.context == "consolidated"
                 else self._hits(texts, history_depth(obs.text, self.loop.versions,
                                                      self.loop.past_versions,
                                                      bool(obs.legal_actions)),
                                 earlier_only(obs.text, self.loop.past_versions,
                                              self.loop.past_lines, bool(obs.legal_actions))))
        if self.loop.working_lines:
            lines = self._with_working(texts, lines)
        self.last_timing["recall"] = time.perf_counter() - t1
        return lines

    def _hits(self, queries: list[str], depth: int,
              earlier: bool = False) -> list[dict[str, Any]]:
        """Each query's recall hits, merged by node (best score), the best k, best last (under
        `turn_over_fact`, a fact whose turn is shown gives its place to the next hit, and under
        `retired_turns` a turn whose facts were all superseded, for a question about now); each
        after `depth` earlier versions (`history_lines.history_depth`), or replaced by them
        where `earlier` (`history_lines.earlier_only`), dated where the task dates its turns."""
        k = self.config.k
        over = self.loop.turn_over_fact and self.loop.keep_turns
        cap = (round(self.loop.fact_share * k) if self.loop.keep_turns
               and self.loop.fact_share < 1.0 else None)
        retire = (self.loop.retired_turns != "off" and self.loop.keep_turns
                  and not (depth or earlier))
        hits = merged_hits(self.memory, queries, self.loop.query_k,
                           2 * k if over or retire or cap is not None else k,
                           merge=self.loop.merge)
        if retire:
            from mags_lib.agents.turn_lines import without_retired_turns

            kept = without_retired_turns(
                self.memory, hits,
                self.updated_away if self.loop.retired_turns == "updated" else None)
            ids = {h.node_id for h in kept}
            self.counts["retired_turns_left_out"] += sum(h.node_id not in ids for h in hits[:k])
            hits = kept
        if over:
            from mags_lib.agents.turn_lines import turns_over_facts

            shown = turns_over_facts(self.memory, hits, k)
            ids = {h.node_id for h in shown}
            self.counts["facts_under_turns"] += sum(h.node_id not in ids for h in hits[:k])
            hits = shown
        if cap is not None:
            from mags_lib.agents.turn_lines import at_most_facts

            hits = at_most_facts(hits, cap)
        hits = hits[:k]
        return with_history(self.memory, hits, depth, self.when.get, earlier_only=earlier)

    def working_hits(self, queries: list[str]) -> list[tuple[float, str]]:
        """(best cosine to a query, text) of the working-memory items at or above
        `working_min_cosine`, best first."""
        import numpy as np

        items = list(self.memory.working)
        if not items or not queries:
            return []
        q = np.asarray(self.memory.embedder.encode(list(queries)), dtype=np.float32)
        q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        sims = (np.stack([it.embedding for it in items]) @ q.T).max(axis=1)
        found = [(float(s), it.text) for s, it in zip(sims, items, strict=True)
                 if s >= self.loop.working_min_cosine]
        return sorted(found, key=lambda t: -t[0])

    def _with_working(self, queries: list[str], lines: list[dict[str, Any]]
                      ) -> list[dict[str, Any]]:
        """`lines` (best last) with up to `working_lines` recent turns first, in place of the
        weakest lines, so that the prompt keeps `k` lines."""
        held = {line["text"] for line in lines}
        recent = [(s, t) for s, t in self.working_hits(queries) if t not in held]
        recent = recent[: self.loop.working_lines]
        self.counts["working_shown"] += len(recent)
        keep = lines[max(0, len(lines) + len(recent) - self.config.k):]  # best last
        return [recalled(None, t, score=round(s, 4), sources=["working"], path=[])
                for s, t in reversed(recent)] + keep

    def _consolidated(self, queries: list[str]) -> list[dict[str, Any]]:
        """Each query's `recall_context` items (connected hits merged into one line), merged
        across queries by their nodes (best score), the best k, best last."""
        best: dict[tuple[int, ...], Any] = {}
        for q in queries:
            for item in self.memory.recall_context(q, self.loop.query_k):
                key = tuple(item.node_ids)
                if key not in best or item.score > best[key].score:
                    best[key] = item
        items = sorted(best.values(), key=lambda it: -it.score)[: self.config.k]
        return [recalled(it.node_ids[0], it.text, score=round(float(it.score), 4),
                         sources=[f"node:{n}" for n in it.node_ids], path=list(it.node_ids))
                for it in reversed(items)]

    def loop_stats(self) -> dict[str, Any]:
        """Counts of the loop (write / ask validity, ops) and the routes taken, per kind."""
        routes: dict[str, Counter] = {}
        for _, kind, roles in self.routes:
            routes.setdefault(kind, Counter())["+".join(roles)] += 1
        calls = self.counts["write_calls"]
        asks = self.counts["ask_calls"]
        if self.judge is not None:
            self.counts["judge_calls"] = self.judge.calls
        return {**dict(self.counts),
                "write_validity": self.counts["write_parsed"] / calls if calls else None,
                "ask_validity": 1 - self.counts["ask_malformed"] / asks if asks else None,
                "routes": {k: dict(v) for k, v in routes.items()}}
