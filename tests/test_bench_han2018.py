"""The paper benchmarks run end to end in their CI-sized ``--quick`` form and write sound outputs."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from conftest import shared_data

ALL = {"lfa-sync", "lfa-async", "lfa-moderated", "thesis-lfa", "td-lambda", "random", "bfs", "best-first", "oracle"}


def test_han2018_quick(tmp_path) -> None:
    from gym_crawl.benchmarks.han2018 import main

    assert main(["--quick", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "han2018.json").read_text())
    assert {r["agent"] for r in res["runs"]} == ALL
    assert {r["reward"] for r in res["runs"]} == {"han2018", "labels"}
    for c in res["curves"]:
        for key in ("label_mean", "han_mean"):
            assert np.all(np.diff(c[key]) >= -1e-9), f"{c['agent']}: accumulated curve decreases"
        assert len(c["hist_label"]) == 10
    by = {(r["reward"], r["agent"]): r for r in res["runs"]}
    for rw in ("han2018", "labels"):
        # the oracle bounds everything that cannot see labels; random is the floor of the focused crawlers
        assert by[(rw, "oracle")]["label_mean"] >= max(by[(rw, a)]["label_mean"] for a in ALL - {"oracle"})
        assert by[(rw, "best-first")]["label_mean"] > by[(rw, "random")]["label_mean"]
        assert len(by[(rw, "lfa-sync")]["label_per_task"]) == res["tasks"]
    comp = res["comparisons"]
    assert comp and all("ratio_label" in c and "oracle_label" in c for c in comp)
    tt = {t["agent"]: t for t in res["timing_task"]}
    assert set(tt) == {"basic", "lfa-async", "lfa-moderated", "lfa-sync", "best-first"}
    assert all(t["steps"] > 0 and t["agent_seconds"] >= 0 and t["env_seconds"] > 0 for t in tt.values())
    assert res["timing_ratios"]["sync_over_async"] > 0
    assert res["sweep"] and {s["agent"] for s in res["sweep"]} == {"best-first", "lfa-sync", "lfa-async"}
    # Han's integer-index vector runs beside the tilings (issue 12.4)
    assert {s["agent"] for s in res["sweep"] if s.get("features") == "han-index"} == {"lfa-sync", "lfa-async"}
    md = (tmp_path / "han2018.md").read_text()
    for heading in ("Relevant pages at the budget", "Best LFA mode vs best-first", "Timing per task", "Targets"):
        assert heading in md
    assert res["figures"]
    for name in res["figures"]:
        png = tmp_path / name
        assert png.stat().st_size > 1000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_reused_deterministic_runs_equal_real_runs() -> None:
    """A baseline found deterministic (its first two tasks fetched the same pages) has its later tasks
    reused: they must equal what running those tasks (other seeds) really gives; an agent whose crawl
    depends on the seed is never reused."""
    from gym_crawl.benchmarks.han2018 import load_corpus_cached, run_tasks

    corpus = load_corpus_cached("synthetic-3000", {})
    for agent in ("bfs", "best-first"):
        reused = run_tasks(corpus, "s", "cancer", "labels", agent, 40, 4, seed=5)
        real = run_tasks(corpus, "s", "cancer", "labels", agent, 40, 4, seed=5, reuse_deterministic=False)
        assert reused.reused and not real.reused
        np.testing.assert_array_equal(reused.label, real.label)
        np.testing.assert_array_equal(reused.han, real.han)
        np.testing.assert_array_equal(reused.hist_label, real.hist_label)
    rnd = run_tasks(corpus, "s", "cancer", "labels", "random", 40, 4, seed=5)
    assert not rnd.reused and len({tuple(row) for row in rnd.label.tolist()}) > 1


def test_thesis2021_quick(tmp_path) -> None:
    from gym_crawl.benchmarks.thesis2021 import main

    assert main(["--quick", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "thesis2021.json").read_text())
    assert {r["topic"] for r in res["table_4_3"]} == {"cancer", "fiction"}
    assert all(r["basic_han"] > 0 and "improvement_han" in r for r in res["table_4_3"])
    assert [g["gamma"] for g in res["table_4_2"]] == [0.1, 0.5, 0.9]
    assert {s["agent"] for s in res["fig_4_6"]} == {"best-first", "thesis-lfa-async", "thesis-lfa-sync"}
    md = (tmp_path / "thesis2021.md").read_text()
    assert "Table 4.3" in md and "Table 4.2" in md and "Fig. 4.6" in md
    assert (tmp_path / "table42_gamma_sweep.png").stat().st_size > 1000


def test_bench_rejects_unknown_options(tmp_path) -> None:
    from gym_crawl.benchmarks.han2018 import main

    with pytest.raises(SystemExit):
        main(["--bogus"])


@pytest.mark.slow
def test_lfa_runs_on_wikispeedia(tmp_path) -> None:
    path = shared_data("wikispeedia")
    from gym_crawl.benchmarks.han2018 import load_corpus_cached, run_tasks

    corpus = load_corpus_cached(str(path), {})
    for agent in ("lfa-sync", "lfa-async", "thesis-lfa", "td-lambda"):
        r = run_tasks(corpus, "wikispeedia", "geology", "labels", agent, 100, 2)
        assert r.label.shape == (2, 100) and r.label[:, -1].min() > 0


def test_presets_and_flag_overrides() -> None:
    """--quick selects the QUICK preset, no flag the FULL one; given flags override single fields."""
    from gym_crawl.benchmarks import han2018, thesis2021

    for mod in (han2018, thesis2021):
        ap = mod.build_parser()
        assert mod.preset_from_args(ap.parse_args([])) == mod.FULL
        assert mod.preset_from_args(ap.parse_args(["--quick"])) == mod.QUICK
        q = mod.preset_from_args(ap.parse_args(["--quick", "--tasks", "3"]))
        assert q.tasks == 3 and q == dataclasses.replace(mod.QUICK, tasks=3)
    p = han2018.preset_from_args(han2018.build_parser().parse_args(["--corpus", "synthetic-5000", "--steps", "50",
                                                                     "--topics", "cancer,poetry"]))
    plans = han2018.plans(p)
    assert [(c.spec, c.topics, c.rewards, c.steps) for c in plans] == [
        ("synthetic-5000", ["cancer", "poetry"], ["han2018"], 50)]
    assert p.tasks == han2018.FULL.tasks and p.sweep_grid == han2018.FULL.sweep_grid
    t = thesis2021.preset_from_args(thesis2021.build_parser().parse_args(["--steps", "70", "--gammas", "0.2,0.4",
                                                                          "--no-wikispeedia"]))
    assert (t.steps, t.wiki_steps, t.small_steps, t.gammas, t.wikispeedia) == (70, 70, 70, (0.2, 0.4), False)
