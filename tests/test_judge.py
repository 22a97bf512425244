"""The judge a user controls: a page classifier built from example pages (files, WARC, URLs fetched by the crawl's
own polite fetcher) becomes the reward and the relevant count of a live crawl on a loopback web; bad example inputs
are refused in one line; the CLI flags reach the crawl."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.agents.live_crawl import JUDGE_KIND, crawl_live, recorded_judge
from gym_crawl.relevance.judge import (
    ExampleJudge,
    JudgeError,
    JudgeReward,
    JudgeText,
    WordsJudge,
    build_judge,
    judge_from_dict,
    load_judge,
)
from gym_crawl.web.example_pages import ExampleError, read_example_pages
from gym_crawl.web.live import LiveWeb
from gym_crawl.web.serve.server import serve_site
from gym_crawl.web.serve.site import html_page
from gym_crawl.web.settings import LiveCrawlSettings
from gym_crawl.web.warc_io import read_metadata

SKY = ("telescope orbit planet comet nebula galaxy asteroid eclipse constellation meteor quasar pulsar supernova "
       "observatory satellite lunar solar crater spectrum redshift").split()
FOOD = ("recipe oven flour butter sugar onion garlic simmer skillet pastry dough yeast vinegar saucepan broth "
        "spinach pepper basil roast noodle").split()
ON = [f"/sky/{i}.html" for i in range(8)]
OFF = [f"/food/{i}.html" for i in range(8)]


def _text(words: list[str], i: int, n: int = 40) -> str:
    rng = np.random.default_rng(i)
    return " ".join(rng.choice(words, size=n).tolist()) + " page"


def _pages() -> dict[str, bytes]:
    """A loopback site: eight pages about the sky, eight about food; none says 'astronomy'; every page links to
    every other."""
    paths = ON + OFF
    pages = {}
    for j, p in enumerate(paths):
        words = SKY if p in ON else FOOD
        links = [(q, f"page {k}") for k, q in enumerate(paths) if q != p]
        pages[p] = html_page(f"page {j}", f"<p>{_text(words, j)}</p>", links)
    pages["/"] = html_page("home", "<p>welcome index</p>", [(q, f"page {k}") for k, q in enumerate(paths)])
    return pages


@pytest.fixture(scope="module")
def site():
    with serve_site({"h0": _pages()}) as s:
        yield s


@pytest.fixture
def example_files(tmp_path: Path) -> dict[str, Path]:
    """Two sky pages and one food page as files (not pages of the site)."""
    out = {}
    for name, words, i in (("sky1.html", SKY, 101), ("sky2.txt", SKY, 102), ("food.html", FOOD, 103)):
        p = tmp_path / name
        text = _text(words, i)
        p.write_bytes(html_page(name, f"<p>{text}</p>") if name.endswith(".html") else text.encode())
        out[name] = p
    return out


def _settings(site, **kw) -> LiveCrawlSettings:
    from gym_crawl.web.policy import FetchPolicy

    base = dict(seeds=(site.url("h0", "/"),), topic="astronomy", max_pages=16, policy=FetchPolicy(delay=0.0, rate=None),
                general_text=False)
    base.update(kw)
    return LiveCrawlSettings(**base)


def _path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


# ------------------------------------------------------------------ the judge on a loopback web
def test_judge_from_examples_is_the_reward_and_the_relevant_count(site, example_files, tmp_path):
    warc = tmp_path / "crawl.warc.gz"
    s = _settings(site, examples=(str(example_files["sky1.html"]), str(example_files["sky2.txt"])),
                  counter_examples=(str(example_files["food.html"]),))
    res = crawl_live(make_agent("best-first"), s, warc=warc, progress=None, handle_signals=False)
    landed = [_path(u) for u in res.landed_urls]
    on = [p in ON for p in landed]
    assert sum(on) >= 4 and len(on) - sum(on) >= 4  # the crawl reached both kinds of page
    # the judge called exactly the sky pages relevant: the summary's relevant count is theirs
    summary = res.summary()
    assert summary["relevant_found"] == sum(on)
    assert summary["judge"]["kind"] == "examples" and summary["judge"]["positives"] == 2
    # each step's reward is the judge's mapping of its page: 30 for a sky page, -1 otherwise (the home page too)
    expected = [30.0 if _path(u) in ON else -1.0 for u in res.fetched_urls]
    assert res.episode.rewards.tolist() == expected
    # the judge is recorded in the WARC, and reads back to the same scores
    rec = list(read_metadata(warc, JUDGE_KIND))
    assert len(rec) == 1
    j = judge_from_dict(rec[0], JudgeText.default(False))
    texts = [_text(SKY, 7), _text(FOOD, 7)]
    p = j.proba_texts(texts)
    assert p[0] > 0.5 > p[1]
    # a replay of the WARC with the recorded judge gives the same rewards and relevant count, without a request
    n_log = len(site.requests())
    replay = LiveWeb.from_warc(warc)
    env = make_env_for(make_agent("best-first"), corpus=replay, topic="astronomy", max_episode_steps=16,
                       text={"general": False}, reward=JudgeReward(recorded_judge(warc, JudgeText.default(False))))
    again = run_episode(env, make_agent("best-first"), seed=0)
    replay.close()
    assert len(site.requests()) == n_log
    assert again.reward_sum == res.episode.reward_sum and again.relevant_found == res.episode.relevant_found


def test_the_topic_words_alone_find_nothing_there(site):
    """The control: no page says 'astronomy', so the default judge (the topic words) calls none relevant."""
    res = crawl_live(make_agent("best-first"), _settings(site), progress=None, handle_signals=False)
    assert res.summary()["relevant_found"] == 0 and res.summary()["judge"] == {"kind": "words"}


def test_example_urls_are_fetched_by_the_crawl_within_its_budget(site, example_files):
    before = len(site.requests())
    urls = (site.url("h0", ON[0]), site.url("h0", ON[1]))
    s = _settings(site, examples=urls, counter_examples=(str(example_files["food.html"]),), max_pages=10)
    res = crawl_live(make_agent("best-first"), s, progress=None, handle_signals=False)
    log = [e.path for e in site.requests()[before:] if e.path != "/robots.txt"]
    assert log[:2] == [ON[0], ON[1]]  # fetched first, by the crawl's own fetcher
    assert len(log) == len(set(log))  # and never again when the crawl reaches them (the fetch cache)
    summary = res.summary()
    assert summary["aside_fetches"] == 2
    assert summary["steps"] == 10 - 2  # the example URLs count in the budget
    assert summary["judge"]["kind"] == "examples"


def test_an_example_url_outside_the_scope_is_refused_in_one_line(site, example_files):
    s = _settings(site, examples=("http://127.0.0.1:9/elsewhere.html",))
    with pytest.raises(ExampleError, match=r"^--examples http://127\.0\.0\.1:9/elsewhere\.html: the fetch failed "
                                           r"\(out-of-scope\)$"):
        crawl_live(make_agent("best-first"), s, progress=None, handle_signals=False)


# ------------------------------------------------------------------ bad example inputs
def test_bad_example_inputs_are_refused_in_one_line(tmp_path):
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"<html><body>   </body></html>")
    blank = tmp_path / "blank.txt"
    blank.write_text("a I of the")  # stop words and one-letter tokens only
    binary = tmp_path / "photo.jpg"
    binary.write_bytes(b"\xff\xd8\xff\xe0" + bytes(range(256)))
    broken = tmp_path / "broken.warc.gz"
    broken.write_bytes(gzip.compress(b"this is not a WARC record\r\n\r\n"))
    nohtml = tmp_path / "nohtml.warc.gz"
    _write_warc(nohtml, [("http://h.example/pic", "200 OK", "image/png", b"\x89PNG")])
    folder = tmp_path / "nothing"
    folder.mkdir()
    cases = [(tmp_path / "missing.html", "no such file or folder"), (empty, "no words in it"),
             (blank, "no words in it"), (binary, "not UTF-8 text or HTML"), (broken, "not a readable WARC file"),
             (nohtml, "holds no HTML page"), (folder, "holds no example file"), ("ftp://x.org/a", "only http"),
             ("http://", "not a URL the crawler can fetch")]
    for spec, why in cases:
        with pytest.raises(ExampleError) as e:
            read_example_pages([str(spec)], "--examples")
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith(f"--examples {spec}") and why in msg, msg


def test_files_folders_and_warcs_are_read(tmp_path, example_files):
    got = read_example_pages([str(example_files["sky1.html"]), str(example_files["sky2.txt"]),
                              "http://h.example/a", "http://h.example/a"])
    assert [p.source for p in got.pages] == [str(example_files["sky1.html"]), str(example_files["sky2.txt"])]
    assert all(set(p.text.split()) & set(SKY) for p in got.pages)
    assert got.urls == ["http://h.example/a"]
    assert len(read_example_pages([str(example_files["sky1.html"].parent)]).pages) == 3  # the folder's files
    # a WARC as any crawler writes it: its HTML responses (status 200) are the examples, other records skipped
    warc = tmp_path / "ex.warc.gz"
    _write_warc(warc, [("http://h.example/sky", "200 OK", "text/html; charset=utf-8",
                        html_page("sky", f"<p>{_text(SKY, 5)}</p>")),
                       ("http://h.example/gone", "404 Not Found", "text/html", html_page("gone", "<p>missing</p>")),
                       ("http://h.example/pic", "200 OK", "image/png", b"\x89PNG")])
    pages = read_example_pages([str(warc)]).pages
    assert len(pages) == 1 and pages[0].source == f"{warc}#http://h.example/sky"
    assert set(pages[0].text.split()) & set(SKY)


def _write_warc(path: Path, responses: list[tuple[str, str, str, bytes]]) -> None:
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        for url, status, ctype, body in responses:
            http = StatusAndHeaders(status, [("Content-Type", ctype)], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))


def test_a_judge_built_from_examples_separates_and_round_trips(tmp_path):
    sp = JudgeText.default(False)
    j = build_judge(["astronomy"], [_text(SKY, 1), _text(SKY, 2), _text(SKY, 3)], [_text(FOOD, 4)], space=sp)
    assert isinstance(j, ExampleJudge)
    on = j.proba_texts([_text(SKY, i) for i in range(20, 30)])
    off = j.proba_texts([_text(FOOD, i) for i in range(20, 30)] + ["welcome index"])
    assert j.relevant(on).all() and not j.relevant(off).any()
    assert j(_text(SKY, 40)) == pytest.approx(float(j.proba_texts([_text(SKY, 40)])[0]))
    path = tmp_path / "judge.json"
    j.save(path)
    back = load_judge(path, sp)
    texts = [_text(SKY, 9), _text(FOOD, 9)]
    assert np.array_equal(back.proba_texts(texts), j.proba_texts(texts))
    d = json.loads(path.read_text())
    d["space"] = "general:0123456789abcdef"
    with pytest.raises(JudgeError, match="built in text space 'general:0123456789abcdef', this process has 'hashed'"):
        judge_from_dict(d, sp)
    with pytest.raises(JudgeError, match="not a gym_crawl judge"):
        judge_from_dict({"format": "other"}, sp)
    with pytest.raises(JudgeError, match="pages to contrast them with"):
        build_judge(["astronomy"], [_text(SKY, 1)], space=sp)  # no counter-examples and no background here
    with pytest.raises(JudgeError, match="at least one example page with words"):
        build_judge(["astronomy"], ["the of a"], [_text(FOOD, 4)], space=sp)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the stand-in Wikispeedia is not the reference copy
def test_background_negatives_come_from_the_general_model(tmp_path, monkeypatch):
    """Without counter-examples the negatives are articles of the general model's source (here a tiny stand-in)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_wikispeedia import make_fake

    monkeypatch.setenv("GYM_CRAWL_WIKISPEEDIA", str(make_fake(tmp_path / "wikispeedia")))
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    sp = JudgeText.default(True)
    assert sp.fingerprint.startswith("general:")
    j = build_judge(["astronomy"], [_text(SKY, 1), _text(SKY, 2)], space=sp)
    assert j.meta["background"] > 0 and j.meta["negatives"] == 0
    assert j.proba_texts([_text(SKY, 3)])[0] >= 0.5


def test_words_judge_is_the_default_relevant_flag():
    """The words judge calls a page relevant exactly when it holds a topic word (the han2018 reward's flag)."""
    sp = JudgeText.default(False)
    w = WordsJudge(["Comet", "tail"], sp)
    s = w.proba_texts(["a comet passed", "its tail glowed and the comet too", "nothing of the kind", ""])
    assert w.relevant(s).tolist() == [True, True, False, False] and s[1] > s[0] > 0
    with pytest.raises(JudgeError, match="no word left"):
        WordsJudge(["a", "the"], sp)
    with pytest.raises(ValueError, match="hit"):
        JudgeReward(w, hit=0.0, miss=1.0)


# ------------------------------------------------------------------ the command line
def test_cli_flags_reach_the_crawl(site, example_files, tmp_path):
    cmd = [sys.executable, "-m", "gym_crawl", "crawl", "--live", site.url("h0", "/"), "--agent", "best-first",
           "--topic", "astronomy", "--max-pages", "8", "--delay", "0", "--rate", "0", "--text", "none", "--json",
           "--examples", str(example_files["sky1.html"]), str(example_files["sky2.txt"]),
           "--counter-examples", str(example_files["food.html"])]
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["judge"]["kind"] == "examples" and out["judge"]["negatives"] == 1 and out["relevant_found"] >= 1


def test_cli_refuses_a_bad_example_before_any_request(site, tmp_path):
    before = len(site.requests())
    p = subprocess.run([sys.executable, "-m", "gym_crawl", "crawl", "--live", site.url("h0", "/"), "--topic", "x y",
                        "--examples", str(tmp_path / "nope.html")], check=False, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2
    missing = tmp_path / "nope.html"
    assert p.stderr.strip().splitlines()[-1] == f"gym-crawl: error: --examples {missing}: no such file or folder"
    assert len(site.requests()) == before
    p = subprocess.run([sys.executable, "-m", "gym_crawl", "crawl", "--live", site.url("h0", "/"), "--topic", "x y",
                        "--counter-examples", str(tmp_path / "nope.html")], check=False, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and "--counter-examples go with --examples" in p.stderr
