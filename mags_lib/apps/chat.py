"""A conversation with a memory that persists: the MAGS loop on a person's messages.

    session = ChatSession.open(ChatConfig(memory="data/chat/memory"))
    for piece in session.reply("My sister Ana lives in Porto."):
        print(piece, end="")
    session.last            # the turn: route, ask queries, recalled lines, write output, applied
    session.close()         # pending reward step, then save

Every message goes through the loop of `agents/loop.py`, with a person instead of a game:

* **route** (`agents/router.py` `message_kind`): a question goes to the ask model, anything
  else is information for the write model; the answer model replies to both;
* **write**: the message, dated and signed with the person's name (`ChatConfig.user`:
  "[28 November 2026] Ana: I moved to Lisbon.", as the models read a conversation's turns), is
  kept verbatim in the *episodic* block (with `chat:<turn>` provenance), and the write model,
  shown what memory already holds about it, emits `<engram>` actions (semantic facts, updates,
  links) applied with `memory.apply`;
* **ask**: the ask model's `<recall>` queries (grammar-constrained) run the memory's read path;
  hits are merged by node; a statement recalls on its own text;
* **answer**: the answer model replies, streamed, with the recalled lines and the last few
  exchanges in its prompt;
* **step**: `memory.step(reward)` runs before the next message (or on close), with the reward a
  person gave with `/good` or `/bad` (None otherwise), so Hebbian learning follows feedback.

The memory is saved after every turn (atomic directory swap), so a crash loses at most the turn
in flight; a save the crash interrupted is recovered from its backup when the chat next opens.
Named snapshots are saved memories under `<memory>.snapshots/<name>/`: they survive restarts,
and `rollback` restores one.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from mags_lib.errors import CorruptFileError, MagsError
from mags_lib.paths import CHAT_DIR

ROLES = ("answer", "ask", "write", "reader")
SNAPSHOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
ANSWER_SYSTEM = (
    "You are MAGS, a helpful assistant with a long-term memory. Facts you remember about this "
    "user and their world are listed below, most relevant last. Use them when they answer the "
    "message; say so when you do not know. Reply briefly.\n\nMemory:\n{memory}")
NO_MEMORY = "(nothing relevant remembered)"
ANSWER_BLOCKS = ("auto", "semantic", "episodic", "")


@dataclass
class ChatConfig:
    """What `python -m mags_lib chat` runs; every field is a command-line option."""

    memory: str = field(default=str(CHAT_DIR / "memory"), metadata={
        "help": "memory directory: loaded if it exists, created otherwise, saved every turn"})
    model: str = field(default="embedded", metadata={
        "help": "answer model: 'embedded' (SmolLM2-135M-Instruct), a name under models/ "
                "(answer-sft, ...: its GGUF from notebook 04, else its checkpoint), a .gguf "
                "or checkpoint path, or the served model name with --backend openai"})
    ask_model: str = field(default="auto", metadata={
        "help": "ask model: 'auto' (notebook 04's trained ask GGUF, else the answer model with "
                "worked examples), 'answer' (the answer model), or a spec as for --model"})
    write_model: str = field(default="auto", metadata={
        "help": "write model: 'auto', 'answer' or a spec, as for --ask-model"})
    reader_model: str = field(default="auto", metadata={
        "help": "the model that answers a question from the recalled lines (--questions "
                "memory): 'auto' (notebook 04's trained answer GGUF, the conversation "
                "evaluation's reader, else the answer model), 'answer', or a spec as for "
                "--ask-model. The embedded base model answered 'Arena.' to 'Where does Ana live "
                "now?' shown 'Ana lives in Lisbon.'"})
    backend: str = field(default="auto", metadata={
        "help": "auto (llama.cpp for GGUF, transformers for checkpoints) or openai (a vLLM / "
                "llama.cpp server or cloud API at --base-url)"})
    base_url: str = field(default="http://127.0.0.1:8000/v1", metadata={
        "help": "OpenAI-compatible endpoint for --backend openai"})
    embedder: str = field(default="embedded", metadata={
        "help": "'embedded' (all-MiniLM-L6-v2), 'hashing' (no model, for tests), or a "
                "sentence-transformers model directory"})
    user: str = field(default="User", metadata={
        "help": "your name: the write and ask models read a message as '[date] USER: message' "
                "(a question as 'USER: question'), as they read a conversation's turns, so "
                "'I' and 'my' are stored as yours; '' gives them the bare message"})
    k: int = field(default=4, metadata={"help": "memory lines in the answer prompt"})
    query_k: int = field(default=3, metadata={"help": "hits per ask query before merging"})
    history: int = field(default=3, metadata={"help": "past exchanges kept in the prompt"})
    versions: int = field(default=0, metadata={
        "help": "earlier versions of a recalled fact shown before it, dated and marked '(no "
                "longer true)', so that 'where did I live before?' can be answered. Off (0) by "
                "default: the 135M answer model names the stale value more often when shown it "
                "(docs/journal.md, 2026-11-28)"})
    past_versions: int = field(default=1, metadata={
        "help": "earlier versions shown, as `versions` does, only for a question that asks "
                "about the past ('where did I live before?', `history_lines.asks_about_past`); "
                "the larger of the two applies; 0: off"})
    past_lines: str = field(default="earlier", metadata={
        "help": "what a question about the past is shown of a changed fact: 'earlier' (its "
                "earlier versions in place of it: the 135M reader named the current value when "
                "shown both, docs/journal.md 2026-11-30) or 'both' (side by side)"})
    answer_block: str = field(default="auto", metadata={
        "help": "the memory block the answer's lines are recalled from: 'semantic' (the write "
                "model's facts, where an update supersedes the old value), '' (any block: the "
                "messages as said too, which keep the old values; on development personas the "
                "stale-answer rate rose from 0.125 to 0.250), or 'auto': semantic with a trained "
                "write model, any block when the base model writes (it stores little)"})
    questions: str = field(default="memory", metadata={
        "help": "how a question is answered: 'memory' (from the recalled lines alone, in the "
                "short-answer prompt the conversation evaluation uses, no past exchanges: the "
                "135M model copied its earlier replies from them) or 'chat' (the chat prompt "
                "with the last --history exchanges, as for any other message)"})
    recall_message: bool = field(default=True, metadata={
        "help": "recall the message itself beside the ask model's queries (as `mags` does, "
                "LoopConfig.recall_observation); --no-recall-message for the queries alone"})
    grounding_words: bool = field(default=True, metadata={
        "help": "refuse a fact the write model wrote that shares no content word with the "
                "message (as `mags` does, LoopConfig.grounding_words: 'Hey, it's me.' stored "
                "nothing on the development personas instead of an invented fact)"})
    statement_reply: str = field(default="stored", metadata={
        "help": "the reply to a statement: 'stored' (what the write model stored from it, or "
                "that it stored nothing: the 135M answer model's replies to statements were "
                "noise such as 'A: Ana is a person.') or 'model' (the answer model's chat "
                "reply, for a bigger model)"})
    max_tokens: int = field(default=160, metadata={"help": "new tokens per reply"})
    one_line: bool = field(default=True, metadata={
        "help": "stop a reply to a statement at its first line break (the 135M model runs on "
                "into numbered lists and invented dialogue; a question's short answer stops at "
                "a blank line); --no-one-line for a bigger model"})
    n_ctx: int = field(default=2048, metadata={"help": "context window of local models"})
    allow_unsigned: bool = field(default=False, metadata={
        "help": "open a memory saved without a manifest (before saves were signed, or with "
                "its manifest deleted); the next save signs it"})

    def __post_init__(self) -> None:
        if self.backend not in ("auto", "llamacpp", "transformers", "openai"):
            raise MagsError(f"unknown backend {self.backend!r}",
                            "use auto, llamacpp, transformers or openai")
        for name in ("k", "query_k", "max_tokens", "n_ctx"):
            if getattr(self, name) < 1:
                raise MagsError(f"ChatConfig.{name} must be at least 1, got "
                                f"{getattr(self, name)}", f"pass a positive --{name}")
        if self.history < 0:
            raise MagsError("ChatConfig.history must be 0 or more", "pass --history 0 or more")
        if self.answer_block not in ANSWER_BLOCKS:
            raise MagsError(f"unknown ChatConfig.answer_block {self.answer_block!r}",
                            "pass --answer-block auto, semantic, episodic or '' (any)")
        if self.statement_reply not in ("stored", "model"):
            raise MagsError(f"unknown ChatConfig.statement_reply {self.statement_reply!r}",
                            "pass --statement-reply stored or --statement-reply model")
        if self.questions not in ("memory", "chat"):
            raise MagsError(f"unknown ChatConfig.questions {self.questions!r}",
                            "pass --questions memory or --questions chat")
        if self.versions < 0 or self.past_versions < 0:
            raise MagsError("ChatConfig.versions and past_versions must be 0 or more",
                            "pass --versions / --past-versions 0 or more")
        from mags_lib.agents.history_lines import PAST_LINES

        if self.past_lines not in PAST_LINES:
            raise MagsError(f"ChatConfig.past_lines {self.past_lines!r} is unknown",
                            f"pass --past-lines with one of {', '.join(PAST_LINES)}")


def model_spec(spec: str, role: str) -> tuple[str | None, bool]:
    """(what to load, whether the role needs worked examples) for a role's model spec.

    'auto' is the role's trained GGUF (notebook 04) when there is one, else None (use the
    answer model, with worked examples); a bare name under models/ becomes its GGUF or its
    checkpoint directory; anything else is passed on (embedded, a path, a served name)."""
    from mags_lib.checkpoints import final_model_name
    from mags_lib.evaluation.answer_model import find_gguf
    from mags_lib.paths import MODELS_DIR

    if spec == "answer":
        return None, True
    if spec == "auto":
        if role == "answer":
            return "embedded", False
        path = find_gguf(final_model_name("answer" if role == "reader" else role))
        return (str(path), False) if path else (None, True)
    if "/" not in spec and not spec.endswith(".gguf") and spec != "embedded":
        path = find_gguf(spec)
        if path is not None:
            return str(path), False
        if (MODELS_DIR / spec).is_dir():
            return str(MODELS_DIR / spec), False
    return spec, False


def load_models(cfg: ChatConfig, say: Callable[[str], None] = print) -> tuple[dict, dict]:
    """(role -> LLM, role -> needs worked examples), each file loaded once, with a line per
    load so a person sees what is loading and how long it took."""
    from mags_lib.llm import LLMConfig, load_llm

    specs = {"answer": (cfg.model, False)}
    for role in ("ask", "write", "reader"):
        spec = {"ask": cfg.ask_model, "write": cfg.write_model, "reader": cfg.reader_model}[role]
        specs[role] = ((cfg.model, True) if cfg.backend == "openai" and spec == "auto"
                       else model_spec(spec, role))
    loaded: dict[str, Any] = {}
    llms, few_shot = {}, {}
    for role in ROLES:
        spec, shots = specs[role]
        spec = spec or cfg.model
        if spec not in loaded:
            say(f"loading {role} model {spec} ...")
            t0 = time.perf_counter()
            loaded[spec] = load_llm(LLMConfig(model=spec, backend=cfg.backend,
                                              base_url=cfg.base_url, n_ctx=cfg.n_ctx))
            say(f"  ready in {time.perf_counter() - t0:.1f} s ({loaded[spec].name})")
        llms[role] = loaded[spec]
        few_shot[role] = shots
    return llms, few_shot


def load_embedder(kind: str) -> Any:
    if kind == "hashing":
        from mags_lib.embed import HashingEmbedder

        return HashingEmbedder()
    from mags_lib.embed import default_embedder

    return default_embedder(kind)


def stored_reply(write: dict[str, Any] | None) -> str:
    """The reply to a statement under `statement_reply='stored'`: the facts the write model
    stored from it, else why nothing was.

    >>> stored_reply({"stored": ["Ana lives in Lisbon."], "applied": {}})
    'Noted: Ana lives in Lisbon.'
    >>> stored_reply({"stored": [], "applied": "nothing: the write model stored no fact"})
    'Noted (nothing new to remember).'
    """
    facts = (write or {}).get("stored") or []
    return f"Noted: {' '.join(facts)}" if facts else "Noted (nothing new to remember)."


def snapshots_dir(memory_path: str | Path) -> Path:
    path = Path(memory_path)
    return path.with_name(path.name + ".snapshots")


def graph_path(memory_path: str | Path) -> Path:
    path = Path(memory_path)
    return path.with_name(path.name + "-graph.html")


def framed(text: str, user: str, day: date, question: bool = False) -> str:
    """`text` as the role models read it: dated and with the speaker's name, as a
    conversation's turn (`turn_text(dated=True)`); a question with its asker (`QA.asked`);
    unchanged without a `user`.

    >>> framed("I moved to Lisbon.", "Ana", date(2026, 11, 28))
    '[28 November 2026] Ana: I moved to Lisbon.'
    >>> framed("Where do I live?", "Ana", date(2026, 11, 28), question=True)
    'Ana: Where do I live?'
    """
    if not user:
        return text
    return f"{user}: {text}" if question else f"[{day_text(day)}] {user}: {text}"


def day_text(day: date) -> str:
    """A day as conversations write it.

    >>> day_text(date(2026, 11, 8))
    '8 November 2026'
    """
    return f"{day.day} {day:%B %Y}"


def source_day(source: Any) -> str | None:
    """The day a chat source was said on ('chat:12 on 28 November 2026'); None for others.

    >>> source_day("chat:12 on 28 November 2026"), source_day("chat:3")
    ('28 November 2026', None)
    """
    text = str(source)
    return text.split(" on ", 1)[1] if text.startswith("chat:") and " on " in text else None


class ChatSession:
    """One person's conversation with a persistent memory; see the module docstring."""

    def __init__(self, cfg: ChatConfig, memory: Any, llms: dict[str, Any],
                 few_shot: dict[str, bool], embedder: Any):
        self.cfg = cfg
        self.path = Path(cfg.memory)
        self.memory = memory
        self.llms = llms
        self.few_shot = few_shot
        self.embedder = embedder
        self.exchanges: list[tuple[str, str]] = []
        self.pending_reward: float | None = None
        self.last_step_reward: float | None = None
        self.stepped = True
        self.turn = memory.step_count
        self.last: dict[str, Any] = {}
        self.today: Callable[[], date] = date.today  # the day a message is dated with

    def framed(self, text: str, question: bool = False) -> str:
        """`framed` with this chat's user and today's date."""
        return framed(text, self.cfg.user, self.today(), question)

    last_step_reward: float | None = None

    @classmethod
    def open(cls, cfg: ChatConfig, *, llms: dict[str, Any] | None = None,
             few_shot: dict[str, bool] | None = None, embedder: Any = None,
             say: Callable[[str], None] = print) -> ChatSession:
        """Load (or create) the memory at `cfg.memory` and the role models."""
        if embedder is None:
            say(f"loading embedder {cfg.embedder} ...")
            t0 = time.perf_counter()
            embedder = load_embedder(cfg.embedder)
            say(f"  ready in {time.perf_counter() - t0:.1f} s")
        memory = open_memory(cfg.memory, embedder, say=say, allow_unsigned=cfg.allow_unsigned)
        say(f"memory {cfg.memory}: {describe(memory)}")
        if llms is None:
            llms, few_shot = load_models(cfg, say)
        return cls(cfg, memory, llms, few_shot or {r: False for r in ROLES}, embedder)

    # ----- a turn -----------------------------------------------------------------------
    def reply(self, text: str) -> Iterator[str]:
        """Run one turn on the person's message; yield the reply as it is generated.

        The turn is applied whole or not at all: if it fails or is interrupted (Ctrl-C, or the
        generator is closed early), the memory goes back to the last saved state, which is the
        state before the turn (every turn and command saves)."""
        text = text.strip()
        if not text:
            raise MagsError("empty message", "type something, or /help for the commands")
        before = (self.stepped, self.pending_reward, self.last_step_reward, self.turn,
                  list(self.exchanges))
        finished = False
        try:
            yield from self._turn(text)
            finished = True
        finally:
            if not finished:
                self._abort(before)

    def _turn(self, text: str) -> Iterator[str]:
        from mags_lib.agents.router import message_kind, route
        from mags_lib.llm.stream import stream_chat

        self._step()
        self.turn += 1
        kind = message_kind(text)
        roles = tuple(dict.fromkeys([*route(kind), "answer"]))  # a person always gets a reply
        self.last = {"turn": self.turn, "message": text, "kind": kind, "roles": list(roles)}
        if "write" in roles:
            self._write(self.framed(text))
        pieces: list[str] = []
        if kind != "question" and self.cfg.statement_reply == "stored":
            # the reply is what was stored: no recall (it would strengthen what it touches)
            pieces.append(stored_reply(self.last.get("write")))
            yield pieces[-1]
            self._finish(text, pieces)
            return
        queries = self._queries(self.framed(text, question=True)) if "ask" in roles else [text]
        if self.cfg.recall_message and text not in queries:
            queries = [*queries, text]
        self.last["queries"] = queries
        from mags_lib.agents.history_lines import earlier_only, history_depth

        lines = self._recall(queries, history_depth(text, self.cfg.versions,
                                                    self.cfg.past_versions),
                             earlier_only(text, self.cfg.past_versions, self.cfg.past_lines))
        self.last["recalled"] = lines
        short = self.cfg.questions == "memory" and kind == "question"  # a short answer's line
        messages = self._answer_messages(text, lines, short)
        stop = ["\nQuestion:", "\n\n"] if short else ["\n"] if self.cfg.one_line else []
        reader = self.llms.get("reader")
        if short and reader is not None and reader is not self.llms["answer"]:
            from mags_lib.agents.open_answer import clean_answer

            # the trained reader answers in <answer> tags: the reply is its cleaned answer
            out = reader.chat(messages, max_tokens=min(self.cfg.max_tokens, 32),
                              temperature=0.0, seed=0, stop=stop)
            pieces.append(clean_answer(out.text) or out.text.strip())
            yield pieces[-1]
        else:
            for piece in stream_chat(self.llms["answer"], messages,
                                     max_tokens=self.cfg.max_tokens, temperature=0.0, seed=0,
                                     **({"stop": stop} if stop else {})):
                pieces.append(piece)
                yield piece
        self._finish(text, pieces)

    def _finish(self, text: str, pieces: list[str]) -> None:
        """Record the reply, and save: the turn is complete."""
        answer = "".join(pieces).strip()
        self.last["answer"] = answer
        self.exchanges.append((text, answer))
        self.stepped = False
        self.save()

    def _abort(self, before: tuple) -> None:
        """Undo a turn that did not finish: the memory as last saved, the counters as before."""
        self.memory = open_memory(self.path, self.embedder)
        (self.stepped, self.pending_reward, self.last_step_reward, self.turn,
         self.exchanges) = before
        self.last = {"aborted": True, "turn": self.turn + 1}

    def _write(self, text: str) -> None:
        from mags_lib.actions import EngramAdd, EngramUpdate, parse_actions
        from mags_lib.agents.grounding import split_grounded
        from mags_lib.agents.loop import ENGRAM_CLOSE, closed
        from mags_lib.agents.role_prompts import play_write_messages

        source = f"chat:{self.turn} on {day_text(self.today())}"
        # the stored facts nearest the message, as the write model was trained to see them
        # (the episodic block's raw messages, lexically closest, crowded them out)
        held = [h.text for h in self.memory.recall(text, 3, block="semantic", learn=False)]
        episode = self.memory.observe(text, block="episodic", source=source)
        out = self.llms["write"].chat(play_write_messages(text, held,
                                                          few_shot=self.few_shot["write"]),
                                      max_tokens=96, temperature=0.0, seed=0, stop=[ENGRAM_CLOSE])
        parsed = parse_actions(closed(out, ENGRAM_CLOSE), "engram")
        write = {"episode": episode, "held": held, "raw": out.text,
                 "parsed": [repr(a) for a in parsed.actions], "errors": list(parsed.errors)}
        actions = list(parsed.actions)
        if self.cfg.grounding_words:
            actions, write["ungrounded"] = split_grounded(actions, text, words=True)
        if parsed.complete and actions:
            write["stored"] = [a.text for a in actions if isinstance(a, EngramAdd | EngramUpdate)]
            report = self.memory.apply(actions, source=source)
            write["applied"] = {"added": report.added, "merged": report.merged,
                                "superseded": report.superseded, "linked": report.linked,
                                "forgotten": report.forgotten, "skipped": report.skipped}
        elif not parsed.complete:
            write["applied"] = "nothing: the write model's block did not parse"
        elif parsed.actions:
            write["applied"] = ("nothing: no fact the write model wrote shares a word with the "
                                "message (ChatConfig.grounding_words)")
        else:
            write["applied"] = "nothing: the write model stored no fact"
        self.last["write"] = write

    def _queries(self, text: str) -> list[str]:
        from mags_lib.actions import query_texts, recall_grammar
        from mags_lib.agents.role_prompts import play_ask_messages

        out = self.llms["ask"].chat(play_ask_messages(text, few_shot=self.few_shot["ask"]),
                                    max_tokens=96, temperature=0.0, seed=0,
                                    grammar=recall_grammar())
        queries, _ = query_texts(out.text)
        self.last["ask"] = {"raw": out.text, "queries": queries or [text],
                            "fallback": not queries}
        return queries or [text]

    def _recall(self, queries: list[str], depth: int,
                earlier: bool = False) -> list[dict[str, Any]]:
        """The best `k` facts for the queries, best last, each after `depth` earlier versions
        (in its place where `earlier`: `history_lines.with_history`)."""
        from mags_lib.agents.history_lines import with_history
        from mags_lib.agents.loop import merged_hits

        hits = merged_hits(self.memory, queries, self.cfg.query_k, self.cfg.k,
                           block=self.answer_block())
        nodes = self.memory.graph.nodes
        return [{"node": line["id"], "text": line["text"], "score": line["score"],
                 "block": nodes[line["id"]]["block"], "valid": line["valid"],
                 "path": line["path"], "sources": line["sources"]}
                for line in with_history(self.memory, hits, depth, source_day,
                                         earlier_only=earlier)]

    def answer_block(self) -> str | None:
        """The block the answer's lines come from (None: any); see `ChatConfig.answer_block`."""
        if self.cfg.answer_block == "auto":
            return None if self.few_shot.get("write") else "semantic"
        return self.cfg.answer_block or None

    def _answer_messages(self, text: str, lines: list[dict[str, Any]],
                         short: bool = False) -> list[dict[str, str]]:
        """`short`: the short-answer prompt over the lines alone (`questions="memory"`);
        else the chat prompt with the memory and the last exchanges."""
        if short:
            from mags_lib.agents.open_answer import open_messages

            return open_messages([line["text"] for line in lines], text)
        notes = "\n".join(f"- {line['text']}" for line in lines) or NO_MEMORY
        messages = [{"role": "system", "content": ANSWER_SYSTEM.format(memory=notes)}]
        for user, assistant in self.exchanges[-self.cfg.history:] if self.cfg.history else []:
            messages += [{"role": "user", "content": user},
                         {"role": "assistant", "content": assistant}]
        return [*messages, {"role": "user", "content": text}]

    # ----- state ------------------------------------------------------------------------
    def _step(self) -> None:
        """The previous turn's `memory.step`, with the reward given since (if any)."""
        if not self.stepped:
            self.memory.step(self.pending_reward)
            self.last_step_reward = self.pending_reward
            self.pending_reward = None
            self.stepped = True

    def reward(self, value: float) -> None:
        """Feedback on the last reply: +1 strengthens the paths its recall used, -1 weakens."""
        if self.stepped:
            raise MagsError("no reply to reward yet (or it was already stepped by a rollback, "
                            "load or the next message)", "give /good or /bad right after a reply")
        self.pending_reward = float(value)

    def save(self, path: str | Path | None = None) -> Path:
        """Save the memory (to `path`, which then becomes this session's file)."""
        if path is not None:
            self.path = Path(path)
        return self.memory.save(self.path)

    def close(self) -> Path:
        self._step()
        return self.save()

    def load(self, path: str | Path) -> None:
        """Switch to another saved memory (this one is saved first)."""
        self.close()
        self.memory = open_memory(path, self.embedder, create=False)
        self.path = Path(path)
        self.exchanges = []

    def snapshot(self, name: str) -> Path:
        """Save the memory as snapshot `name` (replacing one of that name)."""
        self._check_name(name)
        self.save()
        return self.memory.save(snapshots_dir(self.path) / name)

    def snapshots(self) -> list[str]:
        root = snapshots_dir(self.path)
        return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def rollback(self, name: str) -> None:
        """Make snapshot `name` the current memory (and save it as such)."""
        self._check_name(name)
        where = snapshots_dir(self.path) / name
        if not where.is_dir():
            raise MagsError(f"no snapshot {name!r} of {self.path}",
                            f"take one with /snapshot {name}; saved ones: "
                            f"{', '.join(self.snapshots()) or 'none'}")
        from mags_lib.memory import LiquidMemory

        self.memory = LiquidMemory.load(where, embedder=self.embedder)
        self.stepped, self.pending_reward = True, None
        self.save()

    def forget(self, target: str) -> list[int]:
        """Forget node `target` (an id) or the best match of `target` (a text); history kept."""
        if target.strip().isdigit():
            self.memory.forget(int(target))
            forgotten = [int(target)]
        else:
            from mags_lib.actions import Forget

            report = self.memory.apply([Forget(target)], source=f"chat:{self.turn}")
            forgotten = report.forgotten
        self.save()
        return forgotten

    def write_graph(self) -> Path:
        from mags_lib.graph_html import write_graph_html

        highlight = [line["node"] for line in self.last.get("recalled", [])]
        return write_graph_html(self.memory, graph_path(self.path), highlight=highlight,
                                title=f"MAGS chat memory {self.path} (step "
                                      f"{self.memory.step_count})")

    @staticmethod
    def _check_name(name: str) -> None:
        if not SNAPSHOT_NAME.match(name or ""):
            raise MagsError(f"bad snapshot name {name!r}",
                            "use letters, digits, '.', '_' or '-' (at most 64 characters)")


def open_memory(path: str | Path, embedder: Any, *, create: bool = True,
                say: Callable[[str], None] | None = None, allow_unsigned: bool = False) -> Any:
    """The memory saved at `path`, or a new empty one when nothing is there (and `create`).

    A save interrupted by a crash between its two renames left the last complete save in the
    backup `.NAME.bak`: it is renamed back into place first (`persistence.recover`, the
    recovery `LiquidMemory.load` reads through), and `say` is told."""
    from mags_lib.memory import LiquidMemory
    from mags_lib.memory.persistence import recover

    path = Path(path)
    if path.exists() and not path.is_dir():
        raise CorruptFileError(f"{path} is a file, not a memory directory",
                               "name a directory with --memory (a new one is created)")
    backup = recover(path)
    if backup is not None and say is not None:
        say(f"recovered the memory from the backup {backup} (a save was interrupted)")
    if path.is_dir() and any(path.iterdir()):
        return LiquidMemory.load(path, embedder=embedder, allow_unsigned=allow_unsigned)
    if not create:
        raise MagsError(f"no memory at {path}", "check the path (a directory written by /save)")
    from mags_lib.memory import DIALOGUE_MEMORY, MemoryConfig

    return LiquidMemory(MemoryConfig.from_dict(DIALOGUE_MEMORY), embedder=embedder)


def describe(memory: Any) -> str:
    """One line: node counts by block and validity, edges, working items, step."""
    blocks = memory_blocks(memory)
    parts = [f"{b} {n['valid']}" + (f" (+{n['superseded']} superseded)" if n["superseded"]
                                     else "") for b, n in blocks.items()]
    graph = memory.to_networkx(valid_only=False)
    return (", ".join(parts) or "empty") + (f"; {graph.number_of_edges()} edges, "
                                            f"{len(memory.working)} in working memory, "
                                            f"step {memory.step_count}")


def memory_blocks(memory: Any) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for _, data in memory.to_networkx(valid_only=False).nodes(data=True):
        counts = out.setdefault(data["block"], {"valid": 0, "superseded": 0})
        counts["valid" if data["valid_to"] is None else "superseded"] += 1
    return out


def recent_changes(memory: Any, n: int = 8) -> list[str]:
    """The last `n` writes and supersessions, newest first, as lines."""
    events = []
    for node_id, data in memory.to_networkx(valid_only=False).nodes(data=True):
        events.append((data["created"], f"step {data['created']}: + #{node_id} "
                                        f"[{data['block']}] {data['text']}"))
        if data["valid_to"] is not None:
            by = data.get("superseded_by")
            events.append((data["valid_to"], f"step {data['valid_to']}: - #{node_id} "
                                             + (f"superseded by #{by}" if by is not None
                                                else "forgotten")))
    return [line for _, line in sorted(events, key=lambda e: -e[0])[:n]]

