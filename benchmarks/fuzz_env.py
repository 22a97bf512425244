"""Random-action fuzz of the env API: every registered reducer × feature set × reward × action mode, with the
env's invariants checked after every reset and step.

``gym-crawl bench fuzz_env [--steps 100000] [--corpus synthetic-1000] [--seed 0] [--out FILE]``

Each configuration (``WikiCrawl-v1`` with one reducer, feature set, reward and action mode; page mode
alternates between the ``candidates`` and ``state`` observations) runs random episodes until its share of
``--steps`` is spent. Actions are drawn at random among the valid ones most of the time and, otherwise,
anywhere in the action space (masked slots, non-frontier pages: the env's invalid-action path). The
invariants (:data:`INVARIANTS`) are checked after every reset and step; the first episode of each
configuration is replayed with the same seed and actions and must give the same trajectory. A
configuration the env refuses at construction (an error naming why) is listed, not fuzzed. Prints (and
with ``--out`` writes) a JSON summary: steps, episodes, configurations fuzzed and refused, and any
violation (none expected: the command exits 1 on one).
"""
from __future__ import annotations

import itertools
import json
import math
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser

INVARIANTS = (
    "info['reward_sum'] equals the reset's reward_sum plus the sum of the rewards step returned",
    "pages_fetched and relevant_found never decrease within an episode; steps counts the steps",
    "no non-finite number in any observation, reward or info value; observations lie in the observation space",
    ("the mask equals the frontier: slot mode, mask / action_mask / candidate_ids >= 0 agree and every candidate "
     "is a frontier page; page mode, action_masks() marks exactly frontier_pages()"),
    "no page is fetched twice in an episode (fetched_page is new, fetched_pages() holds no repeat)",
    "same seed and actions => the same trajectory (rewards, fetched pages, observations)",
)


class InvariantError(AssertionError):
    """An env invariant failed (the message names the invariant, the configuration and the step)."""


def _finite(x: Any) -> bool:
    if isinstance(x, dict):
        return all(_finite(v) for v in x.values())
    if isinstance(x, (bool, str, np.bool_)) or x is None:
        return True
    a = np.asarray(x)
    return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise InvariantError(what)


def check_transition(env: Any, obs: Any, info: dict, prev: dict | None, reward: float | None,
                     total: float, seen: set[int]) -> None:
    """Check every per-step invariant of :data:`INVARIANTS` (all but replay) on ``env`` after a reset
    (``prev=None``) or a step; ``total`` is the expected reward_sum, ``seen`` the pages fetched so far (updated)."""
    u = env.unwrapped
    _check(_finite(obs) and _finite(info) and (reward is None or math.isfinite(reward)),
           f"non-finite value (reward {reward!r}, info {info})")
    _check(u.observation_space.contains(obs), "observation outside the observation space")
    _check(abs(info["reward_sum"] - total) <= 1e-9 * max(1.0, abs(total)),
           f"reward_sum {info['reward_sum']!r} != sum of returned rewards {total!r}")
    if prev is not None:
        _check(info["pages_fetched"] >= prev["pages_fetched"] and info["relevant_found"] >= prev["relevant_found"],
               f"pages_fetched/relevant_found decreased: {prev['pages_fetched']}->{info['pages_fetched']}, "
               f"{prev['relevant_found']}->{info['relevant_found']}")
        _check(info["steps"] == prev["steps"] + 1, f"steps {prev['steps']} -> {info['steps']}")
    page = int(info["fetched_page"])
    if page >= 0:
        _check(page not in seen, f"page {page} fetched twice")
        seen.add(page)
    fetched = u.view.fetched_pages()
    _check(len(np.unique(fetched)) == len(fetched) == info["pages_fetched"], "fetched_pages() repeats a page")
    frontier = np.sort(np.asarray(u.view.frontier_pages()))
    _check(info["frontier_size"] == len(frontier), "frontier_size differs from frontier_pages()")
    _check(not np.isin(frontier, fetched).any(), "a fetched page is still in the frontier")
    if u.action_mode == "slot":
        ids = info["candidate_ids"]
        m = u.action_masks()
        _check(np.array_equal(m, ids >= 0) and np.array_equal(info["action_mask"], m), "slot masks disagree")
        if isinstance(obs, dict):
            _check(np.array_equal(obs["mask"].astype(bool), m), "obs['mask'] differs from action_masks()")
        cand = ids[ids >= 0]
        _check(len(np.unique(cand)) == len(cand) and bool(np.all(u.view.is_frontier(cand))),
               "a candidate slot holds a non-frontier page or a repeat")
    else:
        _check(np.array_equal(np.flatnonzero(u.action_masks()), frontier), "page mask differs from the frontier")


def _actions(env: Any, rng: np.random.Generator, p_invalid: float) -> int:
    u = env.unwrapped
    n = int(u.action_space.n)
    if rng.random() < p_invalid:
        return int(rng.integers(n))
    valid = np.flatnonzero(u.action_masks())
    return int(rng.choice(valid)) if len(valid) else int(rng.integers(n))


def run_episode(env: Any, seed: int, rng: np.random.Generator | None = None, actions: Sequence[int] | None = None,
                max_steps: int = 10**9, p_invalid: float = 0.15) -> tuple[list[int], list[Any]]:
    """One checked episode: ``actions`` replayed, else drawn with ``rng``. Returns the actions taken and the
    trajectory (rewards, fetched pages, observations) for the replay check."""
    obs, info = env.reset(seed=seed)
    total = float(info["reward_sum"])
    seen = {int(p) for p in env.unwrapped.view.fetched_pages()}
    check_transition(env, obs, info, None, None, total, set())
    taken: list[int] = []
    traj: list[Any] = [obs]
    for t in range(max_steps if actions is None else len(actions)):
        a = int(actions[t]) if actions is not None else _actions(env, rng, p_invalid)  # type: ignore[arg-type]
        nobs, r, term, trunc, ninfo = env.step(a)
        total += float(r)
        check_transition(env, nobs, ninfo, info, float(r), total, seen)
        taken.append(a)
        traj += [float(r), int(ninfo["fetched_page"]), nobs]
        obs, info = nobs, ninfo
        if term or trunc:
            break
    return taken, traj


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and np.array_equal(a, b)
    return bool(a == b)


def configurations() -> Iterator[dict[str, Any]]:
    """Every registered reducer × feature set × reward × action mode (page mode alternates the observation)."""
    from gym_crawl.features import FEATURE_SETS
    from gym_crawl.reducers import REDUCERS
    from gym_crawl.relevance import REWARDS

    for i, (feat, red, rew, act) in enumerate(itertools.product(FEATURE_SETS.names(), REDUCERS.names(),
                                                                 REWARDS.names(), ("slot", "page"))):
        obs = "candidates" if act == "slot" or i % 4 == 1 else "state"
        yield {"features": feat, "reducer": red, "reward": rew, "action": act, "observation": obs}


def fuzz(corpus: Any, total_steps: int, seed: int = 0, max_episode_steps: int = 60, k: int = 16,
         configs: Sequence[dict[str, Any]] | None = None, progress: bool = True) -> dict[str, Any]:
    """Fuzz ``configs`` (default: :func:`configurations`) for ``total_steps`` steps in all; returns the summary."""
    from gym_crawl.wrappers.factory import make_env

    configs = list(configurations() if configs is None else configs)
    per = max(1, math.ceil(total_steps / len(configs)))
    out: dict[str, Any] = {"steps": 0, "episodes": 0, "replays": 0, "fuzzed": 0, "refused": {}, "violations": [],
                           "invariants": list(INVARIANTS), "configurations": len(configs)}
    t0 = time.perf_counter()
    for ci, cfg in enumerate(configs):
        name = "/".join(f"{cfg[k_]}" for k_ in ("features", "reducer", "reward", "action", "observation"))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                env = make_env("WikiCrawl-v1", corpus=corpus, max_episode_steps=max_episode_steps, max_candidates=k,
                               **cfg)
                env.reset(seed=seed)
        except (ValueError, KeyError, TypeError) as e:
            out["refused"][name] = f"{type(e).__name__}: {e}"
            continue
        out["fuzzed"] += 1
        rng = np.random.default_rng([seed, ci])
        done, ep = 0, 0
        try:
            while done < per:
                s = int(rng.integers(2**31))
                taken, traj = run_episode(env, s, rng, max_steps=per - done)
                if ep == 0:  # same seed and actions on a fresh env: the same trajectory
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        again = make_env("WikiCrawl-v1", corpus=corpus, max_episode_steps=max_episode_steps,
                                         max_candidates=k, **cfg)
                    _, traj2 = run_episode(again, s, actions=taken)
                    if not _same(traj, traj2):
                        raise InvariantError("same seed and actions gave another trajectory")
                    out["replays"] += 1
                done += len(taken)
                ep += 1
        except InvariantError as e:
            out["violations"].append({"config": name, "episode": ep, "error": str(e)})
        out["steps"] += done
        out["episodes"] += ep
        if progress:
            print(f"[{ci + 1}/{len(configs)}] {name}: {done} steps, {ep} episodes "
                  f"({out['steps']:,} steps, {time.perf_counter() - t0:.0f} s)", flush=True)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench fuzz_env", description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100_000, help="env steps in all, shared by the configurations")
    ap.add_argument("--corpus", default="synthetic-1000", help="corpus (small: many episodes end on an empty frontier)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="also write the JSON summary to this file")
    args = ap.parse_args(argv)
    if args.steps < 1:
        raise SystemExit(f"--steps must be >= 1, got {args.steps}")
    from gym_crawl.corpus import load_corpus

    res = fuzz(load_corpus(args.corpus), args.steps, seed=args.seed)
    res["corpus"] = args.corpus
    text = json.dumps(res, indent=2)
    print(text)
    if args.out is not None:
        from gym_crawl._io import atomic_write_bytes

        atomic_write_bytes(args.out, text.encode())
    return 1 if res["violations"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
