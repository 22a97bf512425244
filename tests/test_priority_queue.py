"""The Updatable and Randomized Priority Queue: order, in-place updates, random pops, batch inserts."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_crawl.agents.priority_queue import UpdatablePQ


def test_pop_order_and_fifo_ties() -> None:
    pq = UpdatablePQ(10)
    for item, p in [(3, 1.0), (5, 2.0), (7, 1.0), (1, 2.0), (2, -1.0)]:
        pq.push(item, p)
    # highest first; equal priorities in insertion order (the thesis' counter)
    assert [pq.pop_max() for _ in range(5)] == [(5, 2.0), (1, 2.0), (3, 1.0), (7, 1.0), (2, -1.0)]
    assert len(pq) == 0 and not pq
    with pytest.raises(IndexError):
        pq.pop_max()


def test_update_in_place_moves_up_and_down() -> None:
    pq = UpdatablePQ(10)
    for i in range(6):
        pq.push(i, float(i))
    pq.update(0, 10.0)          # bottom → top
    pq.check_invariants()
    assert pq.peek() == (0, 10.0)
    pq.update(0, -5.0)          # top → bottom
    pq.check_invariants()
    assert pq.priority(0) == -5.0 and len(pq) == 6
    assert [pq.pop_max()[0] for _ in range(6)] == [5, 4, 3, 2, 1, 0]


def test_remove_discard_contains_and_errors() -> None:
    pq = UpdatablePQ(5)
    pq.push(4, 1.0)
    pq.push(2, 3.0)
    assert 4 in pq and 3 not in pq and 99 not in pq
    assert pq.remove(4) == 1.0
    assert not pq.discard(4)
    with pytest.raises(KeyError):
        pq.remove(4)
    with pytest.raises(KeyError):
        pq.priority(0)
    with pytest.raises(ValueError, match="outside"):
        pq.push(5, 0.0)
    pq.clear()
    assert len(pq) == 0 and 2 not in pq


def test_custom_tie_keys() -> None:
    pq = UpdatablePQ(4)
    pq.push(0, 1.0, tie=0.9)
    pq.push(1, 1.0, tie=0.1)
    pq.push(2, 1.0, tie=0.5)
    assert [pq.pop_max()[0] for _ in range(3)] == [1, 2, 0]


def test_pop_random_is_uniform_and_removes() -> None:
    rng = np.random.default_rng(0)
    counts = np.zeros(8, int)
    for _ in range(4000):
        pq = UpdatablePQ(8)
        pq.push_many(np.arange(8), np.arange(8) * 10.0)
        item, prio = pq.pop_random(rng)
        assert prio == item * 10.0 and item not in pq and len(pq) == 7
        pq.check_invariants()
        counts[item] += 1
    # uniform: each of 8 items ~500 times; a max-biased pop would fail this badly
    assert counts.min() > 400 and counts.max() < 600


def test_sample_random_leaves_item() -> None:
    pq = UpdatablePQ(3)
    pq.push(1, 0.0)
    assert pq.sample_random(np.random.default_rng(1)) == 1 and len(pq) == 1


@pytest.mark.parametrize("n_old,k", [(0, 100), (50, 40), (200, 10), (500, 300)])
def test_push_many_matches_sequential_pushes(n_old: int, k: int) -> None:
    """The vectorized merge (large batches) and the scalar path give the same pop order."""
    rng = np.random.default_rng(n_old + k)
    cap = 1000
    old = rng.choice(cap, n_old, replace=False)
    old_p = rng.integers(0, 20, n_old).astype(float)       # many ties
    batch = rng.choice(cap, k, replace=True)                # duplicates and updates of old items
    batch_p = rng.integers(0, 20, k).astype(float)
    a, b = UpdatablePQ(cap), UpdatablePQ(cap)
    a.push_many(old, old_p)
    for it, p in zip(old.tolist(), old_p.tolist()):
        b.push(it, p)
    a.push_many(batch, batch_p)
    for it, p in zip(batch.tolist(), batch_p.tolist()):
        b.push(it, p)
    a.check_invariants()
    b.check_invariants()
    assert len(a) == len(b)
    assert [a.pop_max() for _ in range(len(a))] == [b.pop_max() for _ in range(len(b))]


def test_push_many_validates() -> None:
    pq = UpdatablePQ(4)
    with pytest.raises(ValueError, match="priorities"):
        pq.push_many([1, 2], [1.0])
    with pytest.raises(ValueError, match="outside"):
        pq.push_many([1, 7], [1.0, 2.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["push", "pop", "rand", "remove"]), st.integers(0, 29),
                          st.integers(-5, 5)), max_size=120))
def test_random_operations_against_a_reference(ops: list[tuple[str, int, int]]) -> None:
    """Any sequence of operations keeps the heap invariants and agrees with a dict reference."""
    pq = UpdatablePQ(30)
    ref: dict[int, tuple[float, int]] = {}   # item -> (priority, counter)
    counter = 0
    rng = np.random.default_rng(0)
    for op, item, p in ops:
        if op == "push":
            pq.push(item, float(p))
            ref[item] = (float(p), counter)
            counter += 1
        elif op == "pop" and ref:
            best = min(ref, key=lambda i: (-ref[i][0], ref[i][1]))
            assert pq.pop_max() == (best, ref.pop(best)[0])
        elif op == "rand" and ref:
            got, prio = pq.pop_random(rng)
            assert ref.pop(got)[0] == prio
        elif op == "remove" and item in ref:
            assert pq.remove(item) == ref.pop(item)[0]
        pq.check_invariants()
        assert len(pq) == len(ref)
        assert sorted(pq.items().tolist()) == sorted(ref)
