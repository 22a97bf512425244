"""The paper benchmarks run end to end in their CI-sized ``--quick`` form and write sound outputs."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from conftest import shared_data

ALL = {"lfa-sync", "lfa-async", "lfa-moderated", "thesis-lfa", "td-lambda", "random", "bfs", "best-first", "oracle"}


@pytest.mark.slow  # a benchmark run
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
    # Han's integer-index vector runs beside the tilings
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


@pytest.mark.slow  # a benchmark run
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


# ----------------------------------------------------------------- Han's protocol at its scale (--paper-scale)
def test_paper_scale_preset_is_hans_protocol() -> None:
    """``--paper-scale`` is Han et al. 2018 §4: six topics incl. Olympics, 10,000-page tasks, 100 tasks (Fig. 1),
    10 trials (Fig. 3), ε 0.1, γ 0.9, α 0.001 and 0.0005 for Olympics/Fiction, Han's categories per topic,
    the three RL crawlers on both feature vectors, on the 323k-page web."""
    from gym_crawl.benchmarks import han2018 as h
    from gym_crawl.features.han_index import HanIndexFeatures

    p = h.paper_preset_from_args(h.build_parser().parse_args(["--paper-scale"]))
    assert p == h.PAPER
    assert set(p.topics) == {"fiction", "olympics", "cancer", "cameras", "geology", "poetry"}
    assert p.corpus == "synthetic-323000" and p.steps == 10_000 and p.tasks == 100 and p.trials == 10
    assert (p.epsilon, p.gamma, p.reward) == (0.1, 0.9, "han2018")
    assert {t: p.alpha_of(t) for t in p.topics} == {"fiction": 0.0005, "olympics": 0.0005, "cancer": 0.001,
                                                    "cameras": 0.001, "geology": 0.001, "poetry": 0.001}
    assert set(p.agents) == {"lfa-sync", "lfa-async", "lfa-moderated"} and p.baseline == "best-first"
    assert set(p.features) == {"han-index", "han2018"} and p.baseline_tasks == 100
    han_categories = {"cancer": 4, "fiction": 2, "olympics": 1, "cameras": 3, "geology": 2, "poetry": 2}
    chains = h.paper_chains(p)
    for c in chains:
        cfg = h.chain_config(p, c, 0)
        assert cfg["n_categories"] == han_categories[c.topic] and cfg["steps"] == 10_000
        if c.learner:
            assert (cfg["alpha"], cfg["epsilon"], cfg["gamma"]) == (p.alpha_of(c.topic), 0.1, 0.9)
    for C in han_categories.values():  # Han: state 8 + 2C, action 6 + 2C columns
        assert HanIndexFeatures(C).dim == (8 + 2 * C) + (6 + 2 * C)
    order = h.work_order(p, chains)
    assert len(order) == 6 * (100 + 3 * 2 * 10 * 100)
    seen: dict = {}
    for c, i in order:  # every chain's tasks in order (weights carried), seeds distinct within a chain
        assert seen.get(c, -1) == i - 1
        seen[c] = i
    assert len({h.task_seed(0, c.trial, i) for c in chains[:2] for i in range(c.n_tasks)}) == 100
    # the first block: trials 0-4 × tasks 0-2 of han-index async/sync and 15 baseline tasks, every topic
    first = order[:6 * (15 + 2 * 5 * 3)]
    assert {c.topic for c, _ in first} == set(p.topics)
    assert all(c.trial < 5 and i < (15 if c.agent == "best-first" else 3) for c, i in first)
    assert {(c.agent, c.features) for c, _ in first} == {("best-first", "-"), ("lfa-async", "han-index"),
                                                         ("lfa-sync", "han-index")}
    # after trial 0, task by task: task i of every trial, topic and agent before task i + 1 of any, so a run
    # stopped there leaves all ten trials with the same number of tasks
    rest = [(c, i) for c, i in order if h.work_stage(p, c, i) == 4]
    assert order[-len(rest):] == rest and {c.trial for c, _ in rest} == set(range(1, 10))
    ks = [i for _, i in rest]
    assert ks == sorted(ks)
    per_trial = {}
    for c, i in order[: len(order) - len(rest) + len(rest) // 3]:   # stopped a third of the way into stage 4
        if c.learner and c.trial > 0:
            per_trial[(c.topic, c.agent, c.features, c.trial)] = i + 1
    assert len(per_trial) == 6 * 3 * 2 * 9 and max(per_trial.values()) - min(per_trial.values()) <= 1
    q = h.paper_preset_from_args(h.build_parser().parse_args(["--paper-scale", "--quick", "--tasks", "4"]))
    assert q == dataclasses.replace(h.PAPER_QUICK, tasks=4)
    for bad in (["--topics", "jazz"], ["--agents", "random"], ["--features", "tres"], ["--trials", "0"]):
        with pytest.raises(SystemExit):
            h.paper_preset_from_args(h.build_parser().parse_args(["--paper-scale", *bad]))


def _records(out) -> dict:
    return {f.relative_to(out): f.read_bytes() for f in sorted((out / "runs").rglob("task_*.json"))}


def _strip_times(b: bytes) -> dict:
    r = json.loads(b)
    return {k: v for k, v in r.items() if k not in ("seconds", "cpu_seconds")}


def test_paper_scale_quick_resume_and_no_copies(tmp_path) -> None:
    """The quick paper run writes its reports; a rerun with more tasks computes only the missing ones (kept files
    untouched) and gives bit for bit the same records and weights as one uninterrupted run; every reported
    number comes from one real run per record (distinct seeds, sd over them), never from copies."""
    from gym_crawl.benchmarks.han2018 import main

    base = ["--paper-scale", "--quick", "--topics", "olympics", "--trials", "2", "--steps", "60",
            "--agents", "lfa-async,lfa-sync", "--features", "han-index"]
    a = tmp_path / "a"
    assert main([*base, "--tasks", "2", "--baseline-tasks", "2", "--out", str(a)]) == 0
    first = _records(a)
    res = json.loads((a / "han2018_paper.json").read_text())
    assert res["computed"] == len(first) == 2 + 2 * 2 * 2 and res["tasks_kept"] == res["tasks_planned"]
    assert (a / "han2018_paper.md").read_text().count("| olympics |") >= 5
    for name in res["figures"]:
        assert (a / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert {r["alpha"] for r in res["fig3"]} == {0.0005}  # Han's α for Olympics

    # resume: one more task per chain, nothing kept is recomputed or rewritten
    assert main([*base, "--tasks", "3", "--baseline-tasks", "3", "--out", str(a), "--no-figures"]) == 0
    res = json.loads((a / "han2018_paper.json").read_text())
    second = _records(a)
    assert res["computed"] == 1 + 2 * 2 and len(second) == len(first) + res["computed"]
    assert all(second[k] == v for k, v in first.items())
    assert main([*base, "--tasks", "3", "--baseline-tasks", "3", "--out", str(a), "--cached-only", "--no-figures"]) == 0
    assert json.loads((a / "han2018_paper.json").read_text())["computed"] == 0

    # ... and equals an uninterrupted run (weights after every task included)
    b = tmp_path / "b"
    assert main([*base, "--tasks", "3", "--baseline-tasks", "3", "--out", str(b), "--no-figures"]) == 0
    straight = _records(b)
    assert straight.keys() == second.keys()
    assert all(_strip_times(straight[k]) == _strip_times(second[k]) for k in straight)
    assert any(json.loads(v)["state"] for v in straight.values())

    # no copies: n = records, distinct seeds, mean and sd (ddof 1) recomputed from the files
    recs = [json.loads(v) for v in second.values()]
    for row in res["fig1"]:
        mine = [r for r in recs if r["config"]["agent"] == row["agent"] and r["config"]["trial"] == 0
                and r["config"]["features"] == row["features"]]
        assert row["tasks"] == row["distinct_seeds"] == len(mine) == 3
        vals = np.array([r["han"] for r in mine], float)
        assert row["han_mean"] == pytest.approx(vals.mean()) and row["han_sd"] == pytest.approx(vals.std(ddof=1))
    # Fig. 3: every trial averaged over the same tasks (the second half of those all its trials have)
    for row in res["fig3"]:
        lo, hi = row["window"]
        assert (lo, hi) == (2, 3)
        for trial, v in enumerate(row["han_per_trial"]):
            mine = sorted((r for r in recs if r["config"]["agent"] == row["agent"] and r["config"]["trial"] == trial),
                          key=lambda r: r["task"])
            assert v == pytest.approx(np.mean([r["han"] for r in mine[lo:hi]]))
    # the report reads every baseline record: changing one changes the mean
    bf = min((a / "runs").rglob("best-first*/task_0002.json"))
    r = json.loads(bf.read_text())
    r["han"] += 30
    bf.write_text(json.dumps(r))
    assert main([*base, "--tasks", "3", "--baseline-tasks", "3", "--out", str(a), "--cached-only", "--no-figures"]) == 0
    row = next(x for x in json.loads((a / "han2018_paper.json").read_text())["fig1"] if x["agent"] == "best-first")
    old = next(x for x in res["fig1"] if x["agent"] == "best-first")
    assert row["han_mean"] == pytest.approx(old["han_mean"] + 10) and row["han_sd"] > 0


def test_paper_scale_rejects_foreign_records_and_stops_on_time(tmp_path) -> None:
    from gym_crawl.benchmarks.han2018 import main

    base = ["--paper-scale", "--quick", "--topics", "olympics", "--trials", "1", "--tasks", "1",
            "--baseline-tasks", "1", "--features", "han-index", "--agents", "lfa-async", "--out", str(tmp_path),
            "--no-figures"]
    assert main([*base, "--max-minutes", "0"]) == 0  # no time: nothing computed, everything listed as missing
    res = json.loads((tmp_path / "han2018_paper.json").read_text())
    assert res["computed"] == 0 and res["tasks_kept"] == 0 and len(res["missing"]) == 2
    assert main(base) == 0
    f = min((tmp_path / "runs").rglob("lfa-async*/task_0000.json"))
    r = json.loads(f.read_text())
    r["config"]["alpha"] = 0.5
    f.write_text(json.dumps(r))
    with pytest.raises(ValueError, match="task_0000.json"):
        main(base)
    with pytest.raises(SystemExit):
        main([*base, "--jobs", "2"])


def test_paper_scale_records_carry_a_run_across_machines(tmp_path) -> None:
    """--records: every kept task is exported to <records>/<topic>.jsonl.gz (compact, deterministic bytes); a
    fresh machine imports them, reports the same numbers, and continues each chain from the committed weights
    bit for bit as one uninterrupted run; a damaged records file or a chain whose last record lost its weights
    is refused with the file named."""
    import gzip

    from gym_crawl.benchmarks.han2018 import main

    base = ["--paper-scale", "--quick", "--topics", "olympics", "--trials", "2", "--steps", "60",
            "--agents", "lfa-sync", "--features", "han-index", "--baseline-tasks", "2", "--no-figures"]
    rec = tmp_path / "records"
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert main([*base, "--tasks", "2", "--out", str(a), "--records", str(rec)]) == 0
    f = rec / "olympics.jsonl.gz"
    lines = [json.loads(x) for x in gzip.decompress(f.read_bytes()).decode().splitlines()]
    assert len(lines) == 2 + 2 * 2
    for r in lines:   # compact: curves only in trial 0, weights only on a chain's last task
        assert ("han_curve" in r) == (r["config"]["trial"] == 0)
        assert ("state" in r) == (r["task"] == 1 and r["config"]["agent"] == "lfa-sync")
    blob = f.read_bytes()
    assert main([*base, "--tasks", "2", "--out", str(a), "--records", str(rec), "--cached-only"]) == 0
    assert f.read_bytes() == blob   # same records, same bytes (no gzip timestamp)

    # a fresh machine: nothing computed, the same report, then one more task per chain from committed weights
    assert main([*base, "--tasks", "2", "--out", str(b), "--records", str(rec)]) == 0
    ra, rb = (json.loads((d / "han2018_paper.json").read_text()) for d in (a, b))
    assert rb["computed"] == 0 and ra["fig1"] == rb["fig1"] and ra["fig3"] == rb["fig3"]
    assert main([*base, "--tasks", "3", "--baseline-tasks", "3", "--out", str(b), "--records", str(rec)]) == 0
    assert main([*base, "--tasks", "3", "--baseline-tasks", "3", "--out", str(c)]) == 0
    rb, rc = _records(b), _records(c)
    new = [k for k in rb if k.name == "task_0002.json"]
    assert len(new) == 3 and all(_strip_times(rb[k]) == _strip_times(rc[k]) for k in new)
    assert len(gzip.decompress(f.read_bytes()).decode().splitlines()) == 3 + 2 * 3

    # refusals name the file
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "olympics.jsonl.gz").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(ValueError, match="olympics.jsonl.gz"):
        main([*base, "--tasks", "2", "--out", str(tmp_path / "d"), "--records", str(broken)])
    assert not (tmp_path / "d" / "runs" / "synthetic-3000").exists()   # nothing half-imported
    last = min((c / "runs").rglob("lfa-sync*trial1/task_0002.json"))
    r = json.loads(last.read_text())
    del r["state"]
    last.write_text(json.dumps(r))
    with pytest.raises(ValueError, match="kept no weights"):
        main([*base, "--tasks", "4", "--baseline-tasks", "3", "--out", str(c)])


@pytest.mark.slow
def test_paper_scale_quick_default(tmp_path) -> None:
    """``--paper-scale --quick`` as documented: both topics, the three RL crawlers on both feature vectors."""
    from gym_crawl.benchmarks.han2018 import PAPER_QUICK, main

    assert main(["--paper-scale", "--quick", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "han2018_paper.json").read_text())
    assert res["tasks_kept"] == res["tasks_planned"] == len(PAPER_QUICK.topics) * (
        PAPER_QUICK.baseline_tasks + 3 * 2 * PAPER_QUICK.trials * PAPER_QUICK.tasks)
    assert {(r["agent"], r["features"]) for r in res["fig3"]} == {
        (a, f) for a in ("lfa-sync", "lfa-async", "lfa-moderated") for f in ("han-index", "han2018")}
    assert len(res["figures"]) == 10
