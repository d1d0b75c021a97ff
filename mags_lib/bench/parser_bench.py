"""`python -m mags_lib.bench parser`: `parse_actions` on adversarial texts of a given size.

Each shape in `SHAPES` builds a text of about `size` characters from one repeated unit (a model
that loops writes such texts); every shape and size is parsed `repeats` times and the best wall
time is kept. `growth` is the time per character at the largest size over that at the smallest:
about 1 for a linear parser, about (largest / smallest) for a quadratic one.

    from mags_lib.bench.parser_bench import adversarial_text
    text = adversarial_text("opens_then_mismatched_closes", 100_000)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from mags_lib.bench import PARSER_TARGETS
from mags_lib.bench.timing import machine_info


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda size: unit * max(1, size // len(unit))


def _halves(first: str, second: str) -> Callable[[int], str]:
    return lambda size: _repeat(first)(size // 2) + _repeat(second)(size // 2)


def _inside(unit: str) -> Callable[[int], str]:
    return lambda size: "<recall>\n" + _repeat(unit)(size - 20) + "</recall>"


SHAPES: dict[str, Callable[[int], str]] = {
    # tag structure: the text outside blocks is never parsed, so these cost little per byte
    "opens_then_mismatched_closes": _halves("<recall>", "</engram>"),
    "mismatched_closes": _repeat("</engram>"),
    "deep_nesting": _halves("<recall>", "</recall>"),
    "deep_nesting_lines": _halves("<recall>\n", "</recall>\n"),
    "alternating_tags": _repeat("<recall></engram><engram></recall>"),
    "empty_blocks": _repeat("<recall></recall>"),
    "single_line": lambda size: "<recall>query: " + "x" * max(1, size - 24) + "</recall>",
    "lt_line": _repeat("<"),
    "query_lines_no_block": _repeat("query: glarb\n"),
    # lines inside a block: each one is parsed, so the cost is per line (and per action)
    "query_lines_in_block": _inside("query: glarb\n"),
    "garbage_lines_in_block": _inside("x\n"),
}
"""Shape name -> function of the size (characters) that builds the text."""


@dataclass
class ParserBenchConfig:
    sizes: list[int] = field(default_factory=lambda: [100_000, 1_000_000],
                             metadata={"help": "text sizes in characters, one run each"})
    shapes: list[str] = field(default_factory=lambda: list(SHAPES),
                              metadata={"help": "names of SHAPES to time"})
    repeats: int = field(default=3, metadata={"help": "parses per shape and size; best kept"})


def adversarial_text(shape: str, size: int) -> str:
    """The text of `shape` (a key of SHAPES) with about `size` characters."""
    return SHAPES[shape](size)


def best_parse_ms(text: str, repeats: int) -> float:
    """The best of `repeats` wall times of `parse_actions(text)`, in milliseconds."""
    from mags_lib.actions import parse_actions

    best = float("inf")
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        parse_actions(text)
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def bench_parser(cfg: ParserBenchConfig) -> dict:
    unknown = sorted(set(cfg.shapes) - set(SHAPES))
    if unknown:
        from mags_lib.errors import MagsError

        raise MagsError(f"unknown parser shapes {unknown}", f"use some of {list(SHAPES)}")
    sizes = sorted(cfg.sizes)
    ms = {shape: {n: best_parse_ms(adversarial_text(shape, n), cfg.repeats) for n in sizes}
          for shape in cfg.shapes}
    growth = {shape: (t[sizes[-1]] / sizes[-1]) / max(t[sizes[0]] / sizes[0], 1e-12)
              for shape, t in ms.items()} if len(sizes) > 1 else {}
    at_1mb = {shape: t[n] for shape, t in ms.items() for n in sizes if n == 1_000_000}
    return {"benchmark": "parser", "config": asdict(cfg), "machine": machine_info(),
            "targets": PARSER_TARGETS,
            "meets_targets": {
                "ms_at_1mb": {s: v <= PARSER_TARGETS["ms_at_1mb_max"] for s, v in at_1mb.items()},
                "linear": {s: g <= PARSER_TARGETS["growth_max"] for s, g in growth.items()}},
            "results": [{"size": n, "ms": {shape: t[n] for shape, t in ms.items()}}
                        for n in sizes],
            "growth": growth}
