"""What dataset synthesis builds: games per split, row caps, expansion, dedupe; one dataclass.

    cfg = SynthConfig(smoke=True).resolved()      # the same run, shrunk
    cfg.split_seeds()["val"]                      # [10048, 10049, ...]

Splits are by game seed: every row of a game lands in one split, so no rule, creature or
distractor of a validation game is ever seen in training. The seeds start at `first_seed`
(10000 by default), far from the evaluation seeds (0-2) and the prompt-tuning seeds (100-101).
`smoke=True` shrinks sizes through `resolved()`; it never switches code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.objectives.data import ROW_SOURCES

SPLITS: tuple[str, ...] = ("train", "val", "test")
EXPANDABLE: tuple[str, ...] = ("ask", "write", "answer")
MODES: tuple[str, ...] = ("completion", "observation")
SOURCES: tuple[str, ...] = ROW_SOURCES


@dataclass
class SynthConfig:
    # ----- games and splits ------------------------------------------------------------
    first_seed: int = field(default=10_000, metadata={
        "help": "game seed of the first training game; val and test games follow on"})
    n_train_games: int = field(default=48, metadata={"help": "games whose rows form train"})
    n_val_games: int = field(default=8, metadata={"help": "games whose rows form val"})
    n_test_games: int = field(default=8, metadata={"help": "games whose rows form test"})
    episode_length: int = field(default=200, metadata={"help": "turns per game"})
    n_rules: int = field(default=8, metadata={"help": "rules in force at the start of a game"})
    n_items: list[int] = field(default_factory=lambda: [2, 3], metadata={
        "help": "options per decision, cycled over games (evaluation plays 2)"})
    surfaces: list[str] = field(default_factory=lambda: ["fixed", "varied", "varied"],
                                metadata={
        "help": "game surfaces, cycled over games (a name twice: twice as many of its games; "
                "two varied to one fixed, since the fixed sentence is a copy to learn and the "
                "varied ones are what a writer must read); a varied game always draws from "
                "the *training* phrasings (game/phrasing.py): held-out phrasings never enter "
                "a dataset"})
    drift_every: int = field(default=10, metadata={
        "help": "a rule changes or is added every this many turns (more updates to learn)"})
    silent_fraction: float = field(default=0.0, metadata={
        "help": "share of unannounced rule changes; decisions they make unanswerable are skipped"})
    # ----- tasks -----------------------------------------------------------------------
    sources: list[str] = field(default_factory=lambda: ["game", "persona", "locomo"], metadata={
        "help": "what the rows come from: 'game' (the senseless game's episodes), 'persona' (a "
                "person's changing facts, conversations/persona.py) and 'locomo' (LoCoMo's "
                "training conversations; skipped and counted where the file is absent); one "
                "set of models for every task trains on all three, the transfer matrix on one "
                "side at a time"})
    n_persona_train: int = field(default=80, metadata={
        "help": "persona conversations (training seeds and phrasings) whose turns and questions "
                "give train rows"})
    n_persona_val: int = field(default=6, metadata={
        "help": "persona conversations (development seeds and phrasings) for val rows; the "
                "persona test set never enters a dataset"})
    locomo_val: list[str] = field(default_factory=lambda: ["conv-43"], metadata={
        "help": "LoCoMo training-split conversations whose rows form val (the others: train); "
                "the test conversations never enter a dataset"})
    assistant_turn_share: float = field(default=0.1, metadata={
        "help": "persona write rows: share of the assistant's replies ('Thanks, noted.') kept "
                "as nothing-to-store rows"})
    no_fact_twin_share: float = field(default=1.0, metadata={
        "help": "persona training write rows: share of the user's turns without a fact that "
                "also give a twin row reworded from the training-only small-talk and repeat "
                "banks (persona_phrases.TRAIN_SMALL_TALK / TRAIN_REPEAT), nothing to store"})
    cue_twin_share: float = field(default=0.0, metadata={
        "help": "persona training write rows: share of the no-fact twins drawn from the banks "
                "whose words sound like a change (persona_train_phrases.CUE_WORD_REPEAT / "
                "CUE_WORD_SMALL_TALK: 'No change there: ...', 'Appreciate the update!'), "
                "nothing to store; against the fresh split's cue-word errors, written "
                "2026-12-07; at 0.3 the fresh split's op accuracy 0.870 -> 0.882, not adopted "
                "(journal); at 1.0 no twin is plain small talk any more, and with "
                "persona_cue_words the writer stored plain small talk ('I have been reading a "
                "mystery novel.') as facts; 0: off, the data as before"})
    conversation_none_share: float = field(default=0.55, metadata={
        "help": "conversation write rows: at most this share of 'nothing to store' rows (about "
                "half of a person's turns carry no fact; max_none_share is the game's)"})
    open_answer_lines: dict[str, int] = field(
        default_factory=lambda: {"persona": 5, "locomo": 10}, metadata={
            "help": "conversation answer rows: memory lines shown per question, by source (the "
                    "conversation evaluation's k: ConversationStudyConfig.k / locomo_k)"})
    answer_turn_share: float = field(default=0.3, metadata={
        "help": "conversation answer rows: share whose lines are dialogue turns (dated, "
                "unmarked, as an episodic memory or static RAG shows them): the turns that said "
                "the question's fact and its earlier version, among other turns and facts, so "
                "that the later day decides between two values (0 = fact lines only, the "
                "recipe before 2026-11-30)"})
    answer_unmarked_share: float = field(default=0.2, metadata={
        "help": "conversation answer rows: share whose fact lines show the earlier version "
                "without '(no longer true)', as a memory that missed the update shows it; the "
                "later day decides (the rest: marked)"})
    answer_turn_chars: int = field(default=1600, metadata={
        "help": "turn-style answer rows longer than this in characters keep fact lines, or "
                "with answer_turn_fit drop their longest other lines until they fit (SFT reads "
                "512 tokens; counted as turn_lines_too_long; at 1,600 without fitting 7 LoCoMo "
                "rows run past 512 tokens and lose their answer; at 1,400 without fitting half "
                "the LoCoMo turn rows fall back to facts)"})
    answer_turn_fit: bool = field(default=False, metadata={
        "help": "turn-style answer rows over answer_turn_chars drop their longest lines that "
                "are not the question's own turns until they fit, instead of keeping fact "
                "lines (tried with 1,400 on 2026-11-30 evening, not adopted)"})
    answer_same_attribute_share: float = field(default=0.0, metadata={
        "help": "persona answer rows: share whose other lines start with the question's "
                "attribute about other people (everyone's cars for a question about one car, as "
                "recall by similarity shows them); the rest draw other facts at random (0.7 "
                "tried on 2026-11-30 evening, not adopted)"})
    answer_other_versions_share: float = field(default=0.0, metadata={
        "help": "answer rows in fact lines: share of the other facts with an earlier version "
                "shown after it (marked '(no longer true)' in the marked style), as a memory "
                "that keeps history shows other people's changes too (0.3 tried on 2026-11-30 "
                "evening, not adopted)"})
    earlier_question_twins: int = field(default=0, metadata={
        "help": "persona training answer rows: twins of each question for an earlier value, "
                "reworded from the training-only bank persona_train_phrases.EARLIER_TWINS, "
                "with lines drawn afresh (0 = none; 1 tried on 2026-11-30 evening with "
                "max_conversation_rows['answer'] 1,170, not adopted)"})
    answer_unknown_cap: dict[str, float] = field(default_factory=dict, metadata={
        "help": "conversation answer rows: by source ('persona', 'locomo'), at most this share "
                "of the training rows answer 'I don't know' (the unanswerable questions and "
                "the withheld ones); the excess, drawn at random, is dropped before the caps. "
                "{} = as generated: of notebook 01's final training rows LoCoMo's answer 'I "
                "don't know' 111 of 303 (37%), the persona's 143 of 697 (21%; 2026-12-06). A "
                "reader trained one full pass on them abstained twice as often on conv-43 "
                "(journal, 2026-12-06 fifth session); with {'locomo': 0.2} it abstained less "
                "but conv-43's F1 on turns fell as far (sixth session): not adopted"})
    persona_cue_phrases: bool = field(default=False, metadata={
        "help": "training personas also say a change with 'instead' for every attribute and "
                "more events of someone other than the speaker (PersonaConfig."
                "train_cue_phrases; persona_train_phrases.CUE_CLAUSES / CUE_FRAMES), against "
                "the change-frame writer's development errors of 2026-12-02 evening; write rows "
                "only: the ask and answer rows stay the plain personas', so notebook 02's data "
                "do not change; written 2026-12-03, not judged yet (the rule it is to be "
                "judged by: journal)"})
    persona_cue_words: bool = field(default=False, metadata={
        "help": "training personas also say new facts 'these days' / 'currently', frame first "
                "facts as an 'update', repeat facts saying nothing changed, correct in new "
                "frames, and the assistant replies with change words (PersonaConfig."
                "train_cue_words; persona_train_phrases.CUE_WORD_*), against the fresh "
                "split's cue-word errors; write rows only, as persona_cue_phrases; written "
                "2026-12-07; with cue_twin_share 1.0 (candidate W-cue2) the fresh split's "
                "'Nothing has changed' updates went 24 -> 0, but plain small talk became facts "
                "(op accuracy fresh 0.870 -> 0.873, new dev personas 0.961 -> 0.836): not "
                "adopted (journal, thirteenth session)"})
    memory_twin_share: float = field(default=0.0, metadata={
        "help": "persona training write rows: share of the user's turns that also give a twin "
                "with the same words and a memory that changes the right op "
                "(conversation_rows.memory_twin): an update without its old fact shown is an "
                "add, a repeat without its fact an add of it, an add beside an older value of "
                "the same attribute an update; with it on, a repeat's own row always shows the "
                "fact it repeats (at 0 about 14% of them did not). Against the writer reading "
                "the turn's words and not the memory (journal, 2026-12-07 thirteenth session); "
                "the game's imperfect_memory_share, a replacement not a twin, failed at 0.3. "
                "Written 2026-12-07, not judged yet; 0: off, the data as before"})
    persona_contrast_share: float = field(default=0.0, metadata={
        "help": "persona training write rows: share of the user's turns given a look-alike of "
                "a fact (persona_train_phrases.LOOKALIKES: a value of an attribute and a "
                "person in a relation the persona does not track, 'My cousin read a novel set "
                "in Peru.'): beside a fact, before or after it, naming the fact's attribute "
                "(its new or old value) or another fact's, and someone other than the fact's "
                "subject; in place of small talk (appended to a repeat), with a value memory "
                "holds. The gold is unchanged (the fact alone; nothing to store), so the "
                "writer learns which sentence and whose it is (candidate C2 wrote values into "
                "the wrong slot and a change onto the wrong person, journal 2026-12-03 "
                "afternoon); dev, test and LoCoMo rows never; 0 = as said. Written "
                "2026-12-04, not judged yet"})
    open_answer_chars: int = field(default=80, metadata={
        "help": "conversation answer rows: gold answers longer than this are skipped "
                "(long_answer); the evaluation asks for an answer in a few words"})
    write_facts_first: list[str] = field(default_factory=lambda: ["locomo"], metadata={
        "help": "conversation sources ('persona', 'locomo') whose training write rows with a "
                "fact to store go to the head of the pool before the caps, so that every one "
                "that verifies is kept (LoCoMo: 136 in the pool, 68 kept by the plain mix); "
                "[] = the plain shuffled mix"})
    max_conversation_rows: dict[str, int] = field(
        default_factory=lambda: {"ask": 700, "write": 1600, "answer": 1000}, metadata={
            "help": "training rows per task from conversations at most, on top of max_rows "
                    "(val: max_eval_rows; with earlier_question_twins 1, answer 1,170 keeps the "
                    "other rows' number: the twins grow the pool 2,129 -> 2,494)"})
    # ----- rows ------------------------------------------------------------------------
    n_distractor_facts: int = field(default=24, metadata={
        "help": "ask rows: facts besides the gold one: every other rule known so far, topped up "
                "with distractor facts to this many (on top of the gold rule's superseded "
                "older versions)"})
    write_context: int = field(default=3, metadata={
        "help": "write rows: memory lines shown with the observation, the rule's own stored "
                "version (if any) among them, as the closed loop shows LoopConfig.write_context "
                "recalled lines (so add / update / nothing is decidable from the prompt)"})
    write_context_nearest: float = field(default=0.8, metadata={
        "help": "write rows: share whose other lines are the known facts nearest the "
                "observation (word overlap), as the loop's recall shows them: the same "
                "creature's rules in other conditions and other creatures' rules in the same "
                "condition, next to which a first sight is still an add; the rest are drawn at "
                "random, 0 to write_context of them"})
    imperfect_memory_share: float = field(default=0.0, metadata={
        "help": "write rows about a rule memory already holds (announce and feedback turns): "
                "share whose memory shows it missing (gold add), stale or garbled (gold "
                "update) instead of a perfect copy, so that the write model learns to repair "
                "the memory it has (chains.imperfect_memory); 0 = a perfect memory in every "
                "write row (default: at 0.3 the op-weighted writer answered 'update' to most "
                "turns and scored 0.661 in the loop against 0.873, docs/journal.md)"})
    reframe_update_share: float = field(default=0.0, metadata={
        "help": "write rows of an announced rule change: share whose observation is re-framed "
                "as a first sight or an added rule of the training bank, the rule sentence "
                "kept (chains.neutral_frame), so that 'update' is read from the memory line "
                "holding the rule's old item, not from a change frame (held-out change frames, "
                "'A correction is announced.', were written as add); 0 = as the game said it"})
    writer_frame_share: float = field(default=0.0, metadata={
        "help": "write rows of a training game's announcement (varied surface): share put in "
                "a frame of the same kind (change, repeat, first sight, added rule) that only "
                "the write model's training text uses (game.phrasing.WRITER_FRAMES: "
                "corrections, retractions, changes naming the old item, and repeats from the "
                "same speakers), the rule sentence kept (chains.writer_frame); the game's own "
                "frames carry a change only in cue words, which the writer learned instead of "
                "reading a change (journal 2026-12-01, night); 0 = as the game said it. "
                "0.5 was tried and not adopted (journal 2026-12-02, day): updates right on "
                "the change-frame probe 49 of 80 against 46, short of the rule's 54; the "
                "errors moved from nothing to add"})
    writer_contrast_share: float = field(default=0.0, metadata={
        "help": "write rows of a training game: share of its announcements given a look-alike "
                "sentence beside the rule (before or after it), and share of its distractors "
                "replaced by one: a creature no rule is about, with the rule's condition and "
                "its item or old item, in a relation that is not eating (game.phrasing."
                "WRITER_LOOKALIKES, chains.lookalike); the gold is unchanged (the rule alone; "
                "nothing for a distractor), so the writer learns which sentence carries the "
                "rule, not only the op (candidate C2 wrote the test bank's distractors as "
                "rules, journal 2026-12-03 afternoon); 0 = as the game said it. Written "
                "2026-12-03 (night), not judged yet (the rule it is to be judged by: journal)"})
    max_none_share: float = field(default=0.3, metadata={
        "help": "write rows: at most this share of 'nothing to store' rows per split"})
    answer_lines: int = field(default=3, metadata={
        "help": "answer rows: memory lines in the decision prompt (AgentConfig.k)"})
    stale_share: float = field(default=0.2, metadata={
        "help": "answer rows: share whose memory also holds the rule's superseded version "
                "(listed before the current one), where the rule has one"})
    no_memory_share: float = field(default=0.1, metadata={
        "help": "answer rows: share whose memory lacks the rule (gold['answerable'] = False)"})
    answer_all_orders: bool = field(default=False, metadata={
        "help": "answer rows of train: each written once per cyclic rotation of the options' "
                "places in its question (chains.order_twins), the same memory lines and answer, "
                "so that the order cannot decide; val / test stay as the game asked (3 seeds, "
                "2026-11-27: no less order-bound than the rows as the game asked them, at 30 "
                "or 60 SFT steps; more steps helped)"})
    answer_prompt_formats: list[str] = field(
        default_factory=lambda: ["completion", "chat"], metadata={
            "help": "decision prompt formats of mags_lib.agents.prompt, one drawn per answer "
                    "row"})
    max_rows: dict[str, int] = field(default_factory=lambda: {"ask": 1500, "write": 1500,
                                                              "answer": 1000}, metadata={
        "help": "training rows per task at most (before expansion and seed rows)"})
    max_eval_rows: int = field(default=300, metadata={"help": "val / test rows per task at most"})
    recall_k: int = field(default=3, metadata={
        "help": "ask rows are kept only if their queries hit the gold fact in this top k "
                "(recall_reward, hashing embedder); 3 = AgentConfig.k, the memory lines an "
                "agent shows its answer model"})
    include_seed_rows: bool = field(default=True, metadata={
        "help": "add the hand-written data/seed rows to train"})
    # ----- expansion -------------------------------------------------------------------
    expand: bool = field(default=True, metadata={"help": "few-shot LLM expansion on/off"})
    expansion_llm: str = field(default="embedded", metadata={
        "help": "LLMConfig.model of the expander ('embedded' SmolLM2-135M, a .gguf, a dir)"})
    expansion_threads: int | None = field(default=1, metadata={
        "help": "llama.cpp threads (1 avoids thrashing when another process holds a core)"})
    expand_tasks: list[str] = field(default_factory=lambda: ["ask", "write"], metadata={
        "help": "tasks to expand; answer prompts must stay the agents' prompt, and its "
                "completion is one word, so expanding it adds little"})
    expansion_modes: list[str] = field(
        default_factory=lambda: ["completion", "observation"], metadata={
            "help": "cycled per candidate: 'completion' (the LLM writes the action for the "
                    "row's prompt) or 'observation' (the LLM rewrites the observation, gold "
                    "unchanged)"})
    n_expansions: int = field(default=20, metadata={
        "help": "LLM calls per expanded task (SmolLM2-135M on 1 thread: 2-7 s a call on 2 "
                "busy cores)"})
    n_shots: int = field(default=2, metadata={"help": "seed examples shown per LLM call"})
    temperature: float = field(default=0.8, metadata={"help": "expansion sampling temperature"})
    max_tokens: int = field(default=72, metadata={
        "help": "new tokens per expansion call (a 3-line action block needs about 60)"})
    expansion_recall_k: int = field(default=1, metadata={
        "help": "an expanded ask row is kept if a query hits the gold fact at this rank (top 1: "
                "stricter than recall_k), and "
                "every query names the creature and no other condition"})
    min_engram_f1: float = field(default=0.8, metadata={
        "help": "an expanded write row is kept if its ops score at least this F1 vs gold"})
    # ----- diversity -------------------------------------------------------------------
    near_dup_threshold: float = field(default=0.95, metadata={
        "help": "rows whose embedding cosine reaches this are near-duplicates (later one dropped)"})
    embedder: str = field(default="hashing", metadata={
        "help": "'hashing' (bag of words, instant) or 'embedded' (MiniLM; ~25 rows/s on 2 busy "
                "cores) for near-duplicates"})
    seed: int = field(default=0, metadata={"help": "seeds phrasing, sampling and expansion"})
    smoke: bool = field(default=False, metadata={
        "help": "shrink sizes for a quick end-to-end check (same code path)"})

    def __post_init__(self) -> None:
        bad = [t for t in self.expand_tasks if t not in EXPANDABLE]
        bad += [m for m in self.expansion_modes if m not in MODES]
        if bad:
            raise MagsError(f"SynthConfig: unknown expand task / mode {bad}",
                            f"tasks from {EXPANDABLE}, modes from {MODES}")
        from mags_lib.game.phrasing import SURFACES

        if any(s not in SURFACES for s in self.surfaces):
            raise MagsError(f"SynthConfig.surfaces = {self.surfaces} names an unknown surface",
                            f"use surfaces from {SURFACES}")
        if not self.n_items or not self.answer_prompt_formats or not self.expansion_modes \
                or not self.surfaces:
            raise MagsError("SynthConfig: n_items, answer_prompt_formats, expansion_modes and "
                            "surfaces "
                            "must not be empty", "give at least one value each")
        for name in ("writer_frame_share", "writer_contrast_share", "persona_contrast_share",
                     "reframe_update_share", "imperfect_memory_share", "memory_twin_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise MagsError(f"SynthConfig: {name} = {getattr(self, name)}",
                                f"{name} is a share in [0, 1]")
        if not 0.0 <= self.write_context_nearest <= 1.0 or self.write_context < 0:
            raise MagsError(f"SynthConfig: write_context_nearest = {self.write_context_nearest}, "
                            f"write_context = {self.write_context}",
                            "write_context_nearest is a share in [0, 1], write_context >= 0")
        if any(x not in ("persona", "locomo") for x in self.write_facts_first):
            raise MagsError(f"SynthConfig.write_facts_first = {self.write_facts_first}",
                            "name conversation sources only: 'persona', 'locomo'")
        unknown = [x for x in self.sources if x not in SOURCES]
        if unknown or not self.sources:
            raise MagsError(f"SynthConfig.sources = {self.sources}",
                            f"name one or more of {SOURCES}")
        if not all(0.0 <= x <= 1.0 for x in (self.assistant_turn_share, self.no_fact_twin_share,
                                              self.cue_twin_share,
                                              self.conversation_none_share,
                                              self.answer_same_attribute_share,
                                              self.answer_other_versions_share)) \
                or min(self.n_persona_train, self.n_persona_val,
                       self.earlier_question_twins) < 0:
            raise MagsError("SynthConfig: assistant_turn_share, no_fact_twin_share, cue_twin_share, "
                            "conversation_none_share, answer_same_attribute_share and "
                            "answer_other_versions_share are shares in [0, 1], and the "
                            "persona counts and earlier_question_twins are >= 0", "fix the values given")
        if any(k not in ("persona", "locomo") or not 0.0 <= v <= 1.0
               for k, v in self.answer_unknown_cap.items()):
            raise MagsError(f"SynthConfig.answer_unknown_cap = {self.answer_unknown_cap}",
                            "map conversation sources ('persona', 'locomo') to shares in [0, 1]")
        if min(self.n_train_games, self.n_val_games, self.n_test_games) < 1:
            raise MagsError("SynthConfig: every split needs at least one game",
                            "set n_train_games, n_val_games, n_test_games >= 1")

    def resolved(self) -> SynthConfig:
        """This config as it will run: SMOKE sizes applied when `smoke` is set."""
        if not self.smoke:
            return self
        return replace(self, n_train_games=min(self.n_train_games, 3),
                       n_val_games=min(self.n_val_games, 1), n_test_games=min(self.n_test_games, 1),
                       episode_length=min(self.episode_length, 80),
                       max_rows={t: min(n, 60) for t, n in self.max_rows.items()},
                       n_persona_train=min(self.n_persona_train, 3),
                       n_persona_val=min(self.n_persona_val, 1),
                       max_conversation_rows={t: min(n, 40) for t, n in
                                              self.max_conversation_rows.items()},
                       max_eval_rows=min(self.max_eval_rows, 20),
                       n_expansions=min(self.n_expansions, 1))

    def split_seeds(self) -> dict[str, list[int]]:
        """Game seeds of each split (disjoint, consecutive from `first_seed`)."""
        out, start = {}, self.first_seed
        for split, n in zip(SPLITS, (self.n_train_games, self.n_val_games, self.n_test_games),
                            strict=True):
            out[split] = list(range(start, start + n))
            start += n
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
