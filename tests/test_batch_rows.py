"""The batched step's kept candidate rows: where each row of the new selection was (one merge of the two sorted
selections) and the rows moved in place, against a plain lookup and an out-of-place gather on random inputs."""
from __future__ import annotations

import numpy as np

from gym_crawl.envs.batch_kernels import match_rows, move_rows


def _selection(rng, pages, n):
    """n distinct pages of ``pages`` with float32 keys (ties included), sorted by (key, page)."""
    p = rng.choice(pages, n, replace=False).astype(np.int32)
    k = rng.integers(-6, 0, n).astype(np.float32) / np.float32(4)
    order = np.lexsort((p, k))
    return p[order], k[order]


def test_match_rows_finds_every_kept_row_and_lists_the_rest():
    rng = np.random.default_rng(0)
    for trial in range(300):
        K = int(rng.integers(1, 20))
        universe = rng.choice(200, 60, replace=False)
        n_old, n = int(rng.integers(0, K + 1)), int(rng.integers(0, K + 1))
        old_p, old_k = _selection(rng, universe, n_old)
        new_p, new_k = _selection(rng, universe, n)
        if n and n_old and rng.random() < 0.5:  # keep some old entries, some with a changed key
            keep = rng.random(n_old) < 0.7
            pool = np.concatenate([np.stack([old_k[keep], old_p[keep]], 1),
                                   np.stack([new_k, new_p], 1)])
            _, first = np.unique(pool[:, 1], return_index=True)
            pool = pool[np.sort(first)][:n]
            pool[rng.random(len(pool)) < 0.1, 0] -= 0.25
            order = np.lexsort((pool[:, 1], pool[:, 0]))
            new_k, new_p = pool[order, 0].astype(np.float32), pool[order, 1].astype(np.int32)
            n = len(new_p)
        slots = rng.permutation(256)[:len(new_p)].astype(np.int32)
        tmark = rng.random(256) < 0.2
        src = np.full(K + 1, -9, np.int64)
        fill_idx = np.full(K + 1, -9, np.int64)
        fill_pages = np.full(K + 1, -9, np.int32)
        nfill = match_rows(new_p, new_k, slots, n, old_p.copy(), old_k.copy(), n_old, tmark, src, fill_idx, fill_pages)
        want = np.full(n, -1)
        for j in range(n):
            hit = np.flatnonzero((old_p == new_p[j]) & (old_k == new_k[j]))
            if len(hit) and not tmark[slots[j]]:
                want[j] = hit[0]
        np.testing.assert_array_equal(src[:n], want, err_msg=f"trial {trial}")
        assert nfill == int((want < 0).sum())
        np.testing.assert_array_equal(fill_idx[:nfill], np.flatnonzero(want < 0))
        np.testing.assert_array_equal(fill_pages[:nfill], new_p[want < 0])


def test_move_rows_in_place_equals_a_gather():
    rng = np.random.default_rng(1)
    for trial in range(300):
        K, d = int(rng.integers(1, 70)), int(rng.integers(1, 30))
        n = int(rng.integers(0, K + 1))
        f = rng.standard_normal((K, d)).astype(np.float32)
        kept = np.sort(rng.choice(K, int(rng.integers(0, n + 1)), replace=False))  # increasing old positions
        at = np.sort(rng.choice(n, len(kept), replace=False)) if n else np.zeros(0, np.int64)
        src = np.full(K + 1, -1, np.int64)
        src[at] = kept
        want = f.copy()
        want[at] = f[kept]
        doms = rng.integers(0, 1000, K).astype(np.int32)  # the rows' domains, moved with them
        want_doms = doms.copy()
        want_doms[at] = doms[kept]
        move_rows(f, src, n, doms)
        np.testing.assert_array_equal(f, want, err_msg=f"trial {trial}")
        np.testing.assert_array_equal(doms, want_doms, err_msg=f"trial {trial}")
        g = rng.standard_normal((K, d)).astype(np.float32)  # without domains: the rows alone
        want_g = g.copy()
        want_g[at] = g[kept]
        move_rows(g, src, n)
        np.testing.assert_array_equal(g, want_g, err_msg=f"trial {trial}")


def test_move_rows_of_shifted_selections_equal_a_gather():
    """The usual step: an entry left the selection (the rows after it move forward by one) or joined it (the rows
    after it move back), a few of each — long runs of consecutive sources, moved as blocks."""
    rng = np.random.default_rng(2)
    for trial in range(300):
        K, d = 64, int(rng.integers(1, 30))
        n = int(rng.integers(1, K + 1))
        old = list(range(n))
        new: list[int] = old.copy()
        for _ in range(int(rng.integers(1, 4))):  # entries leave (kept rows shift) and new ones (-1) join
            if new and rng.random() < 0.5:
                new.pop(int(rng.integers(len(new))))
            else:
                new.insert(int(rng.integers(len(new) + 1)), -1)
        new = new[:n]
        src = np.full(K + 1, -1, np.int64)
        src[:len(new)] = new
        f = rng.standard_normal((K, d)).astype(np.float32)
        doms = rng.integers(0, 1000, K).astype(np.int32)
        at = np.flatnonzero(src[:n] >= 0)
        want, want_doms = f.copy(), doms.copy()
        want[at] = f[src[at]]
        want_doms[at] = doms[src[at]]
        move_rows(f, src, n, doms)
        np.testing.assert_array_equal(f, want, err_msg=f"trial {trial}")
        np.testing.assert_array_equal(doms, want_doms, err_msg=f"trial {trial}")
