"""Hash trajectories of the paths whose caches changed (content features, tres-clf, classifier reward).

``python trajectory_hashes.py TREE OUT.json`` with the package of TREE importable (``PYTHONPATH=TREE`` for a
``git archive`` of a revision) and ``GYM_CRAWL_DATA`` a scratch directory: a 1,200-page web from TREE's
``tests/conftest.py``; 3 envs x 2 episodes x 40 random valid steps per configuration, one process."""
import hashlib
import json
import sys

import gymnasium as gym
import numpy as np

sys.path.insert(0, sys.argv[1] + "/tests")
from conftest import make_tiny_corpus

import gym_crawl  # noqa
import gym_crawl.relevance.rewards as R
from gym_crawl.relevance.classifier import heldout_view

corpus = make_tiny_corpus(1200, domains_per_kind=5)
view = heldout_view(corpus)
out = {}
configs = [(f, None, False) for f in ("content", "link-vector", "content-x-topic", "transferable", "combined-content",
                                       "tres-clf", "tres-clf-nh")]
configs += [("tres", "classifier", False), ("tres", "classifier", True), ("tres-clf", "classifier", True)]
for feat, reward, lazy in configs:
    R._EAGER_PAGES = 0 if lazy else 200_000
    h = hashlib.sha256()
    for e_i in range(3):
        kw = {} if reward is None else {"reward": reward}
        env = gym.make("WikiCrawl-v1", corpus=view if reward else corpus, topic="cancer", features=feat,
                       max_candidates=16, max_episode_steps=40, **kw)
        rng = np.random.default_rng(e_i)
        for ep in range(2):
            obs, info = env.reset(seed=10 * e_i + ep)
            for _ in range(40):
                m = info["action_mask"]
                a = int(rng.choice(np.flatnonzero(m))) if m.any() else 0
                obs, r, term, trunc, info = env.step(a)
                o = obs if isinstance(obs, np.ndarray) else \
                    np.concatenate([np.asarray(v).ravel() for v in obs.values()])
                h.update(np.ascontiguousarray(o).tobytes())
                h.update(np.float64(r).tobytes())
                h.update(info["candidate_ids"].tobytes())
                h.update(m.tobytes())
                if term or trunc:
                    break
    out[f"{feat}/{reward}/{'lazy' if lazy else 'eager'}"] = h.hexdigest()[:16]
    print(feat, reward, lazy, out[f"{feat}/{reward}/{'lazy' if lazy else 'eager'}"], flush=True)
with open(sys.argv[2], "w") as f:
    json.dump(out, f, indent=1)
