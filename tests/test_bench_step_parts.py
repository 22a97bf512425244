"""``gym-crawl bench step_parts``: the parts it times add up, and bad arguments are refused."""
from __future__ import annotations

import json

import pytest

from gym_crawl.benchmarks import step_parts


def test_quick_run_times_the_step_and_its_compiled_call(tmp_path):
    assert step_parts.main(["--envs", "4", "--steps", "6", "--warmup", "2", "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "step_parts.json").read_text())
    us = out["us_per_vector_step"]
    assert us["compiled vec_step"] > 0  # the one-call step ran
    assert us["the whole step"] >= us["compiled calls"] > 0
    assert us["outside the compiled calls"] == pytest.approx(us["the whole step"] - us["compiled calls"])
    assert (tmp_path / "step_parts.md").read_text().count("|") > 10


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        step_parts.main(["--steps", "0"])
