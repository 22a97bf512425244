"""The golden runs, in one place: what ``tests/golden/record.py`` records and ``tests/test_golden.py`` /
``tests/test_golden_crawl.py`` replay.

* **env runs** — one per reducer x feature set on ``make_tiny_corpus()``: topic "cancer", K = 16, 40 steps,
  random valid slots drawn by ``np.random.default_rng(3)`` from the action mask, env seeded 3; fetched
  pages, rewards and the sha256 of every observation's candidate rows + mask;
* **agent runs** — every agent family on ``make_tiny_corpus()`` (topic "geology") and four on the
  ``synthetic-2000`` corpus, episodes seeded 0, 1, … with one agent object (learners keep their weights).

Everything the env and the NumPy / numba agents compute is the package's own fixed-order arithmetic
(``gym_crawl._arith``), so their replay is exact, bit for bit, on any x86-64 CPU and thread count. The
PyTorch agents (:data:`TOLERANT`) are the exception: PyTorch's kernels round by CPU capability and thread
count, so their Q-values differ in the last bits between machines and a near-tie can flip. **Tie rule:** their
runs record, for every step, the action and the agent's ``last_margin`` (the chosen Q-value minus the best
other); a replay passes a step where the agent picks another action only when the recorded margin is below
:data:`TIE_MARGIN`, and then continues from the recorded action (``Agent.overrule``), so everything after it —
fetched pages, rewards, further decisions — is still checked.
"""
from __future__ import annotations

import hashlib
from typing import Any

import gymnasium as gym
import numpy as np

import gym_crawl  # noqa: F401  (registers the env ids)

#: agents whose arithmetic is PyTorch's: replayed under the tie rule
TOLERANT = frozenset({"tres", "tres-async"})
#: a recorded Q-value margin below this is a near-tie: the replay may choose either action. PyTorch's float32
#: Q-values of these small networks differed by at most 2.4e-6 between CPU capabilities (AVX-512 vs
#: ATEN_CPU_CAPABILITY=default) over ~1,000 steps of tres and tres-async.
TIE_MARGIN = 1e-4

AGENT_RUNS = [  # (agent, env overrides, episodes, steps)
    ("random", {}, 1, 60), ("bfs", {}, 1, 60), ("best-first", {}, 1, 60), ("oracle", {}, 1, 60),
    ("lfa-sync", {}, 2, 60), ("lfa-async", {}, 2, 60), ("lfa-moderated", {}, 2, 60),
    ("thesis-lfa", {}, 2, 60), ("td-lambda", {}, 2, 40), ("tres", {"max_candidates": 256}, 2, 60),
    ("tres-async", {}, 2, 60), ("tree-random", {"max_candidates": 256}, 1, 60),
]
SYNTHETIC_CORPUS = "synthetic-2000"
SYNTHETIC_RUNS = [("random", {}, 1, 80), ("best-first", {}, 1, 80), ("lfa-async", {}, 2, 80),
                  ("tres", {"max_candidates": 256}, 1, 80)]
ENV_RUNS = [(r, f) for r in ("topk", "outlinks", "random", "full", "tree") for f in ("combined", "han2018", "tres")]


def digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


# ------------------------------------------------------------------------------------------------ env runs
def env_run(corpus: Any, reducer: str, features: str, seed: int = 3) -> dict:
    """One env run: random valid slots from ``default_rng(seed)``, 40 steps, K = 16, topic "cancer"."""
    env = gym.make("WikiCrawl-v0", corpus=corpus, topic="cancer", reducer=reducer, features=features,
                   max_candidates=16, max_episode_steps=40)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    fetched, rewards, obs_d = [], [], [digest(obs["candidates"], obs["mask"])]
    for _ in range(40):
        m = info["action_mask"]
        a = int(rng.choice(np.flatnonzero(m))) if m.any() else 0
        obs, r, term, trunc, info = env.step(a)
        fetched.append(int(info["fetched_page"]))
        rewards.append(float(r))
        obs_d.append(digest(obs["candidates"], obs["mask"]))
        if term or trunc:
            break
    env.close()
    return {"reducer": reducer, "features": features, "fetched": fetched, "rewards": rewards, "obs": obs_d,
            "relevant_found": int(info["relevant_found"])}


# ---------------------------------------------------------------------------------------------- agent runs
def _make(run_env: dict, agent: str, corpus: Any) -> Any:
    from gym_crawl.agents import make_env_for

    kw = dict(run_env)
    steps = kw.pop("max_steps")
    kw.pop("corpus", None)
    # WikiCrawl-v0: the recording's env (its default reward, han2018, applies where the run gave none)
    return make_env_for(agent, "WikiCrawl-v0", corpus=corpus, max_episode_steps=steps, **kw)


class NearTieError(AssertionError):
    """A replayed agent chose another action than the recording where the recorded margin was not a near-tie."""


def tolerant_episode(env: Any, agent: Any, seed: int, follow: dict | None = None) -> tuple[dict, list[int]]:
    """One episode of ``agent`` as :func:`gym_crawl.agents.run_episode` plays it, recording each action and
    the agent's ``last_margin``. ``follow``: a recorded episode (``actions``, ``margins``) to replay under the
    tie rule. Returns the episode's record and the steps where the recorded action overruled the agent's."""
    from gym_crawl.agents.base import Transition

    base = env.unwrapped
    obs, info = env.reset(seed=seed)
    agent.begin_episode(base.view, np.random.default_rng(seed))
    actions: list[int] = []
    margins: list[float | None] = []
    rewards: list[float] = []
    overruled: list[int] = []
    done, t = False, 0
    while not done:
        a = int(agent.act(obs, info))
        m = agent.last_margin
        if follow is not None:
            want, want_m = int(follow["actions"][t]), follow["margins"][t]
            if a != want:
                if want_m is None or not want_m < TIE_MARGIN:
                    raise NearTieError(f"{agent.name} episode {seed} step {t}: chose action {a}, the recording "
                                       f"chose {want} with margin {want_m} (a near-tie is < {TIE_MARGIN})")
                agent.overrule(want)
                a = want
                overruled.append(t)
        obs2, r, term, trunc, info2 = env.step(a)
        agent.observe(Transition(obs, a, float(r), obs2, term, trunc, info2))
        obs, info = obs2, info2
        actions.append(a)
        margins.append(float(m) if m is not None and np.isfinite(m) else None)
        rewards.append(float(np.float32(r)))
        done = term or trunc
        t += 1
    agent.end_episode(info)
    rec = {"fetched": base.view.fetched_pages().tolist(), "rewards": rewards,
           "relevant_found": int(info["relevant_found"]), "steps": t, "actions": actions, "margins": margins}
    return rec, overruled


def agent_episodes(corpus: Any, run: dict, follow: list[dict] | None = None) -> tuple[list[dict], list[int]]:
    """Play the episodes of agent run ``run`` (``agent``, ``env``, number of ``episodes``); ``follow``: the
    recorded episodes to follow under the tie rule (tolerant agents only). Returns the episodes' records and
    the overruled steps (``episode * 10_000 + step``)."""
    from gym_crawl.agents import make_agent, run_episode

    name = run["agent"]
    env = _make(run["env"], name, corpus)
    agent = make_agent(name)
    out, overruled = [], []
    for ep in range(run["episodes"]):
        if name in TOLERANT:
            rec, over = tolerant_episode(env, agent, ep, None if follow is None else follow[ep])
            overruled += [ep * 10_000 + t for t in over]
        else:
            r = run_episode(env, agent, seed=ep)
            rec = {"fetched": r.fetched.tolist(), "rewards": r.rewards.astype(float).tolist(),
                   "relevant_found": int(r.relevant_found), "steps": int(r.steps)}
        out.append(rec)
    env.close()
    return out, overruled


def record_agent_runs(corpus: Any, specs: list[tuple[str, dict, int, int]]) -> list[dict]:
    """Record ``(agent, env overrides, episodes, steps)`` runs."""
    from gym_crawl.agents.base import agent_class

    out = []
    for name, over, episodes, steps in specs:
        defaults = getattr(agent_class(name), "env_defaults", {})
        env_kw = {"max_candidates": 64, **defaults, **over, "topic": "geology", "max_steps": steps}
        run = {"agent": name, "env": env_kw, "episodes": episodes}
        eps, _ = agent_episodes(corpus, run)
        rec = {"agent": name, "env": env_kw, "episodes": eps}
        if name in TOLERANT:
            rec["tie_margin"] = TIE_MARGIN
        out.append(rec)
    return out
