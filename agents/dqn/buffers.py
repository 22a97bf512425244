"""Storage of the DDQN crawlers (:mod:`gym_crawl.agents.dqn.tres`): the replay buffer with ragged bootstrap
sets, and the max segment tree holding TRES_Async's stale frontier priorities."""
from __future__ import annotations

import numpy as np

__all__ = ["ReplayBuffer", "MaxSegmentTree"]


class ReplayBuffer:
    """Experience replay of ``(x, r, done, rows of Ã_{t+1})`` with ragged bootstrap sets.

    Transitions live in a ring of ``capacity`` entries; their bootstrap rows in a second ring of
    ``row_capacity`` rows, written contiguously. When the row ring wraps over an old transition's
    rows, that transition becomes invalid (``owner`` check) and is dropped from the sampling window
    (the oldest transitions go first). Memory: ``capacity·(d+3) + row_capacity·(d+1)`` numbers.
    """

    def __init__(self, dim: int, capacity: int, row_capacity: int):
        if capacity < 1 or row_capacity < 1:
            raise ValueError("replay capacities must be >= 1")
        self.dim, self.capacity, self.row_capacity = dim, int(capacity), int(row_capacity)
        self.X = np.zeros((capacity, dim), np.float32)
        self.R = np.zeros(capacity, np.float32)
        self.D = np.zeros(capacity, np.float32)
        self.S = np.zeros(capacity, np.int64)
        self.L = np.zeros(capacity, np.int64)
        self.serial = np.full(capacity, -1, np.int64)
        self.rows = np.zeros((row_capacity, dim), np.float32)
        self.owner = np.full(row_capacity, -1, np.int64)
        self.added = 0
        self.tail = 0
        self.head_row = 0

    def __len__(self) -> int:
        return self.added - self.tail

    def add(self, x: np.ndarray, r: float, done: bool, next_rows: np.ndarray) -> None:
        n = len(next_rows)
        if n > self.row_capacity:
            raise ValueError(f"bootstrap set of {n} rows exceeds the row capacity {self.row_capacity}")
        s = self.added
        if self.head_row + n > self.row_capacity:
            self.head_row = 0
        h = self.head_row
        self.rows[h:h + n] = next_rows
        self.owner[h:h + n] = s
        i = s % self.capacity
        self.X[i], self.R[i], self.D[i], self.S[i], self.L[i], self.serial[i] = x, r, float(done), h, n, s
        self.head_row = h + n
        self.added += 1
        self.tail = max(self.tail, self.added - self.capacity)
        while self.tail < self.added and not self._valid(np.asarray([self.tail]))[0]:
            self.tail += 1

    def _valid(self, ser: np.ndarray) -> np.ndarray:
        i = ser % self.capacity
        ok = self.serial[i] == ser
        n = self.L[i]
        s = self.S[i]
        has = n > 0
        ok[has] &= (self.owner[s[has]] == ser[has]) & (self.owner[s[has] + n[has] - 1] == ser[has])
        return ok

    def sample(self, batch: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """``(x (B,d), r (B,), done (B,), rows (M,d), segment (M,))``; ``segment[j]`` is the batch index
        of bootstrap row ``j``."""
        ser = rng.integers(self.tail, self.added, size=batch)
        ok = self._valid(ser)
        while not ok.all():  # rare: rows overwritten inside the window
            ser[~ok] = rng.integers(self.tail, self.added, size=int((~ok).sum()))
            ok = self._valid(ser)
        i = ser % self.capacity
        lens, starts = self.L[i], self.S[i]
        M = int(lens.sum())
        seg = np.repeat(np.arange(batch), lens)
        off = np.arange(M) - np.repeat(np.cumsum(lens) - lens, lens)
        rows = self.rows[np.repeat(starts, lens) + off]
        return self.X[i], self.R[i], self.D[i], rows, seg


# ============================================================================ async priorities
class MaxSegmentTree:
    """Max over ``n`` float priorities (``-inf`` = absent) with vectorized batch updates.

    ``update(items, values)`` costs O(k · log n) in ``log n`` vectorized levels; ``argmax()`` is an
    O(log n) descent (ties → the lowest item id)."""

    def __init__(self, n: int):
        self.n = int(n)
        self.size = 1 << max(1, int(np.ceil(np.log2(max(2, self.n)))))
        self.t = np.full(2 * self.size, -np.inf, np.float64)

    def clear(self) -> None:
        self.t.fill(-np.inf)

    def update(self, items: np.ndarray, values: np.ndarray) -> None:
        items = np.asarray(items, np.int64)
        if len(items) == 0:
            return
        idx = items + self.size
        self.t[idx] = values
        idx = np.unique(idx >> 1)
        t = self.t
        while True:
            t[idx] = np.maximum(t[2 * idx], t[2 * idx + 1])
            if idx[0] == 1:
                break
            idx = np.unique(idx >> 1)

    def max(self) -> float:
        return float(self.t[1])

    def argmax(self) -> int:
        """Item of the largest priority (-1 when all are absent)."""
        if self.t[1] == -np.inf:
            return -1
        t, i = self.t, 1
        while i < self.size:
            i = 2 * i if t[2 * i] >= t[2 * i + 1] else 2 * i + 1
        return i - self.size

    def get(self, items: np.ndarray) -> np.ndarray:
        return self.t[np.asarray(items, np.int64) + self.size]
