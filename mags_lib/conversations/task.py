"""The conversation tasks, as the task interface names them (`mags_lib.tasks.registry`):
`persona` and `locomo` give `Conversation`s, which are `Dialogue`s (`tasks.base`).

    from mags_lib.tasks.registry import get_task
    get_task("persona").episodes("dev", 3)     # the first 3 development personas
    get_task("locomo").episodes("dev")         # conv-43: the training conversation no dataset holds
"""

from __future__ import annotations

from typing import Any

from mags_lib.conversations.locomo import SPLITS as LOCOMO_SPLITS
from mags_lib.conversations.types import Conversation
from mags_lib.errors import MagsError
from mags_lib.tasks.base import SPLITS
from mags_lib.tasks.registry import check_split

LOCOMO_DEV = ("conv-43",)
"""LoCoMo's development conversation: one of the issue's training conversations, kept out of
every dataset (notebook 01 makes validation rows of it), so the trained models never saw it."""


class PersonaTask:
    """A person's facts changing across sessions (`persona.py`): personas split by seed range,
    phrasings by bank; `options` go to `PersonaConfig`. Beside the common splits, `fresh`: a
    second development split worded from `persona_fresh_phrases` only."""

    name = "persona"
    interactive = False
    splits = (*SPLITS, "fresh")

    def __init__(self, **options: Any):
        from mags_lib.conversations.persona import PersonaConfig

        self.config = PersonaConfig(**options) if options else None

    def episodes(self, split: str, n: int | None = None, offset: int = 0) -> list[Conversation]:
        """The first `n` personas of `split` (after `offset`); n None: 5."""
        from mags_lib.conversations.persona import persona_set

        check_split(self, split)
        return persona_set(split, 5 if n is None else n, self.config, offset=offset)


class LocomoTask:
    """LoCoMo's long real conversations (`locomo.py`), split by conversation: `train` the five
    the issue gives for training and every choice, `dev` the one of them no dataset holds
    (conv-43), `test` the five for a frozen configuration. `path`: the file (default: where
    `locomo_path()` finds it; a missing file is a clear error)."""

    name = "locomo"
    interactive = False
    splits = SPLITS

    def __init__(self, path: str | None = None):
        self.path = path

    def ids(self, split: str) -> tuple[str, ...]:
        check_split(self, split)
        return LOCOMO_DEV if split == "dev" else LOCOMO_SPLITS[split]

    def missing_message(self) -> str:
        from mags_lib.conversations.locomo import missing_message

        return missing_message()

    def available(self) -> bool:
        from mags_lib.conversations.locomo import locomo_path

        return locomo_path(self.path) is not None  # a path given but missing: an error later

    def episodes(self, split: str, n: int | None = None, offset: int = 0,
                 ids: list[str] | None = None) -> list[Conversation]:
        """The first `n` conversations of `split` after `offset` (all when None), or those of
        `ids` (which must belong to the split)."""
        from mags_lib.conversations.locomo import load_locomo

        allowed = self.ids(split)
        if ids is not None and set(ids) - set(allowed):
            raise MagsError(f"LoCoMo conversations {sorted(set(ids) - set(allowed))} are not "
                            f"in the {split!r} split", f"use some of {', '.join(allowed)}")
        end = None if n is None else offset + n
        return load_locomo(self.path, ids=list(ids or allowed[offset:end]))
