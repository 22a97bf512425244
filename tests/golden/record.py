"""Record the golden trajectories that the architecture refactor must not change (issue 9).

Recorded once, at commit a802c88 (before the one-action-path refactor), with the API of that
time; ``tests/test_golden.py`` replays the same runs through today's API and compares them bit for
bit. Re-running this script after the refactor would only prove self-consistency, so the JSON is
committed and this script is kept for the record of *how* it was made.

    python tests/golden/record.py            # writes tests/golden/trajectories.json
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import gymnasium as gym  # noqa: E402
from conftest import make_tiny_corpus  # noqa: E402

import gym_crawl  # noqa: E402,F401

AGENT_RUNS = [  # (agent, env overrides, episodes, steps)
    ("random", {}, 1, 60), ("bfs", {}, 1, 60), ("best-first", {}, 1, 60), ("oracle", {}, 1, 60),
    ("lfa-sync", {}, 2, 60), ("lfa-async", {}, 2, 60), ("lfa-moderated", {}, 2, 60),
    ("thesis-lfa", {}, 2, 60), ("td-lambda", {}, 2, 40), ("tres", {"max_candidates": 256}, 2, 60),
    ("tres-async", {}, 2, 60), ("tree-random", {"max_candidates": 256}, 1, 60),
]
ENV_RUNS = [(r, f) for r in ("topk", "outlinks", "random", "full", "tree")
            for f in ("combined", "han2018", "tres")]


def digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def record_agents(corpus) -> list[dict]:
    from agents.base import agent_class, make_agent
    from agents.runner import run_episode

    out = []
    for name, over, episodes, steps in AGENT_RUNS:
        cls = agent_class(name)
        kw = {"max_candidates": 64, **getattr(cls, "env_defaults", {}), **over, "corpus": corpus,
              "topic": "geology", "max_steps": steps}
        env = gym.make("WikiCrawl-v0", **kw)
        agent = make_agent(name)
        eps = []
        for ep in range(episodes):
            r = run_episode(env, agent, seed=ep)
            eps.append({"fetched": r.fetched.tolist(), "rewards": r.rewards.astype(float).tolist(),
                        "relevant_found": int(r.relevant_found), "steps": int(r.steps)})
        out.append({"agent": name, "env": {k: v for k, v in kw.items() if k != "corpus"}, "episodes": eps})
        env.close()
    return out


def record_env(corpus) -> list[dict]:
    out = []
    for reducer, features in ENV_RUNS:
        env = gym.make("WikiCrawl-v0", corpus=corpus, topic="cancer", reducer=reducer, features=features,
                       max_candidates=16, max_steps=40)
        obs, info = env.reset(seed=3)
        rng = np.random.default_rng(3)
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
        out.append({"reducer": reducer, "features": features, "fetched": fetched, "rewards": rewards,
                    "obs": obs_d, "relevant_found": int(info["relevant_found"])})
        env.close()
    return out


SYNTHETIC_RUNS = [("random", {}, 1, 80), ("best-first", {}, 1, 80), ("lfa-async", {}, 2, 80),
                  ("tres", {"max_candidates": 256}, 1, 80)]


def main() -> None:
    corpus = make_tiny_corpus()
    data = {"recorded_at": "a802c88", "corpus": "tests/conftest.py:make_tiny_corpus()",
            "agents": record_agents(corpus), "env": record_env(corpus)}
    from gym_crawl.corpus import load_corpus

    AGENT_RUNS[:] = SYNTHETIC_RUNS
    data["synthetic_corpus"] = "synthetic-2000"
    data["synthetic_agents"] = record_agents(load_corpus("synthetic-2000"))
    (HERE / "trajectories.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {HERE / 'trajectories.json'}")


if __name__ == "__main__":
    main()
