"""BM25 over English stems (`RecallConfig.lexical_stem`): off by default, kept across a save."""

from __future__ import annotations

import pytest

from mags_lib.embed import HashingEmbedder
from mags_lib.memory import LiquidMemory, MemoryConfig
from mags_lib.memory.lexical import BM25Index, content_terms


def test_stems_match_inflections_only_when_asked():
    plain, stemmed = BM25Index(), BM25Index(stem=True)
    for index in (plain, stemmed):
        index.add(1, "Caroline painted a lighthouse after visiting the coast")
        index.add(2, "Melanie likes the colours")
    assert len(plain.search("what inspired the painting", 5)[0]) == 0
    assert stemmed.search("what inspired the painting", 5)[0].tolist() == [1]
    assert content_terms("Visiting visited visits", stem=True) == ["visit"] * 3
    assert content_terms("Visiting visited") == ["visiting", "visited"]


def test_memory_recall_uses_the_configured_stems_and_keeps_them_on_load(tmp_path):
    texts = ["Ana: I painted a lighthouse.", "Bo: the rent went up.", "Ana: noodles again."]
    for stem in (False, True):
        mem = LiquidMemory(MemoryConfig.from_dict({"lexical_stem": stem}),
                           embedder=HashingEmbedder())
        mem.observe_many([{"text": t, "block": "episodic"} for t in texts])
        assert mem.lexical.stem is stem
        path = tmp_path / f"m{stem}"
        mem.save(path)
        loaded = LiquidMemory.load(path, embedder=HashingEmbedder())
        assert loaded.config.recall.lexical_stem is stem and loaded.lexical.stem is stem
        ids, _ = loaded.lexical.search("paintings", 3)
        assert (len(ids) == 1) is stem


def test_a_stem_setting_that_is_not_a_boolean_is_refused():
    with pytest.raises(Exception, match="lexical_stem"):
        MemoryConfig.from_dict({"lexical_stem": "yes"})
    assert MemoryConfig().recall.lexical_stem is False
