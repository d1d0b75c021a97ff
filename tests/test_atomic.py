"""mags_lib.atomic: the old file or the whole new one, never a part, and no temporary left."""

from __future__ import annotations

import pytest

from mags_lib.atomic import atomic_path, write_text


def test_write_text_replaces_the_whole_file(tmp_path):
    path = write_text(tmp_path / "sub" / "a.json", "first")
    write_text(path, "second")
    assert path.read_text() == "second"
    assert [p.name for p in path.parent.iterdir()] == ["a.json"]


def test_an_error_while_writing_keeps_the_old_file_and_removes_the_temporary(tmp_path):
    path = write_text(tmp_path / "a.txt", "old")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half of the ne")
        raise RuntimeError("crash mid-write")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_a_directory_replaces_a_directory(tmp_path):
    out = tmp_path / "model"
    for text in ("v1", "v2"):
        with atomic_path(out) as tmp:
            tmp.mkdir()
            (tmp / "weights").write_text(text)
    assert (out / "weights").read_text() == "v2"
    assert [p.name for p in tmp_path.iterdir()] == ["model"]
