"""Stream a chat reply from any backend: piece by piece where the backend can, whole otherwise.

    for piece in stream_chat(llm, messages, max_tokens=128):
        print(piece, end="", flush=True)

llama.cpp and OpenAI-compatible servers stream (`stream_chat` methods); transformers and the
generation cache answer in one piece. Streaming bypasses the cache (a reply a person is waiting
for is shown as it comes, not replayed).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mags_lib.llm.base import Message


def stream_chat(llm: Any, messages: list[Message], **kwargs: Any) -> Iterator[str]:
    """The reply to `messages` in pieces (one piece when `llm` cannot stream)."""
    inner = getattr(llm, "inner", llm)  # a CachedLLM streams from its backend
    method = getattr(type(inner), "stream_chat", None)
    if method is None:
        yield llm.chat(messages, **kwargs).text
        return
    yield from inner.stream_chat(messages, **kwargs)
