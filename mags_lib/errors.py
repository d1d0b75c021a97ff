"""One error type that says what went wrong and how to fix it.

Library code catches low-level exceptions at its boundary (a file, a model, a server) and
re-raises them as `MagsError(cause, fix)`, so a user sees one clear message, not a traceback
from deep inside llama.cpp or transformers.
"""

from __future__ import annotations


class MagsError(RuntimeError):
    """An error with a cause and a fix, both meant for a person."""

    def __init__(self, cause: str, fix: str):
        self.cause = cause
        self.fix = fix
        super().__init__(f"{cause}\n  fix: {fix}")


class ModelNotFoundError(MagsError):
    """A model file, directory or hub id that cannot be found or loaded."""


class CorruptFileError(MagsError):
    """A file exists but cannot be read as what it claims to be."""


class BackendUnavailableError(MagsError):
    """An LLM backend that cannot be reached or is not installed."""


class ConfigError(MagsError, ValueError):
    """A config with an unknown key, a value of the wrong type or out of range (also a
    ValueError, what config validation raised before it named a fix)."""


class UnknownNodeError(MagsError, KeyError):
    """A memory node id that is not in the memory (also a KeyError, what `node()` and
    `history()` raised before they named a fix)."""

    def __str__(self) -> str:  # KeyError's own __str__ would repr() the message
        return RuntimeError.__str__(self)
