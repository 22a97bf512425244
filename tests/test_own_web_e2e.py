"""Your own web, end to end from the command line, as the README's "Your own web" walks it, on a loopback site of
four hosts (one subject each): crawl it live into a WARC, compile it with label rules and a label map, list the
labels, train on it (named topics from the crawl's own seeds, and its task set split by site), evaluate agents on
its task set, and deploy the trained policy as a live crawler with no further flags. Every step is a separate
``gym-crawl`` process that must exit 0 without a traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.corpus import Corpus, CorpusBuilder
from gym_crawl.web.serve.server import serve_corpus
from tests.conftest import VOCAB

pytest.importorskip("warcio")
pytest.importorskip("sb3_contrib")

SUBJECTS = {"geo": "geology", "med": "medicine", "art": "poetry", "gen": "society"}
TRAIN = ["--timesteps", "64", "--n-envs", "1", "-K", "8", "--hidden", "8", "--no-progress", "--no-tensorboard",
         "--checkpoint-freq", "0", "--vec", "dummy", "--hyper", '{"n_steps": 32, "batch_size": 32}']


def _four_sites(n: int = 96, seed: int = 3) -> Corpus:
    """A small web where each subject is one site (domain ``<kind>.org``), with topical locality and a hub."""
    rng = np.random.default_rng(seed)
    kinds = list(SUBJECTS)
    b = CorpusBuilder(name="four-sites")
    for i in range(n):
        k = kinds[i % 4]
        words = list(rng.choice(VOCAB[k], 30)) + list(rng.choice(VOCAB["gen"], 20))
        title = {0: "Geology", 1: "Cancer", 2: "Poetry", 3: "Home"}.get(i, f"{k} {VOCAB[k][i % 10]} {i}")
        b.add_page(title, " ".join(words), domain=f"{k}.org")
    for i in range(n):
        for j in rng.choice(n, 10, replace=False).tolist():
            if j != i and (j % 4 == i % 4 or rng.random() < 0.3):
                b.add_link(i, j, context=" ".join(rng.choice(VOCAB[kinds[j % 4]], 4)))
        if i != 3:
            b.add_link(i, 3)
        b.add_link(3, i)  # the home page links every page: a crawl from it reaches the whole site
    return b.build()


def _run(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([sys.executable, "-m", "gym_crawl", *args], cwd=cwd, capture_output=True, text=True,
                       timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"}, check=False)
    assert p.returncode == 0, f"gym-crawl {' '.join(args)} -> {p.returncode}\n{p.stderr}"
    assert "Traceback" not in p.stderr, p.stderr
    return p


def test_your_own_web_from_the_command_line(tmp_path: Path) -> None:
    web = _four_sites()
    with serve_corpus(web, n_hosts=4) as site:
        urls = site.page_urls
        home = urls[web.page_id("Home")]
        host_of = {k: urls[web.page_id(t)].rsplit("/wiki/", 1)[0] for k, t in
                   (("geo", "Geology"), ("med", "Cancer"), ("art", "Poetry"), ("gen", "Home"))}
        assert len(set(host_of.values())) == 4  # one subject per host
        live = ["--delay", "0", "--rate", "0", "--scope", "any", "--user-agent-contact", "https://example.org/c"]
        # 1. crawl the site live into a WARC
        _run("crawl", "--live", home, "--agent", "bfs", "--topic", "geology", "--max-pages", "80",
             "--warc", "crawl.warc.gz", *live, cwd=tmp_path)
        # 2. compile it with labels: a site -> label rule each, a regular expression, a URL map
        (tmp_path / "rules.tsv").write_text(
            "# site\tlabel\n" + "".join(f"{host_of[k]}/\t{SUBJECTS[k]}\n" for k in ("geo", "art", "gen"))
            + "re:/wiki/(med_|Cancer)\tmedicine\n")
        (tmp_path / "labels.tsv").write_text(f"{urls[web.page_id('Geology')]}\tgeology\tfeatured\n")
        p = _run("corpus", "compile", "crawl.warc.gz", "mycorpus", "--label-rules", "rules.tsv",
                 "--labels", "labels.tsv", cwd=tmp_path)
        assert p.stdout.strip() == "mycorpus"
        # 3. what it holds: the labels with their page counts, the crawl's seed
        p = _run("corpus", "info", "mycorpus", "--json", cwd=tmp_path)
        info = json.loads(p.stdout)
        counts = {t["label"]: t["pages"] for t in info["top_labels"]}
        assert set(counts) == {"geology", "medicine", "poetry", "society", "featured"}
        assert sum(v for k, v in counts.items() if k != "featured") == info["pages"]
        p = _run("corpus", "info", "mycorpus", cwd=tmp_path)
        assert home in p.stdout  # the recorded seed
        # 4. train: named topics from the crawl's own seed; then the task set of its labels, split by site
        _run("train", "--corpus", "mycorpus", "--train-topics", "geology,poetry", "--eval-topics", "medicine",
             "--max-episode-steps", "15", "--out", "named", *TRAIN, cwd=tmp_path)
        cfg = json.loads((tmp_path / "named" / "config.json").read_text())
        assert cfg["train_topics"] == ["geology", "poetry"]  # the env finds the corpus' own seeds itself
        p = _run("train", "--corpus", "mycorpus", "--split", "site", "--seeds", "1", "--baseline-seeds", "1",
                 "--out", "run", *TRAIN, cwd=tmp_path)
        rep = json.loads((tmp_path / "run" / "report.json").read_text())
        assert rep["task_set"] == "corpus:mycorpus@site" and rep["test_tasks"]
        # 5. evaluate agents on the corpus' task set
        p = _run("eval", "--corpus", "mycorpus", "--split", "site", "--agents", "online-classifier", "--seeds", "2",
                 "--json", "eval.json", cwd=tmp_path)
        res = json.loads((tmp_path / "eval.json").read_text())
        assert res["set"] == "corpus:mycorpus@site" and res["agents"]["oracle"]["iqm"] == pytest.approx(1.0)
        assert "| online-classifier |" in p.stdout
        # 6. deploy what train wrote as a live crawler: no flag but the model
        p = _run("crawl", "--live", home, "--topic", "geology", "--agent", "sb3:run/seed0", "--max-pages", "10",
                 "--json", *live, cwd=tmp_path)
        row = json.loads(p.stdout.strip().splitlines()[-1])
        assert row["steps"] == 10 and row["pages_fetched"] == 11
