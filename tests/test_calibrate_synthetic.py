"""benchmarks/calibrate_synthetic.py: the real-data statistics the hard synthetic preset is calibrated to,
the measuring functions on hand-made and generated data, and the benchmark's outputs."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.benchmarks.calibrate_synthetic import (
    GENERIC_TOKENS,
    MEDIAWIKI_SAMPLES,
    Config,
    _Graph,
    anchor_stats,
    crawl_scores,
    mediawiki_anchor_pairs,
    run,
    synthetic_tasks,
    topic_stats,
    wikispeedia_tasks,
    write_outputs,
)
from gym_crawl.text.model import get_text_model
from gym_crawl.webgen.synthetic import generate_synthetic
from tests.conftest import shared_data


def test_anchor_stats_hand_example():
    pairs = [(["basalt"], ["basalt"]),                       # equal
             (["novak"], ["clara", "novak"]),                # shares a word
             (["insects"], ["insect"]),                      # disjoint (an inflection)
             ([], ["hexadecimal"]),                          # contentless ("16")
             (["click"], ["geology"])]                       # generic ("click here")
    s = anchor_stats(pairs)
    assert s["links"] == 5
    assert s["eq"] == pytest.approx(0.2) and s["shares_word"] == pytest.approx(0.4)
    assert s["disjoint"] == pytest.approx(0.6) and s["generic"] == pytest.approx(0.4)
    assert s["anchor_words"] == pytest.approx(4 / 5)  # 1+1+1+0+1 words over 5 links
    assert {"click", "read", "website", "see"} <= GENERIC_TOKENS and "geology" not in GENERIC_TOKENS
    with pytest.raises(ValueError, match="no links"):
        anchor_stats([])


@pytest.mark.parametrize("name,eq,shares", [("enwiki", 0.675, 0.873), ("ltgwiki", 0.468, 0.688)])
def test_mediawiki_anchor_statistics(name, eq, shares):
    """The real figures the hard preset's anchors are calibrated to (HardPreset.anchor_p)."""
    path = shared_data(MEDIAWIKI_SAMPLES[name].split("/")[0]) / MEDIAWIKI_SAMPLES[name].split("/")[1]
    s = anchor_stats(mediawiki_anchor_pairs(path))
    assert s["links"] > 5000
    assert s["eq"] == pytest.approx(eq, abs=0.01) and s["shares_word"] == pytest.approx(shares, abs=0.01)
    assert 0.003 < s["generic"] < 0.02   # numbers, symbols: ~1 % of wiki anchors carry no word
    with pytest.raises(FileNotFoundError, match="MediaWiki dump not found"):
        mediawiki_anchor_pairs(path.with_name("missing.xml.bz2"))


def test_link_text_less_informative_on_hard_preset():
    """Best-first's link score separates links into the topic far less well on the hard preset."""
    auc = {}
    for preset in ("default", "hard"):
        c = generate_synthetic(2000, seed=0, preset=preset)
        g, tm = _Graph(c), get_text_model(c)
        rows = [topic_stats(c, t, g, tm) for t in synthetic_tasks(c, ("cancer", "fiction", "sports"))]
        for r in rows:
            assert 0 < r["base_rate"] < 0.1 and 0 <= r["p_L_given_L"] <= 1 and r["share_d1"] > 1
        auc[preset] = np.mean([r["auc_links_from_L"] for r in rows])
        title = np.mean([r["title_topic_word"] for r in rows])
        assert (title < 0.08) if preset == "hard" else (title > 0.12)
    assert auc["default"] > 0.95 and auc["hard"] < auc["default"] - 0.1, auc


def test_crawl_scores_fields():
    c = generate_synthetic(2000, seed=0, preset="hard")
    t = synthetic_tasks(c, ("cancer",))[0]
    r = crawl_scores(c, t, 30, 3)
    assert r["budget"] == 30 and 0 <= r["best_first"] <= r["oracle"] <= 31
    assert r["ratio"] == pytest.approx(r["best_first"] / r["oracle"])
    assert r["random_sd"] >= 0 and r["random_mean"] <= r["oracle"]
    assert r == crawl_scores(c, t, 30, 3)  # deterministic


def test_run_and_outputs_with_a_stand_in_reference(tmp_path):
    """The whole pipeline on small data (a synthetic corpus stands in for Wikispeedia); the real run
    is the slow test below and ``gym-crawl bench calibrate_synthetic``."""
    ref = generate_synthetic(2000, seed=5)
    tasks = wikispeedia_tasks(ref, min_pages=25, every=8)
    assert tasks and all(t.topic.label and ref.titles[t.seed_page] for t in tasks)
    cfg = Config(pages=2000, budgets=(20,), random_seeds=2, ws_every=8, link_sample=3000)
    res = run(cfg, data=tmp_path / "no-data", progress=False, reference=ref)  # no MediaWiki samples there
    assert set(res["anchors"]) == {"wikispeedia", "default", "hard"}
    assert res["anchors"]["default"]["generic"] > res["anchors"]["hard"]["generic"]
    for k in ("wikispeedia", "default", "hard"):
        assert len(res["summary"][k]["ratio_b20"]) == 3
    md = write_outputs(res, tmp_path / "out")
    for ext in ("json", "md", "png"):
        assert (tmp_path / "out" / f"calibrate_synthetic.{ext}").stat().st_size > 100
    data = json.loads((tmp_path / "out" / "calibrate_synthetic.json").read_text())
    assert data["config"]["budgets"] == [20] and len(data["synthetic"]["hard"]["topics"]) == 8
    assert "anchor == target title" in md and "synthetic-hard-2000" in md


@pytest.mark.slow
def test_quick_benchmark_on_real_data(tmp_path):
    """`gym-crawl bench calibrate_synthetic --quick` (about a minute): the hard preset in Wikispeedia's range."""
    from gym_crawl.benchmarks.calibrate_synthetic import main

    shared_data("wikispeedia")
    assert main(["--quick", "--out", str(tmp_path)]) == 0
    res = json.loads((Path(tmp_path) / "calibrate_synthetic.json").read_text())
    hard = res["summary"]["hard"]["ratio_b100"][1]
    assert 0.3 <= hard <= 0.65 and res["summary"]["default"]["ratio_b100"][1] > 0.9
