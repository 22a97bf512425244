"""Memory and CPU per step of the page-action agents' own per-page state, against the size of the web.

``gym-crawl bench agents_memory [--webs default,powerlaw-20000,powerlaw-10000000] [--agents lfa-sync,online-classifier]
[--steps 300] [--episodes 3] [--topic geology] [--pythonpath DIR] [--out DIR]``

``lfa-sync``'s set-B index and the row learners' frontier rows (``online-classifier``, ``hashed-q``, the mixtures)
keep state per page they were given. Per web and agent, a fresh process builds the agent's env
(``make_env_for(agent, corpus=web, topic=..., max_episode_steps=--steps)``; ``default``: the default task's web and
topic), resets it once (the topic's score tables), creates the agent and plays one warm-up episode (compiles),
then ``--episodes`` episodes seeded 0, 1, … and reports:

* ``cpu_us_per_step``: CPU seconds of those episodes (env and agent) per step;
* ``agent_state_bytes``: the bytes of every array of the agent's frontier structure after the last timed episode
  (the set-B index of ``lfa-sync``, the priority queue of ``lfa-async`` or ``best-first-page``, the frontier rows of
  a row learner; another agent, e.g. ``td-lambda``: the agent itself — its arrays and those of objects it holds),
  with the pages it holds rows for (``pages_keyed``; absent for a structure sized by the web or an agent);
* ``traced_agent_bytes``: the warm-up episode runs under ``tracemalloc``, from the agent's creation (the env built
  and reset once before): the bytes still allocated at its end by lines of the agents' package
  (``gym_crawl/agents``, i.e. ``agents/``) within the allocation's three innermost frames — what the agent
  allocated and kept, beside the env's own memory;
* the process' anonymous RSS after the episodes (``/proc/self/status``: env, corpus tables, agent).

``--pythonpath DIR`` runs the measuring processes with DIR first on ``PYTHONPATH`` (e.g. a ``git archive`` of an
earlier commit, with ``gym_crawl/agents`` linked to its ``agents/``: a before/after of the same command). Writes
``agents_memory.json`` and ``agents_memory.md`` to ``--out`` (default ``benchmarks/results/agents_memory``).
"""
from __future__ import annotations

import os
from argparse import ArgumentParser
from pathlib import Path

from gym_crawl.benchmarks.child_process import MEM_SOURCE, run_json_child

DEFAULT_OUT = Path("benchmarks") / "results" / "agents_memory"  # under the current folder
DEFAULT_WEBS = ("default", "powerlaw-20000", "powerlaw-10000000")
DEFAULT_AGENTS = ("lfa-sync", "online-classifier")

#: the measuring process: argv = web, topic, agent, steps, episodes; prints one JSON line
CHILD = MEM_SOURCE + r"""
import json, sys, time, tracemalloc
import numpy as np
import gym_crawl.agents
from gym_crawl.agents import make_agent, make_env_for, run_episode

def arrays(obj, seen, depth=0):
    # bytes of the numpy arrays an object holds (its attributes, dicts and lists, objects it holds: 3 levels)
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes if obj.base is None or id(obj.base) not in seen else 0
    if depth > 3:
        return 0
    if isinstance(obj, dict):
        return sum(arrays(v, seen, depth + 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(arrays(v, seen, depth + 1) for v in obj)
    if hasattr(obj, "__dict__") and type(obj).__module__.startswith("gym_crawl"):
        return sum(arrays(v, seen, depth + 1) for v in vars(obj).values())
    return 0

web, topic, name, steps, episodes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
kw = {} if web == "default" else {"corpus": web, "topic": topic}
env = make_env_for(make_agent(name), max_episode_steps=steps, **kw)
env.reset(seed=1000)  # the topic's first reset (its score tables), outside the trace
roots = list(gym_crawl.agents.__path__)
tracemalloc.start(3)
agent = make_agent(name)
run_episode(env, agent, seed=1000)  # also the warm-up: compiles
snap = tracemalloc.take_snapshot()
tracemalloc.stop()
mine = snap.filter_traces([tracemalloc.Filter(True, r + "/*", all_frames=True) for r in roots])
traced = sum(s.size for s in mine.statistics("filename"))
t0, n = time.process_time(), 0
for ep in range(episodes):
    n += run_episode(env, agent, seed=ep).steps
cpu = time.process_time() - t0
state = next((s for s in (getattr(agent, a, None) for a in ("_pairs", "_pq", "pq", "frontier")) if s is not None),
             agent)
state_bytes = arrays(state, set())
keyed = getattr(state, "n_seen", None)
if keyed is None:
    keyed = getattr(state, "n_keyed", None)
u = env.unwrapped
print(json.dumps({"web": web, "pages": int(u.corpus.n_pages), "topic": str(getattr(u.topic, "name", u.topic)),
                  "agent": name,
                  "steps": n, "cpu_s": round(cpu, 3), "cpu_us_per_step": round(1e6 * cpu / max(n, 1), 1),
                  "agent_state_bytes": int(state_bytes), "pages_keyed": keyed, "traced_agent_bytes": int(traced),
                  "rss_MB": mem()}))
"""


def measure(web: str, topic: str, agent: str, steps: int, episodes: int, pythonpath: str | None) -> dict:
    """One (web, agent) row, from a fresh process."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([pythonpath, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    return run_json_child(CHILD, [web, topic, agent, str(steps), str(episodes)],
                          f"agents_memory: the process measuring {agent} on {web}", env=env)


def report(rows: list[dict]) -> str:
    """The Markdown table of the measured (web, agent) rows."""
    lines = ["| web | pages | agent | steps | CPU µs per step | agent state (MB) | pages keyed | traced agent "
             "allocations (MB) | anonymous RSS (MB) |", "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        keyed = "—" if r["pages_keyed"] is None else f"{r['pages_keyed']:,}"
        lines.append(f"| {r['web']} | {r['pages']:,} | {r['agent']} | {r['steps']:,} | {r['cpu_us_per_step']:,.1f} | "
                     f"{r['agent_state_bytes'] / 1e6:.2f} | {keyed} | {r['traced_agent_bytes'] / 1e6:.2f} | "
                     f"{r['rss_MB']['RssAnon']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench agents_memory", description=__doc__.split("\n\n")[0])
    ap.add_argument("--webs", default=",".join(DEFAULT_WEBS),
                    help="comma-separated corpus specs; 'default': the default task's web and topic")
    ap.add_argument("--agents", default=",".join(DEFAULT_AGENTS), help="comma-separated page-action agents")
    ap.add_argument("--steps", type=int, default=300, help="steps per episode (default 300)")
    ap.add_argument("--episodes", type=int, default=3, help="timed episodes per (web, agent) (default 3)")
    ap.add_argument("--topic", default="geology", help="the topic on every web but 'default' (default geology)")
    ap.add_argument("--pythonpath", default=None, help="put DIR first on the measuring processes' PYTHONPATH")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    a = ap.parse_args(argv)
    webs = [w for w in a.webs.split(",") if w]
    agents = [x for x in a.agents.split(",") if x]
    if a.steps < 1 or a.episodes < 1 or not webs or not agents:
        ap.error(f"--steps and --episodes must be >= 1 and --webs, --agents non-empty, got {a.steps}, {a.episodes}, "
                 f"{a.webs!r}, {a.agents!r}")
    if a.pythonpath is not None and not Path(a.pythonpath, "gym_crawl").is_dir():
        ap.error(f"--pythonpath {a.pythonpath!r}: no gym_crawl package in that folder")
    rows = []
    for web in webs:
        for agent in agents:
            rows.append(measure(web, a.topic, agent, a.steps, a.episodes, a.pythonpath))
            r = rows[-1]
            print(f"{web} {agent}: {r['cpu_us_per_step']} CPU-µs/step, agent state {r['agent_state_bytes']:,} B "
                  f"({r['pages_keyed']} pages keyed), traced {r['traced_agent_bytes']:,} B", flush=True)
    from gym_crawl._io import atomic_write_bytes, atomic_write_json

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "agents_memory.json", {"rows": rows, "pythonpath_given": a.pythonpath is not None})
    atomic_write_bytes(out / "agents_memory.md", report(rows).encode())
    print(report(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
