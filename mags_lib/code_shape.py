"""What a Python file's code does, with what cannot change a run left out.

    from mags_lib.code_shape import code_shape

    code_shape(path.read_text())   # ast.dump without comments, layout, docstrings, help strings

Two fingerprints count code by its shape rather than its bytes: a training stage's
(`train.resume.training_code_digest`: a checkpoint of other code is not resumed) and a notebook's
(`code_graph.code_digest`: a notebook re-runs when the code it imports changed). Both once
hashed bytes, and a help string reworded on 2026-12-02 retrained notebook 02 from its first step.
"""

from __future__ import annotations

import ast


def code_shape(source: str) -> str:
    """A module's syntax tree without what cannot change a run: comments, layout, docstrings
    and the `"help"` strings of config fields' metadata (`ast.dump`, positions left out). A
    file that does not parse counts by its text.

    >>> code_shape("x = 1  # one") == code_shape('\"\"\"Doc.\"\"\"\\n\\nx = (1)')
    True
    >>> code_shape('f(metadata={"help": "a"})') == code_shape('f(metadata={"help": "b"})')
    True
    >>> code_shape("x = 1") == code_shape("x = 2")
    False
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            body[:1] = [] if len(body) > 1 else [ast.Pass()]
        if isinstance(node, ast.Dict):
            node.values = [ast.Constant("") if isinstance(k, ast.Constant) and k.value == "help"
                           else v for k, v in zip(node.keys, node.values, strict=True)]
    return ast.dump(tree)
