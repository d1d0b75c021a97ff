"""Paired comparison of two models judged on the same rows, with a bootstrap interval.

    gain = paired_gain(sft_hits, grpo_hits, groups=[r["game_seed"] for r in rows])
    gain["gain"], gain["ci"], gain["groups_b_ahead"]

A rate here is pooled: `sum(numerator) / sum(denominator)` over rows (per query: hits over
queries; per block: 1 if any query hit, over 1). Both models are judged on the same rows, so
the interval resamples rows (or whole groups of rows, e.g. the game each row came from: rows of
one game share rules and are not independent) and recomputes both rates on each resample: the
difference's spread then reflects which rows were drawn, not the two models' separate noise.
With few groups (val and test come from 8 games each) a group bootstrap is coarse; the count of
groups where each model is ahead says the same thing without a resampling assumption.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

Pair = tuple[float, float]  # (numerator, denominator) of one row


def hits_to_pairs(per_row: Sequence[Sequence[bool] | None], per_query: bool) -> list[Pair | None]:
    """Per-row query hits (`rewards.query_hits`) as (numerator, denominator) pairs: per query
    (hits, queries) or per block (any hit, 1). None rows (no gold) stay None; a block with no
    query is a miss of one query (per query) and a miss (per block), so an empty block is
    never free.

    >>> hits_to_pairs([[True, False], [], None], per_query=True)
    [(1.0, 2.0), (0.0, 1.0), None]
    >>> hits_to_pairs([[True, False], [], None], per_query=False)
    [(1.0, 1.0), (0.0, 1.0), None]
    """
    out: list[Pair | None] = []
    for h in per_row:
        if h is None:
            out.append(None)
        elif per_query:
            out.append((float(sum(h)), float(max(1, len(h)))))
        else:
            out.append((float(any(h)), 1.0))
    return out


def _rate(pairs: Sequence[Pair]) -> float:
    den = sum(d for _, d in pairs)
    return sum(n for n, _ in pairs) / den if den else 0.0


def paired_gain(a: Sequence[Pair | None], b: Sequence[Pair | None],
                groups: Sequence[Hashable] | None = None, n_boot: int = 2000, seed: int = 0,
                level: float = 0.95) -> dict[str, Any]:
    """Pooled rate of `a` and of `b` on the rows both score, `gain` = b - a, and a paired
    bootstrap interval of the gain at `level` (rows resampled; whole groups when `groups`,
    one label per row, is given). Also the rows where b is ahead / behind (its per-row rate
    above / below a's) and, with groups, the groups where b's rate is ahead / behind.

    >>> a = [(0.0, 1.0)] * 10 + [(1.0, 1.0)] * 30
    >>> b = [(1.0, 1.0)] * 40
    >>> g = paired_gain(a, b, n_boot=500)
    >>> g["a"], g["b"], g["gain"], g["rows_b_ahead"], g["rows_b_behind"]
    (0.75, 1.0, 0.25, 10, 0)
    >>> 0.1 < g["ci"][0] < 0.25 < g["ci"][1] + 1e-9
    True
    >>> paired_gain(a, a, n_boot=100)["ci"]
    [0.0, 0.0]
    """
    import numpy as np

    if len(a) != len(b) or (groups is not None and len(groups) != len(a)):
        raise ValueError(f"paired_gain needs one entry per row in each of a, b (and groups): "
                         f"got {len(a)}, {len(b)}"
                         f"{'' if groups is None else f', {len(groups)}'}")
    keep = [i for i in range(len(a)) if a[i] is not None and b[i] is not None]
    if not keep:
        raise ValueError("paired_gain: no row is scored for both models")
    pa = np.array([a[i] for i in keep], dtype=float)
    pb = np.array([b[i] for i in keep], dtype=float)
    labels = [groups[i] for i in keep] if groups is not None else list(range(len(keep)))
    names = sorted(set(labels), key=str)
    index = {g: j for j, g in enumerate(names)}
    member = np.array([index[g] for g in labels])
    # per-group sums: a resample of groups is a weighted sum of these
    sums = np.zeros((len(names), 4))
    np.add.at(sums, member, np.column_stack([pa, pb]))
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(len(names), [1 / len(names)] * len(names), size=n_boot)
    tot = draws @ sums
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = tot[:, 2] / tot[:, 3] - tot[:, 0] / tot[:, 1]
    boot = boot[np.isfinite(boot)]
    tail = (1 - level) / 2
    lo, hi = np.quantile(boot, [tail, 1 - tail])
    rate_a, rate_b = _rate(pa.tolist()), _rate(pb.tolist())
    row_a, row_b = pa[:, 0] / pa[:, 1], pb[:, 0] / pb[:, 1]
    out = {"a": rate_a, "b": rate_b, "gain": rate_b - rate_a,
           "ci": [float(lo), float(hi)], "level": level, "n_boot": n_boot,
           "resampled": "groups" if groups is not None else "rows", "rows": len(keep),
           "rows_b_ahead": int((row_b > row_a).sum()), "rows_b_behind": int((row_b < row_a).sum())}
    if groups is not None:
        ga, gb = sums[:, 0] / sums[:, 1], sums[:, 2] / sums[:, 3]
        out.update(groups=len(names), groups_b_ahead=int((gb > ga).sum()),
                   groups_b_behind=int((gb < ga).sum()))
    return out
