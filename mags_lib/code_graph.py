"""The package's import graph: which `mags_lib` modules a piece of code can load, and a hash of
their files.

    index = code_index()                                  # every module: its imports, its files
    modules = closure({"mags_lib.train.sft"}, index.imports)
    code_digest(index, modules)                           # changes when one of them changes shape

Two fingerprints stand on it: a notebook's (`pipeline_state.notebook_inputs`: a notebook re-runs
when the code its cells can import changed) and a training run's
(`train.resume.training_code_digest`: a checkpoint is resumed only by the code that wrote it).
The graph is read statically (a regex over the source, imports inside functions too), so it
errs on the side of naming more modules, never fewer.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mags_lib.code_shape import code_shape

PACKAGE_DIR = Path(__file__).resolve().parent


_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(mags_lib[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"
                     r"|import[ \t]+([^\n]*))", re.M)


def mags_imports(source: str) -> set[str]:
    """The `mags_lib` modules `source` imports, at any depth (inside functions too). For
    `from a import b` both `a` and `a.b` are named: `a.b` may be a submodule. A regex, not a
    parse (ten times faster; notebook magics pass): an import statement in a docstring counts
    too, which errs on the side of hashing more."""
    found = set()
    for module, names, plain in _IMPORT.findall(re.sub(r"#[^\n]*", "", source)):
        parts = (names or plain).strip("()").replace("\\", " ").split(",")
        first = [p.split()[0] for p in parts if p.split()]
        found |= {module, *(f"{module}.{n}" for n in first)} if module else set(first)
    return {m for m in found if m == "mags_lib" or m.startswith("mags_lib.")}


@dataclass(frozen=True)
class CodeIndex:
    """The package's modules: what each imports, and its files (a package's own `__init__.py`
    with the data files outside its subpackages, e.g. `actions/grammars/*.gbnf`)."""

    imports: dict[str, set[str]]
    files: dict[str, list[Path]]
    package_dir: Path


def _module_name(path: Path, package_dir: Path) -> str:
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def code_index(package_dir: Path = PACKAGE_DIR) -> CodeIndex:
    """Every module of the package under `package_dir`: what it imports, and its files."""
    imports: dict[str, set[str]] = {}
    files: dict[str, list[Path]] = {}
    every = [p for p in package_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for path in sorted(every):
        if path.suffix == ".py":
            name = _module_name(path, package_dir)
            imports[name] = mags_imports(path.read_text(encoding="utf-8"))
        else:  # a data file belongs to the nearest package above it
            pkg = next(d for d in path.parents if (d / "__init__.py").is_file() or d == package_dir)
            name = _module_name(pkg / "__init__.py", package_dir)
        files.setdefault(name, []).append(path)
    return CodeIndex(imports, files, package_dir)


def closure(roots: set[str], graph: Mapping[str, set[str]]) -> set[str]:
    """The modules `roots` can load: their imports, transitively, and every parent package."""
    seen: set[str] = set()
    todo = [r for r in roots if r in graph]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        todo += [m for m in graph[name] | parents if m in graph and m not in seen]
    return seen


def code_digest(index: CodeIndex, modules: set[str] | None = None, shape: bool = True) -> str:
    """Hash of these modules' files (None: the whole package). With `shape`, a Python file
    counts by its syntax tree (`mags_lib.code_shape`: comments, docstrings and config help
    strings left out), so that a reworded comment does not re-run hours of notebooks; data files
    and, without `shape` (records written before 2026-12-02), every file count by their bytes."""
    names = index.files if modules is None else modules
    h = hashlib.sha256()
    for path in sorted({f for m in names for f in index.files.get(m, [])}):
        stat = path.stat()
        h.update(str(path.relative_to(index.package_dir)).encode() + b"\0"
                 + _file_body(str(path), stat.st_mtime_ns, stat.st_size, shape))
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=4096)
def _file_body(path: str, mtime_ns: int, size: int, shape: bool) -> bytes:
    """What `code_digest` hashes of one file (cached while the file is unchanged: a plan
    parses each module once, not once per notebook that imports it)."""
    file = Path(path)
    return (code_shape(file.read_text(encoding="utf-8")).encode()
            if shape and file.suffix == ".py" else file.read_bytes())
