"""The one shape every conversation source gives: turns in sessions, questions with their gold,
and the facts a perfect writer would store (gold writes).

LoCoMo's reader (`locomo.py`) and the persona generator (`persona.py`) both return
`Conversation`s, so evidence recall, QA scoring and the agents take either without knowing
which. Turn ids follow LoCoMo's 'D<session>:<turn>'.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from mags_lib.tasks.base import REPLY, UTTERANCE, Observation


@dataclass(frozen=True)
class Turn:
    """One utterance: `dia_id` is 'D<session>:<turn>'."""

    dia_id: str
    session: int
    speaker: str
    text: str
    date: str  # the session's date and time as the source writes it ("1:56 pm on 8 May, 2023")
    caption: str | None = None  # a caption of a shared image, when the turn has one


@dataclass(frozen=True)
class QA:
    """A question with its gold. `answer` None means nothing said answers it: abstaining is
    right (LoCoMo's category 5). `kind` says what a generated question asks ('current',
    'earlier', 'when', 'unknown'); `stale` holds values that were true once and are not the
    answer now (answering one is a stale answer)."""

    question: str
    answer: str | None
    evidence: tuple[str, ...]
    category: int
    adversarial_answer: str | None = None
    kind: str | None = None
    stale: tuple[str, ...] = ()
    asker: str | None = None  # who asks, where the question says "I" / "my" (persona)
    about: str | None = None  # whose fact it asks for (persona: the asker or someone they
    # name); None where the data does not say (LoCoMo)

    def asked(self) -> str:
        """The question as an agent reads it: with its asker, so "my car" names someone.

        >>> QA("What car do I drive now?", "a Kia", (), 4, asker="Hugo").asked()
        'Hugo: What car do I drive now?'
        """
        return f"{self.asker}: {self.question}" if self.asker else self.question


@dataclass(frozen=True)
class GoldFact:
    """A fact drawn from a session, with the turns it comes from: a gold write (LoCoMo calls
    these a session's 'observation'; here an `Observation` is what an agent reads). `op` is 'add'
    for a new fact, 'update' for one that replaces `replaces` (the old fact's text)."""

    session: int
    speaker: str
    text: str
    evidence: tuple[str, ...]
    op: str = "add"
    replaces: str | None = None


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: dict[int, list[Turn]]
    qa: list[QA]
    gold_facts: list[GoldFact]
    repairs: list[str] = field(default_factory=list)  # malformed source entries read leniently
    agent_speaker: str | None = None
    """The speaker whose place the agent takes: the persona's assistant, whom the user tells
    and later asks. Its turns are the agent's own replies (`REPLY`). None where the agent
    only listens to people talking to each other (LoCoMo)."""

    def turns(self) -> Iterator[Turn]:
        for s in sorted(self.sessions):
            yield from self.sessions[s]

    def turn_ids(self) -> set[str]:
        return {t.dia_id for t in self.turns()}

    def stream_ids(self) -> list[str]:
        """The evidence id ('D<s>:<t>') of each observation of `stream()`, in order."""
        return [t.dia_id for t in self.turns()]

    def stream(self) -> list[Observation]:
        """The conversation as an agent reads it (the task interface's `Dialogue.stream`): one
        information observation per turn, dated ("[8 May 2023] Ana: I moved to Lisbon."),
        `when` its session's day, `turn` its place in the stream; `kind` is `REPLY` for a turn
        of `agent_speaker` (what the agent, in that speaker's place, said), else `UTTERANCE`."""
        return [Observation(turn_text(t, dated=True), turn=i,
                            kind=REPLY if t.speaker == self.agent_speaker else UTTERANCE,
                            when=day_of(t.date)) for i, t in enumerate(self.turns())]


def day_of(when: str) -> str:
    """The date part of a session's time as the sources write it: '8 May 2023'.

    >>> day_of("1:56 pm on 8 May, 2023")
    '8 May 2023'
    """
    return when.split(" on ", 1)[-1].replace(",", "")


def turn_text(turn: Turn, dated: bool = False) -> str:
    """One turn as a memory stores it: the speaker, the words, a shared image's caption, and
    with `dated` the session's day first.

    >>> turn_text(Turn("D1:1", 1, "Ana", "Look!", "1:56 pm on 8 May, 2023", "a tram"), dated=True)
    '[8 May 2023] Ana: Look! [shares a photo: a tram]'
    """
    text = f"{turn.speaker}: {turn.text}"
    if turn.caption:
        text += f" [shares a photo: {turn.caption}]"
    return f"[{day_of(turn.date)}] {text}" if dated else text

