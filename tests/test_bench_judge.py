"""``gym-crawl bench judge``: its agreement figures are the standard ones, and the benchmark runs on the docs-web
corpus when it is built (skipped otherwise)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from gym_crawl.benchmarks.judge import agreement, main


def test_agreement_is_auc_precision_and_recall():
    y = np.array([True, True, False, False, False])
    scores = np.array([0.9, 0.4, 0.6, 0.2, 0.1])
    m = agreement(y, scores, scores > 0.5)
    assert m["auc"] == pytest.approx(5 / 6)  # 5 of the 6 (relevant, irrelevant) pairs ordered right
    assert m["precision"] == pytest.approx(0.5) and m["recall"] == pytest.approx(0.5)
    none = agreement(y, scores, np.zeros(5, bool))
    assert none["precision"] == 0.0 and none["recall"] == 0.0


def test_quick_run_on_the_docs_web_corpus(tmp_path):
    from gym_crawl.text.general import general_source_path

    path = os.environ.get("GYM_CRAWL_DOCS_WEB")
    if not path or general_source_path() is None:
        pytest.skip("needs a built docs-web corpus named by $GYM_CRAWL_DOCS_WEB and the general model's source "
                    "($GYM_CRAWL_WIKISPEEDIA or gym-crawl download wikispeedia)")
    assert main(["--quick", "--corpus-path", path, "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "judge.json").read_text())
    res = out.get("result", out)
    assert res["tasks"] == 3 and res["draws"] == 2 and os.path.exists(tmp_path / "judge.png")
    for judge, scopes in res["summary"].items():
        for scope, mets in scopes.items():
            assert 0.0 <= mets["auc"]["mean"] <= 1.0 and 0.0 <= mets["recall"]["mean"] <= 1.0, (judge, scope)
