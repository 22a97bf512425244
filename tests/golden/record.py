"""Record the golden trajectories that ``tests/test_golden.py`` and ``tests/test_golden_crawl.py`` replay.

The runs themselves (agents, env settings, seeds, the tie rule of the PyTorch agents) are defined in
``tests/golden_replay.py``, which the replays use too.

    python tests/golden/record.py               # rewrites tests/golden/trajectories.json
    python tests/golden/record.py --out F.json  # writes F.json instead (e.g. to compare two machines)

Re-recording is not how a failing golden is fixed: a refactor must leave the recording as it is (see
CONTRIBUTING.md for the one case that re-records, and the CHANGELOG for each time it was done).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from conftest import make_tiny_corpus  # noqa: E402
from golden_replay import (  # noqa: E402
    AGENT_RUNS,
    ENV_RUNS,
    SYNTHETIC_CORPUS,
    SYNTHETIC_RUNS,
    env_run,
    record_agent_runs,
)


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def record() -> dict:
    """Every golden run, as the JSON the replays read."""
    from gym_crawl.corpus import load_corpus

    corpus = make_tiny_corpus()
    return {"recorded_at": _commit(), "corpus": "tests/conftest.py:make_tiny_corpus()",
            "agents": record_agent_runs(corpus, AGENT_RUNS),
            "env": [env_run(corpus, r, f) for r, f in ENV_RUNS],
            "synthetic_corpus": SYNTHETIC_CORPUS,
            "synthetic_agents": record_agent_runs(load_corpus(SYNTHETIC_CORPUS), SYNTHETIC_RUNS)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "trajectories.json", help="JSON file to write")
    args = ap.parse_args(argv)
    args.out.write_text(json.dumps(record(), indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
