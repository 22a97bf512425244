import sys
import tracemalloc

import numpy as np

from gym_crawl.corpus import load_corpus
from gym_crawl.wrappers.factory import make_env

spec, feats = sys.argv[1], sys.argv[2]
c = load_corpus(spec)
tracemalloc.start(12)
envs = []
for i in range(64):
    e = make_env("WikiCrawl-v3", corpus=c, topic="geology", features=feats, concurrency=1, per_host=1,
                 max_episode_steps=100)
    obs, info = e.reset(seed=i)
    for _ in range(100):
        m = info["action_mask"]
        obs, r, term, trunc, info = e.step(int(np.flatnonzero(m)[0]) if m.any() else 0)
        if term or trunc:
            break
    envs.append(e)
snap = tracemalloc.take_snapshot()
print(spec, "total traced MB", round(sum(s.size for s in snap.statistics("filename"))/2**20, 1))
for st in snap.statistics("traceback")[:12]:
    fr = [f for f in st.traceback if "gym_crawl" in f.filename]
    where = "; ".join(f"{f.filename.split('gym_crawl/')[-1]}:{f.lineno}" for f in fr[-3:])
    print(f"  {st.size/2**20:8.1f} MB  n={st.count:6d}  {where}")
