"""CLI, agent protocol/registry, baselines, and text-model loading."""
from __future__ import annotations

import json

import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import Agent, agent_names, make_agent, make_env_for, register_agent, run_episode, run_episodes
from gym_crawl.cli import main
from gym_crawl.text import get_text_model, load_word_vectors
from gym_crawl.text.model import TextModel


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    from conftest import make_tiny_corpus

    return str(make_tiny_corpus().save(tmp_path_factory.mktemp("c") / "tiny"))


def test_crawl_json_lines(tiny_path, tmp_path, capsys):
    png = tmp_path / "curve.png"
    code = main(["crawl", "--agent", "random,bfs,best-first", "--corpus", tiny_path, "--topic", "cancer",
                 "--steps", "40", "--json", "--plot", str(png)])
    assert code == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert [r["agent"] for r in rows] == ["random", "bfs", "best-first"]
    for r in rows:
        for k in ("agent", "topic", "steps", "relevant_found", "harvest_rate", "relevant_domains", "seconds",
                  "steps_per_second"):
            assert k in r
        assert r["steps"] == 40 and r["topic"] == "cancer"
    assert png.stat().st_size > 1000


def test_crawl_table_and_episodes(tiny_path, tmp_path, capsys):
    assert main(["crawl", "--agent", "best-first", "--corpus", tiny_path, "--steps", "20", "--episodes", "2",
                 "--seed-pages", "Poetry", "--topic", "poetry", "--plot", ""]) == 0
    out = capsys.readouterr().out
    assert "relevant_found" in out and out.count("best-first") == 2


def test_cli_errors_are_clear(tiny_path, capsys):
    assert main(["crawl", "--agent", "nope", "--corpus", tiny_path, "--plot", ""]) == 2
    assert "unknown agent 'nope'" in capsys.readouterr().err
    assert main(["crawl", "--corpus", tiny_path, "--seed-pages", "Nowhere", "--plot", ""]) == 2
    assert "unknown page title 'Nowhere'" in capsys.readouterr().err
    assert main(["bench", "nope"]) == 2
    assert "gym-crawl: error: unknown benchmark 'nope'" in capsys.readouterr().err


def test_corpus_info_and_agents_list(tiny_path, capsys):
    assert main(["corpus", "info", tiny_path, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["pages"] == 600
    assert main(["agents"]) == 0
    assert "best-first" in capsys.readouterr().out


def test_third_party_agent_plugs_in(tiny_corpus):
    class LinkText(Agent):
        name, action_kind = "link-text-test", "page"

        def act(self, obs, info):
            F = self.env.frontier_pages()
            return int(F[np.argmax(self.env.link_scores(F))])

    register_agent("link-text-test", LinkText)
    assert "link-text-test" in agent_names()
    res = run_episode(make_env_for("link-text-test", corpus=tiny_corpus, max_episode_steps=30),
                      make_agent("link-text-test"), seed=0)
    # same priority, through the slot interface
    best = run_episode(make_env_for("best-first", corpus=tiny_corpus, max_episode_steps=30),
                       make_agent("best-first"), seed=0)
    assert res.relevant_found == best.relevant_found
    np.testing.assert_array_equal(res.fetched, best.fetched)


def test_baselines_order_and_oracle_bound(tiny_corpus):
    found = {n: np.mean([r.relevant_found for r in run_episodes(
        make_env_for(n, corpus=tiny_corpus, topic="poetry", reward="labels", max_episode_steps=80), make_agent(n), 3)])
        for n in ("random", "bfs", "best-first", "oracle")}
    assert found["oracle"] >= found["best-first"] > found["random"]


def test_agent_save_load_round_trip(tmp_path):
    a = make_agent("best-first")
    p = a.save(tmp_path / "a.npz")
    b = Agent.load(p)
    assert type(b) is type(a) and b.name == "best-first"
    with pytest.raises(ValueError):
        b.load_state_dict({"w": np.zeros(3)})


def test_glove_text_file_is_aligned_to_vocab(tmp_path, tiny_corpus):
    f = tmp_path / "vec.txt"
    f.write_text("geology 1 0 0\ncancer 0 1 0\nzzz 0 0 1\n")
    W = load_word_vectors(f, tiny_corpus.vocab.tolist())
    assert W.shape == (tiny_corpus.n_words, 3)
    assert W[tiny_corpus.word_id("geology")].tolist() == [1, 0, 0]
    assert not W[tiny_corpus.word_id("poetry")].any()
    (tmp_path / "bad.txt").write_text("geology 1 0 0\ncancer 0 1\n")
    with pytest.raises(ValueError, match="bad.txt:2"):
        load_word_vectors(tmp_path / "bad.txt", tiny_corpus.vocab.tolist())


def test_text_model_is_deterministic_and_uses_a_sample(tiny_corpus):
    a = TextModel.build(tiny_corpus, idf_fraction=0.1, dim=16, seed=3)
    b = TextModel.build(tiny_corpus, idf_fraction=0.1, dim=16, seed=3)
    np.testing.assert_array_equal(a.vectors, b.vectors)
    np.testing.assert_array_equal(a.idf, b.idf)
    assert a.meta["idf_pages"] == 60
    assert get_text_model(tiny_corpus) is get_text_model(tiny_corpus)  # memoized per corpus
    # words of one topic are closer to each other than to another topic's words
    def v(w):
        return a.vectors[tiny_corpus.word_id(w)]
    assert v("volcano") @ v("basalt") > v("volcano") @ v("sonnet")


def test_text_model_disk_cache_is_memory_mapped(tiny_corpus, tmp_path):
    path = tiny_corpus.save(tmp_path / "c")
    from gym_crawl.corpus import Corpus
    from gym_crawl.text.model import _MEMO

    c1 = Corpus.load(path)
    m1 = get_text_model(c1)
    c2 = Corpus.load(path, share=False)  # a new corpus object: memo miss, disk hit
    m2 = get_text_model(c2)
    np.testing.assert_array_equal(m1.vectors, m2.vectors)
    assert isinstance(m2.vectors.base, np.memmap) or isinstance(m2.vectors, np.memmap)
    assert c2 in _MEMO


def test_torch_checkpoints_load_through_the_generic_loader(tiny_corpus, tmp_path):
    pytest.importorskip("torch")
    env = make_env_for("tres", corpus=tiny_corpus, max_episode_steps=30, max_candidates=64)
    agent = make_agent("tres")
    run_episode(env, agent, seed=0)
    path = agent.save(tmp_path / "tres.pt")
    loaded = Agent.load(path)  # not an agent .npz: handed to torch.load(weights_only=True)
    assert loaded.name == "tres" and type(loaded) is type(agent)
    for (k1, v1), (k2, v2) in zip(agent.online.state_dict().items(), loaded.online.state_dict().items()):
        assert k1 == k2 and bool((v1 == v2).all())
    (tmp_path / "junk.npz").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not an agent file"):
        Agent.load(tmp_path / "junk.npz")


# ------------------------------------------------------------------ agent file formats
def test_load_refuses_another_agent(tmp_path, tiny_corpus):
    lfa = make_agent("lfa-async")
    run_episode(make_env_for(lfa, corpus=tiny_corpus, max_episode_steps=10), lfa, seed=0)
    path = lfa.save(tmp_path / "lfa.npz")
    with pytest.raises(ValueError, match="holds agent 'lfa-async', not 'best-first'.*--agent lfa-async"):
        Agent.load(path, expect="best-first")
    code = main(["crawl", "--agent", "best-first", "--load", str(path), "--corpus", "synthetic-1000", "--steps", "5",
                 "--json"])
    assert code == 2


@pytest.mark.parametrize("content, pattern", [
    (b"not a checkpoint", "not an agent file"),
    (None, "without an agent header"),
])
def test_load_names_the_format_and_never_advises_unsafe_loading(tmp_path, content, pattern):
    p = tmp_path / "x.npz"
    if content is None:
        np.savez(p, w=np.zeros(3))  # an npz, but not an agent
    else:
        p.write_bytes(content)
    with pytest.raises(ValueError, match=pattern) as e:
        Agent.load(p)
    assert "weights_only=False" not in str(e.value)


class PickledObject:
    """Any class: torch.save pickles it, and weights-only loading must refuse it."""


def test_unsafe_torch_pickle_is_refused_without_torch_advice(tmp_path):
    torch = pytest.importorskip("torch")

    p = tmp_path / "evil.pt"
    torch.save({"agent": "tres", "obj": PickledObject()}, p)  # a pickled object, not weights
    with pytest.raises(ValueError, match="does not load as plain weights") as e:
        Agent.load(p)
    assert "weights_only=False" not in str(e.value)


def test_sb3_model_zip_points_to_the_agent_npz(tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "model.zip", "w") as z:  # the layout of SB3's model.zip
        z.writestr("data", "{}")
        z.writestr("policy.pth", b"")
    with pytest.raises(ValueError, match="model.zip.*--agent sb3:"):
        Agent.load(tmp_path / "model.zip")


def test_cli_agents_lists_descriptions(capsys):
    assert main(["agents"]) == 0
    out = capsys.readouterr().out
    assert "best-first" in out and "no-learning" in out and "lfa-async" in out


def test_crawl_json_writes_no_plot_unless_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["crawl", "--agent", "random", "--corpus", "synthetic-1000", "--steps", "5", "--json"]) == 0
    assert not (tmp_path / "crawl-curve.png").exists()
    assert main(["crawl", "--agent", "random", "--corpus", "synthetic-1000", "--steps", "5", "--json",
                 "--plot", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").exists()


def test_pinned_v0_builds_without_the_out_of_date_warning(tiny_corpus):
    """The paper reproductions pin WikiCrawl-v0 on purpose; make_env_for builds it without Gymnasium's
    'out of date' warning at every make, with v0's own default reward, and leaves other warnings alone."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = make_env_for("best-first", env_id=gym_crawl.ENV_ID_V0, corpus=tiny_corpus, max_episode_steps=5)
    assert not [w for w in caught if "out of date" in str(w.message)]
    assert env.spec.id == gym_crawl.ENV_ID_V0 and env.spec.kwargs["reward"] == "han2018"
    env.close()
