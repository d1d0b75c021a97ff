"""Embedded offline models, model-spec resolution and GGUF -> torch conversion."""

from __future__ import annotations

import numpy as np
import pytest

from mags_lib.errors import CorruptFileError, MagsError, ModelNotFoundError
from mags_lib.models import (
    check_gguf,
    embedded_embedder_dir,
    embedded_gguf_path,
    resolve_model,
    torch_checkpoint,
)


def test_embedded_gguf_is_shipped_and_valid():
    path = embedded_gguf_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert check_gguf(path) == path
    assert resolve_model("embedded") == ("gguf", path)


def test_embedded_embedder_dir_is_shipped():
    path = embedded_embedder_dir()
    assert (path / "config.json").is_file() and (path / "model.safetensors").is_file()


def test_missing_gguf_names_path_and_fix(tmp_path):
    with pytest.raises(ModelNotFoundError) as err:
        resolve_model(str(tmp_path / "nope.gguf"))
    assert "nope.gguf" in err.value.cause and "embedded" in err.value.fix


def test_corrupt_gguf_is_reported(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(CorruptFileError) as err:
        resolve_model(str(bad))
    assert "not a GGUF file" in str(err.value)


def test_truncated_gguf_fails_cleanly_in_llamacpp(tmp_path):
    truncated = tmp_path / "trunc.gguf"
    truncated.write_bytes(embedded_gguf_path().read_bytes()[:200_000])
    from mags_lib.llm import load_llm

    with pytest.raises(CorruptFileError) as err:
        load_llm(model=str(truncated), cache=False)
    assert "trunc.gguf" in str(err.value) and "fix:" in str(err.value)


def test_hub_id_offline_says_how_to_fix(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotFoundError) as err:
        resolve_model("meta-llama/Llama-3.2-1B-Instruct")
    assert "HF_HUB_OFFLINE" in err.value.cause
    assert "embedded" in err.value.fix


def test_hub_id_online_is_deferred_to_the_loader(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert resolve_model("Qwen/Qwen2.5-0.5B-Instruct") == ("hub", "Qwen/Qwen2.5-0.5B-Instruct")


def test_nonsense_spec_and_empty_dir(tmp_path):
    with pytest.raises(ModelNotFoundError):
        resolve_model("definitely not a model")
    with pytest.raises(ModelNotFoundError) as err:
        resolve_model(str(tmp_path))
    assert "config.json" in err.value.cause


def test_unknown_backend_is_rejected():
    from mags_lib.llm import load_llm

    with pytest.raises(MagsError, match="unknown LLM backend"):
        load_llm(backend="tensorflow")


@pytest.mark.slow
def test_embedded_embedder_loads_offline():
    from mags_lib.embed import default_embedder

    emb = default_embedder()
    vecs = emb.encode(["The glarb eats carrots.", "A glarb is eating a carrot.", "Stock prices fell."])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2] + 0.2


@pytest.mark.slow
def test_gguf_to_torch_conversion_loads_and_generates(tmp_path):
    out = torch_checkpoint("embedded", out_dir=tmp_path / "smol")
    assert (out / "config.json").is_file() and list(out.glob("*.safetensors"))
    mtime = next(out.glob("*.safetensors")).stat().st_mtime
    assert torch_checkpoint("embedded", out_dir=out) == out  # cached, not converted again
    assert next(out.glob("*.safetensors")).stat().st_mtime == mtime

    import json

    assert "quantization_config" not in json.loads((out / "config.json").read_text())
    from mags_lib.llm import load_llm

    llm = load_llm(model=str(out), cache=False)
    msgs = [{"role": "user", "content": "Name a colour."}]
    first = llm.chat(msgs, max_tokens=12)
    assert first.text.strip() and first.usage["completion_tokens"] > 0
    assert llm.chat(msgs, max_tokens=12).text == first.text  # greedy is deterministic
    with pytest.raises(MagsError, match="GBNF"):
        llm.chat(msgs, grammar='root ::= "a"')
