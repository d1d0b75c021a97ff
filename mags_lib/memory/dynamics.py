"""Pure rules of the graph's dynamics: decay, Hebbian and reward updates, solidification,
importance and (capped) k-core numbers. Plain numbers and NumPy arrays in, numbers out; the
passes that apply them to a `LiquidMemory` live in `maintenance.py`.

Decay with a recency correction. An edge last used at step u decays, at step n, at the rate
``decay_rate * f(n - u)`` with ``f(s) = s / (s + h)``: an edge used a moment ago barely decays,
one unused for much longer than h decays at the full rate. Integrating f gives
``F(s) = s - h * ln(1 + s / h)``, so between steps t and n an edge keeps the fraction
``exp(-decay_rate * (F(n - u) - F(t - u)))`` of its weight. The integral composes exactly
(decaying t -> m -> n equals decaying t -> n), which is what lets the memory apply decay
lazily: an edge stores its weight as of step `t` and the weight at any later step is computed
when it is read, without a pass over all edges every step.

>>> round(decayed_weight(0.5, t=0, used=0, now=100, rate=0.01, h=20.0), 4)
0.2632
>>> hebbian_update(0.5, 0.1)
0.55
"""

from __future__ import annotations

import math

import numpy as np

from mags_lib.errors import MagsError


def recency_integral(s: float, h: float) -> float:
    """F(s) = integral of s' / (s' + h) over [0, s]: the decay 'clock' of an edge unused s steps."""
    s = max(float(s), 0.0)
    return s - h * math.log1p(s / h)


def decayed_weight(w: float, t: int, used: int, now: int, rate: float, h: float,
                   solid: bool = False) -> float:
    """Weight at step `now` of an edge that had weight `w` at step `t` and was last used at
    `used` (<= t). Solid edges do not decay. Always in (0, w] for w > 0."""
    if solid or rate == 0.0 or now <= t:
        return w
    exponent = rate * (recency_integral(now - used, h) - recency_integral(t - used, h))
    return w * math.exp(-exponent)


def decayed_weights(w: np.ndarray, t: np.ndarray, used: np.ndarray, now: int, rate: float,
                    h: float, solid: np.ndarray) -> np.ndarray:
    """Vectorised `decayed_weight` over arrays of edges."""
    w = np.asarray(w, dtype=np.float64)
    s_now = np.maximum(now - np.asarray(used, dtype=np.float64), 0.0)
    s_then = np.maximum(np.asarray(t, dtype=np.float64) - used, 0.0)
    clock = (s_now - h * np.log1p(s_now / h)) - (s_then - h * np.log1p(s_then / h))
    out = w * np.exp(-rate * np.maximum(clock, 0.0))
    return np.where(np.asarray(solid, dtype=bool), w, out)


def hebbian_update(w: float, rate: float) -> float:
    """Fire together, wire together: move w towards 1 by `rate` of the remaining gap.
    Bounded: the result stays in (w, 1] for w in (0, 1] and rate in [0, 1]."""
    return min(1.0, w + rate * (1.0 - w))


def check_reward(reward: object) -> float | None:
    """A step's reward as a float: None (no feedback) or a finite number in [-1, 1]; anything
    else raises MagsError (a reward is never clipped silently: +5 is a caller's bug).

    >>> check_reward(1), check_reward(None)
    (1.0, None)
    """
    if reward is None:
        return None
    ok = isinstance(reward, int | float | np.integer | np.floating) and not isinstance(
        reward, bool | np.bool_)
    if not ok or not (-1.0 <= float(reward) <= 1.0):  # NaN fails the comparison too
        raise MagsError(f"reward must be None or a finite number in [-1, 1], got {reward!r}",
                        "map the feedback onto [-1, 1] (e.g. 2 * score - 1 for a 0/1 score)")
    return float(reward)


def reward_update(w: float, reward: float, rate: float, floor: float = 1e-6) -> float:
    """Reinforce (reward > 0) or weaken (reward < 0) an edge on a path that led to an answer.

    reward is clipped to [-1, 1] (`LiquidMemory.step` refuses one outside it: see
    `check_reward`); positive: w + rate*r*(1-w) (<= 1); negative: w * (1 + rate*r),
    multiplicative so the weight stays > 0 (pruning removes it later if it falls low enough)."""
    r = max(-1.0, min(1.0, float(reward)))
    if r >= 0:
        return min(1.0, w + rate * r * (1.0 - w))
    return max(floor, w * (1.0 + rate * r))


def should_solidify(w: float, threshold: float) -> bool:
    """An edge this strong has proven itself: it stops decaying and is never pruned."""
    return w >= threshold


def node_importance(strength: np.ndarray, degree: np.ndarray, uses: np.ndarray,
                    core: np.ndarray, base: np.ndarray, *, w_strength: float, w_degree: float,
                    w_use: float, w_core: float, w_base: float, core_k: int) -> np.ndarray:
    """Importance in [0, sum of weights]: saturating terms of weighted degree (strength),
    degree (= out-degree in an undirected graph), uses and k-core membership, plus the
    importance the node was written with."""
    core_term = np.minimum(np.asarray(core, dtype=np.float64) / max(core_k, 1), 1.0)
    return (w_strength * np.tanh(np.asarray(strength, dtype=np.float64) / 2.0)
            + w_degree * np.tanh(np.asarray(degree, dtype=np.float64) / 8.0)
            + w_use * np.tanh(np.asarray(uses, dtype=np.float64) / 5.0)
            + w_core * core_term
            + w_base * np.clip(np.asarray(base, dtype=np.float64), 0.0, 1.0))


def capped_core_numbers(n: int, rows: np.ndarray, cols: np.ndarray, kmax: int) -> np.ndarray:
    """min(core number, kmax) of every node 0..n-1 of the undirected graph with edges
    (rows[i], cols[i]) (each edge once, no self-loops).

    Peels nodes of degree < k for k = 1..kmax with a work queue, touching only the peeled
    nodes' edges, so a well-connected graph costs O(n + E) NumPy and little Python."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    core = np.full(n, kmax, dtype=np.int64)
    if n == 0 or kmax <= 0:
        return np.zeros(n, dtype=np.int64)
    both_r = np.concatenate([rows, cols])
    both_c = np.concatenate([cols, rows])
    order = np.argsort(both_r, kind="stable")
    indices = both_c[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(both_r, minlength=n), out=indptr[1:])
    degree = np.diff(indptr).tolist()
    alive = [True] * n
    left = n
    for k in range(1, kmax + 1):
        if left == 0:  # every node peeled: the cores are final (a huge kmax costs nothing)
            break
        queue = [i for i in np.flatnonzero(np.asarray(degree) < k).tolist() if alive[i]]
        queued = set(queue)
        while queue:
            node = queue.pop()
            alive[node] = False
            left -= 1
            core[node] = k - 1
            for other in indices[indptr[node]:indptr[node + 1]].tolist():
                if alive[other]:
                    degree[other] -= 1
                    if degree[other] < k and other not in queued:
                        queued.add(other)
                        queue.append(other)
    return core
