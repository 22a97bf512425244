"""``gym-crawl bench textmodel``: the relevance rule, the totals and the ratio against the target, the
candidate row rules."""
from __future__ import annotations

import numpy as np
import pytest

from gym_crawl.benchmarks.textmodel import TARGET, candidate_rows, label_matches, summarize_live


def test_label_matches_the_task_label_and_below():
    assert label_matches("django.ref", "django.ref")
    assert label_matches("django.ref.contrib.gis", "django.ref")
    assert not label_matches("django.releases", "django.ref")  # a string prefix is not a label below
    assert not label_matches(None, "django.ref")


def _row(label, budget, g, o, n):
    return {"set": "docs-web", "label": label, "site": label.split(".")[0], "budget": budget,
            "kind": "near" if budget == 100 else "far",
            **{m: {"found": v} for m, v in (("general", g), ("own site", o), ("none", n))}}


def test_summary_totals_ratios_and_target():
    live = {"runs": [_row("django.ref", 100, 9, 10, 5), _row("django.ref", 200, 20, 20, 10),
                     _row("scipy.stats", 100, 3, 10, 10)]}
    s = summarize_live(live)
    g = s["docs-web"]
    assert (g["tasks"], g["general"], g["own site"], g["none"]) == (3, 32, 40, 25)
    assert g["general_over_own"] == pytest.approx(0.8) and not g["target_met"]
    assert g["wtl_general_vs_own"] == [0, 1, 2]
    d = s["docs-web / django"]
    assert d["general_over_own"] == pytest.approx(29 / 30) and d["target_met"] == (TARGET <= 29 / 30)
    assert s["all test tasks"]["tasks"] == 3
    assert s["docs-web / near seed"]["tasks"] == 2 and s["docs-web / far seed"]["tasks"] == 1


def test_candidate_row_rules(tiny_corpus):
    from gym_crawl.text.general import general_rows
    from gym_crawl.text.model import get_text_model

    tm = get_text_model(tiny_corpus)
    words = ["geology", "nevereverseen"]
    k = tm.dim
    idf, both = candidate_rows(tm, words, "meaning+identity")
    assert np.array_equal(both, general_rows(tm, words)[1]) and both.shape == (2, 2 * k)
    _, meaning = candidate_rows(tm, words, "meaning")
    np.testing.assert_allclose(meaning[0], tm.vectors[tiny_corpus.word_id("geology")], atol=1e-6)
    _, summed = candidate_rows(tm, words, "sum")
    assert summed.shape == (2, k) and np.allclose(np.linalg.norm(summed, axis=1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="rows must be one of"):
        candidate_rows(tm, words, "other")
