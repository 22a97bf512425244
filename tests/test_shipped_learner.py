"""The learner the package ships (``best-first-mix+pretrained``): its weights are package data (npz, small, no
pickle) made by one command, it deploys live with no flags, keeps learning from the crawl's own reward, and its
cheap per-step path (a row once per page, scores refreshed every R steps) computes what the exact path does."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gym_crawl.agents import Agent, make_agent, make_env_for, run_episode
from gym_crawl.agents.hashed.online_classifier import shipped_weights_path
from gym_crawl.agents.live_crawl import crawl_live
from gym_crawl.benchmarks.pretrain import AGENT, pretrain
from gym_crawl.cli import main
from gym_crawl.corpus import load_corpus
from gym_crawl.web.policy import FetchPolicy
from gym_crawl.web.serve.server import serve_corpus
from gym_crawl.web.settings import LiveCrawlSettings

pytestmark = pytest.mark.filterwarnings("ignore:.*general English text model.*")


@pytest.fixture(scope="module")
def synthetic():
    return load_corpus("synthetic-1000")


def test_the_shipped_weights_are_small_pickle_free_package_data_with_their_configuration():
    path = shipped_weights_path(AGENT)
    assert path.is_file() and path.stat().st_size <= 2 * 1024 * 1024
    with np.load(path, allow_pickle=False) as z:  # plain arrays and a JSON header
        header = json.loads(bytes(z["__header__"]).decode())
        w = z["w"]
    assert header["agent"] == AGENT and header["env"]["features"] == "hashed"
    assert header["env"]["text_model"] == {"kind": "corpus", "corpus": "synthetic-hard-20000", "dim": 64}
    agent = make_agent(AGENT)  # no options: the shipped weights
    np.testing.assert_array_equal(agent.w, w)
    assert np.count_nonzero(agent.w) > 100 and len(agent.memory) == 0  # learned weights; no examples shipped
    assert agent.env_config.kwargs["features"] == "hashed"
    with pytest.raises(ValueError, match="trained on features 'hashed'.*reads 'hashed-site'"):
        make_agent(AGENT, features="hashed-site")


def test_it_deploys_live_with_no_flags_and_learns_from_the_live_reward(synthetic, tmp_path, capsys):
    shipped = make_agent(AGENT).w.copy()
    with serve_corpus(synthetic, n_hosts=3) as site:
        seed = site.page_urls[synthetic.page_id("Geology")]
        agent = make_agent(AGENT)
        settings = LiveCrawlSettings(seeds=(seed,), topic="geology", max_pages=30, scope="any", concurrency=4,
                                     policy=FetchPolicy(delay=0.0, rate=None))
        res = crawl_live(agent, settings, progress=None, handle_signals=False)
        assert res.episode.steps == 30 and res.episode.relevant_found > 0
        assert not np.array_equal(agent.w, shipped)  # it learned online, from the live topic-word reward
        assert agent.n_pos + agent.n_neg > int(make_agent(AGENT).n_pos + make_agent(AGENT).n_neg)
        assert main(["crawl", "--live", seed, "--topic", "geology", "--agent", AGENT, "--max-pages", "8",
                     "--delay", "0", "--scope", "any", "--json"]) == 0
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert out["steps"] == 8
        # saved after the crawl, it loads again with its configuration
        path = agent.save(tmp_path / "after.npz")
        again = Agent.load(path)
        np.testing.assert_array_equal(again.w, agent.w)
        assert again.env_config.text_model["corpus"] == "synthetic-hard-20000"


def test_rescoring_every_r_steps_scores_what_the_exact_path_scores_after_a_refresh(synthetic):
    exact = make_agent("best-first-mix", features="hashed")
    lazy = make_agent("best-first-mix", features="hashed", rescore_every=5)
    for a in (exact, lazy):
        run_episode(make_env_for(a, corpus=synthetic, topic="geology", max_episode_steps=23), a, seed=1)
    # the same trajectory where the learner's top page and the bandit agree: compare the scores of one frontier
    env = make_env_for(lazy, corpus=synthetic, topic="geology", max_episode_steps=5)
    run_episode(env, lazy, seed=2)
    F = np.asarray(env.unwrapped.view.frontier_pages())
    lazy._since = 10**9  # force a full rescore now
    np.testing.assert_allclose(lazy.frontier_scores(F), lazy.frontier.scores(F, lazy.w, lazy.b), rtol=0, atol=0)
    fr = lazy.frontier
    np.testing.assert_array_equal(fr.row_scores(3, lazy.w), fr.row_scores(0, lazy.w)[3:])


def test_refresh_new_takes_a_row_once_per_page(synthetic):
    agent = make_agent("best-first-mix", features="hashed", refresh="new")
    seen: list[np.ndarray] = []
    real = agent._ingest

    def spy(pages):
        out = real(pages)
        if out is not None:
            seen.append(np.asarray(agent.frontier.page[-out.shape[0]:]).copy())
        return out

    agent._ingest = spy
    run_episode(make_env_for(agent, corpus=synthetic, topic="geology", max_episode_steps=30), agent, seed=0)
    rows = np.concatenate(seen)
    assert len(rows) == len(np.unique(rows))  # no page's row computed twice


def test_live_hashed_tokens_in_one_batch_equal_one_page_at_a_time(synthetic):
    from gym_crawl.features.content import LiveHashedTokens
    from gym_crawl.web import LiveWeb

    with serve_corpus(synthetic, n_hosts=2) as site:
        web = LiveWeb([site.page_urls[synthetic.page_id("Geology")]], text=synthetic, scope="any")
        agent = make_agent("best-first")
        run_episode(make_env_for(agent, corpus=web, topic="geology", max_episode_steps=15), agent, seed=0)
        one, batch = LiveHashedTokens(web, 14), LiveHashedTokens(web, 14)
        pages = np.arange(web.n_discovered)
        batch._cache_pages(pages)
        assert len(pages) > 50
        for p in pages.tolist():
            np.testing.assert_array_equal(one._page_cols(p), batch._page[p])
        web.close()


def _contents(path) -> tuple[dict, dict[str, bytes]]:
    """The header and the arrays' bytes of an agent file (the zip's own timestamps aside)."""
    with np.load(path, allow_pickle=False) as z:
        return (json.loads(bytes(z["__header__"]).decode()),
                {k: z[k].tobytes() + str(z[k].dtype).encode() for k in z.files if k != "__header__"})


def test_pretraining_is_one_deterministic_command(tmp_path):
    a = pretrain("hard", epochs=1, max_tasks=2, out=tmp_path / "a", progress=False)
    b = pretrain("hard", epochs=1, max_tasks=2, out=tmp_path / "b", progress=False)
    assert _contents(tmp_path / "a" / f"{AGENT}.npz") == _contents(tmp_path / "b" / f"{AGENT}.npz")
    assert a["train_tasks"] == 2 and len(a["episodes"]) == 2 and a["model"]["features"] == "hashed"
    assert json.loads((tmp_path / "a" / "pretrain.json").read_text())["bytes"] == a["bytes"] == b["bytes"]


@pytest.mark.slow
def test_the_documented_command_reproduces_the_shipped_weights(tmp_path):
    """``gym-crawl bench pretrain --out agents/data`` wrote the shipped file: the same command writes it again."""
    assert main(["bench", "pretrain", "--out", str(tmp_path)]) == 0
    assert _contents(tmp_path / f"{AGENT}.npz") == _contents(shipped_weights_path(AGENT))


# ------------------------------------------------------------------ crawl --live's default follows the benchmark
def test_the_live_default_follows_the_recorded_benchmark(tmp_path, monkeypatch):
    import argparse

    from gym_crawl.agents import live_default as ld
    from gym_crawl.cli import crawl as cli_crawl

    rec = json.loads(ld.live_default_path().read_text())
    assert ld.live_default_agent() == rec["default"] == ld.decide(rec["groups"])
    # the command line's default with --live is the recorded one (offline: best-first)
    seen = {}
    monkeypatch.setattr(cli_crawl, "_cmd_crawl_live", lambda args, names: seen.setdefault("names", names) and 0)
    p = argparse.ArgumentParser()
    cli_crawl.add_arguments(p)
    cli_crawl.run(p.parse_args(["--live", "http://127.0.0.1:9/", "--topic", "x"]))
    assert seen["names"] == [rec["default"]]

    # the rule: the shipped learner only when its CI lies above best-first's in every group of tasks
    def g(c, b):
        return {"candidate_ci": c, "baseline_ci": b}

    assert ld.decide({"genre": g([0.40, 0.50], [0.20, 0.39]), "topic": g([0.6, 0.7], [0.5, 0.5])}) == ld.CANDIDATE
    assert ld.decide({"genre": g([0.40, 0.50], [0.20, 0.39]), "topic": g([0.3, 0.4], [0.5, 0.5])}) == ld.BASELINE
    assert ld.decide({"genre": g([0.40, 0.50], [0.20, 0.41])}) == ld.BASELINE and ld.decide({}) == ld.BASELINE

    def rows(c, b):
        return {"tasks": 4, "agents": {"best-first": {"iqm": sum(b) / 2, "ci": b, "wtl_vs_best_first": [0, 20, 0]},
                                       "best-first-mix+pretrained/online": {"iqm": sum(c) / 2, "ci": c,
                                                                            "wtl_vs_best_first": [12, 5, 3]}}}

    summary = {"all": rows([0.3, 0.5], [0.1, 0.2]), "genre": rows([0.1, 0.2], [-0.3, -0.3]),
               "topic": rows([0.45, 0.55], [0.5, 0.5])}
    lost = ld.record_from_summary(summary, "best-first-mix+pretrained/online", command="gym-crawl bench transfer")
    assert lost["default"] == ld.BASELINE and "topic: " in lost["why"] and "not above best-first's" in lost["why"]
    summary["topic"] = rows([0.55, 0.65], [0.5, 0.5])
    won = ld.record_from_summary(summary, "best-first-mix+pretrained/online")
    assert won["default"] == ld.CANDIDATE
    path = tmp_path / "live_default.json"
    path.write_text(json.dumps(won))
    assert ld.live_default_agent(path) == ld.CANDIDATE
    path.write_text(json.dumps({**won, "default": "best-first"}))  # a record that contradicts its own figures
    with pytest.raises(ValueError, match="records default 'best-first', but its CIs make it"):
        ld.live_default_agent(path)
    # the command that writes the record from a transfer result
    src = tmp_path / "transfer.json"
    src.write_text(json.dumps({"summary": summary, "meta": {"argv": ["--judge", "words", "--concurrency", "8"]}}))
    assert main(["bench", "live_default", "--from", str(src), "--out", str(tmp_path / "rec.json")]) == 0
    assert json.loads((tmp_path / "rec.json").read_text())["default"] == ld.CANDIDATE
