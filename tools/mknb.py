"""Build a committed notebook (no outputs) from a percent-format script.

    python tools/mknb.py notebooks/src/05_graph_dynamics.py notebooks/05_graph_dynamics.ipynb

Cells are separated by lines starting with `# %%`; `# %% [markdown]` starts a markdown cell whose
lines drop their leading `# `. The first code cell is tagged `parameters` for papermill.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat


def build(src: Path, dst: Path) -> None:
    cells, kind, buf = [], None, []

    def flush():
        if kind is None:
            return
        text = "\n".join(buf).strip("\n")
        if kind == "markdown":
            text = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                             for line in text.splitlines())
            cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            cells.append(nbformat.v4.new_code_cell(text))

    for line in src.read_text().splitlines():
        if line.startswith("# %%"):
            flush()
            kind, buf = ("markdown" if "[markdown]" in line else "code"), []
        else:
            buf.append(line)
    flush()
    first_code = next(c for c in cells if c.cell_type == "code")
    first_code.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, dst)


if __name__ == "__main__":
    build(Path(sys.argv[1]), Path(sys.argv[2]))
