"""`gym-crawl bench tres --quick` end to end, the URL-hash domains of single-site corpora, the cost micro-benchmark."""
from __future__ import annotations

import json
import zlib

import gymnasium as gym
import numpy as np
import pytest
import torch

import gym_crawl  # noqa: F401
from gym_crawl.benchmarks.tres import AGENTS, decision_cost, main
from gym_crawl.corpus.url_sites import url_hash_domains

torch.set_num_threads(1)


@pytest.mark.slow  # a benchmark run
def test_quick_run_writes_json_markdown_and_pngs(tmp_path):
    out = tmp_path / "tres"
    # the QUICK preset, made smaller still through its flag overrides (a 5,000-page web, 200-step crawls)
    assert main(["--quick", "--out", str(out), "--wikispeedia", "none", "--synthetic", "synthetic-5000",
                 "--synthetic-domains", "100", "--synthetic-steps", "200", "--cost-sizes", "1000,10000"]) == 0
    res = json.loads((out / "tres.json").read_text())
    for f in ("tres.md", "tres_pareto_synthetic.png", "tres_fig4.png", "tres_cost.png"):
        assert (out / f).stat().st_size > 0, f
    table = res["table"]
    ran = {r["agent"] for r in table}
    skipped = {n.split()[0] for n in res["notes"] if "skipped" in n}
    assert ran | skipped == set(AGENTS)
    assert {r["cap"] for r in table} == {"inf", "5-2"} and res["config"]["synthetic_steps"] == 200
    for r in table:
        assert 0.0 <= r["harvest_rate"] <= 1.0 and r["relevant_domains"] >= 0
        assert r["steps"] <= 200
    # the tree agents evaluate far fewer candidates than the frontier holds
    f4 = res["fig4"]
    assert f4["nonempty_leaves"] <= f4["leaves"] and f4["frontier"] >= f4["nonempty_leaves"]
    assert res["classifier"][0]["rows"] and res["keywords"][0]["n_initial"] >= 1
    md = (out / "tres.md").read_text()
    assert "Table 3 analogue" in md and "TRES_inf" in md and "Decision cost" in md
    # Table 4: the ablations and the ACHE-like / SeedFinder-like baselines, scored on evaluation pages
    assert (out / "tres_table4_synthetic.png").stat().st_size > 0
    t4 = res["table4"]
    assert {(r["agent"], r["cap"]) for r in t4} == set(map(tuple, res["config"]["table4_cells"]))
    n_eval = t4[0]["relevant_in_corpus"]
    for r in t4:
        assert 0.0 <= r["harvest_rate"] <= 1.0 and r["relevant_found"] <= n_eval
    sf = [r for r in res["table4_runs"] if r["agent"] == "seedfinder"]
    assert sf and all(r["search_results"] + r["steps"] <= 60 for r in sf)
    assert "Table 4 analogue" in md and "TRES_SVM_10" in md and "TRES_10_NH" in md and "SeedFinder-like" in md
    assert any("svm" in row["model"] for row in res["classifier"][0]["rows"])


def test_url_hash_domains_depend_on_the_url_only(tiny_corpus):
    c = url_hash_domains(tiny_corpus, pages_per_domain=5)
    n_dom = int(np.ceil(tiny_corpus.n_pages / 5))
    assert len(c.domains) == n_dom
    expect = [zlib.crc32(t.encode()) % n_dom for t in tiny_corpus.titles]
    assert c.page_domain.tolist() == expect
    assert c.link_dst is tiny_corpus.link_dst and c.label_ids is tiny_corpus.label_ids
    assert "crc32" in c.meta["domain_definition"]
    # a cap of 2 pages per site does not end a 100-step crawl early
    env = gym.make("WikiCrawl-v0", corpus=c, topic="geology", reducer="random", max_candidates=4,
                   max_episode_steps=100, domain_cap=2)
    obs, info = env.reset(seed=0)
    steps = 0
    done = False
    while not done:
        obs, r, term, trunc, info = env.step(0)
        steps += 1
        done = term or trunc
    assert steps == 100 and not term
    assert np.bincount(c.page_domain[env.unwrapped.view.fetched_pages()]).max() <= 3  # ≤ cap, seeds aside


def test_decision_cost_tree_is_the_same_for_every_frontier_size():
    rows = decision_cost([300, 3000], experience=400, steps=3)
    assert [r["frontier"] for r in rows] == [300, 3000]
    assert rows[0]["leaves"] >= 2 and abs(rows[0]["leaves"] - rows[1]["leaves"]) <= 3  # grows by ≤ 1 split a step
    for r in rows:
        assert 1 <= r["candidates_tree"] <= r["leaves"] + 3
        assert r["tree_ms"] > 0 and r["sync_ms"] > 0


def test_presets_and_flag_overrides():
    from gym_crawl.benchmarks import tres

    ap = tres.build_parser()
    assert tres.preset_from_args(ap.parse_args([])) == tres.FULL
    assert tres.preset_from_args(ap.parse_args(["--quick"])) == tres.QUICK
    p = tres.preset_from_args(ap.parse_args(["--quick", "--caps", "inf,10", "--cost-sizes", "1e3,5000",
                                             "--wiki-topics", "cancer,poetry"]))
    assert p.caps == ("inf", "10") and p.cost_sizes == (1000, 5000) and p.wiki_topics == ("cancer", "poetry")
    assert p.synthetic_steps == tres.QUICK.synthetic_steps and p.classifier == tres.QUICK.classifier


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_url_hash_domains_refuses_a_bad_site_size(tiny_corpus, bad):
    with pytest.raises(ValueError, match="pages_per_domain must be an int >= 1"):
        url_hash_domains(tiny_corpus, pages_per_domain=bad)
