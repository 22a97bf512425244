"""Every saved model carries its configuration (env id, feature set, category slots, text model, K, reducer):
it loads and deploys with no flags, offline and live, makes the decisions it made before it was saved, and a
contradicting configuration is refused with one message naming both."""
from __future__ import annotations

import json

import numpy as np
import pytest
from test_wikispeedia import make_fake

import gym_crawl.text.model as model_mod
from gym_crawl.agents import Agent, make_agent, make_env_for, run_episode
from gym_crawl.agents.env_config import MODEL_FIXED_KEYS, load_model_config, read_env_config
from gym_crawl.agents.live_crawl import crawl_live
from gym_crawl.cli import main
from gym_crawl.corpus import load_corpus
from gym_crawl.web.policy import FetchPolicy
from gym_crawl.web.serve.server import serve_corpus
from gym_crawl.web.settings import LiveCrawlSettings

pytestmark = pytest.mark.filterwarnings("ignore:topic '.*left out:UserWarning",
                                      "ignore:.*general English text model.*",
                                      "ignore:.*content fingerprint.*:UserWarning")


@pytest.fixture(scope="module")
def synthetic():
    return load_corpus("synthetic-1000")


def _trained(name: str, corpus, tmp_path, steps: int = 30, **config):
    agent = make_agent(name, **config)
    run_episode(make_env_for(agent, corpus=corpus, max_episode_steps=steps), agent, seed=0)
    return agent, agent.save(tmp_path / f"{name}.npz")


@pytest.mark.parametrize("name", ["best-first-mix", "hashed-q", "online-classifier", "lfa-async"])
def test_a_saved_learner_records_its_env_and_decides_as_before(name, synthetic, tmp_path):
    agent, path = _trained(name, synthetic, tmp_path)
    cfg = load_model_config(path)
    view_cfg = make_env_for(agent, corpus=synthetic, max_episode_steps=5).unwrapped.view.model_config
    assert cfg.env_id == "WikiCrawl-v3" and cfg.kwargs["features"] == view_cfg["features"]
    assert cfg.kwargs["n_categories"] == 4 and cfg.feature_dim == view_cfg["feature_dim"]
    assert cfg.text_model == {"kind": "corpus", "corpus": "synthetic-1000", "dim": 64}
    loaded = Agent.load(path, expect=name)
    assert loaded.env_config.kwargs == cfg.kwargs and set(MODEL_FIXED_KEYS) <= loaded.env_config.fixed
    # the same decisions: the saved agent and the loaded copy crawl the same pages from the same seed
    ours = run_episode(make_env_for(agent, corpus=synthetic, max_episode_steps=25), agent, seed=3)
    theirs = run_episode(make_env_for(loaded, corpus=synthetic, max_episode_steps=25), loaded, seed=3)
    assert list(ours.fetched) == list(theirs.fetched) and ours.relevant_found == theirs.relevant_found


def test_the_cli_deploys_a_saved_model_with_no_flags_and_refuses_another_configuration(synthetic, tmp_path, capsys):
    _, path = _trained("best-first-mix", synthetic, tmp_path, features="hashed-transferable")
    # --agent NAME --load MODEL: the saved feature set, not the agent's default (hashed-site)
    assert main(["crawl", "--agent", "best-first-mix", "--load", str(path), "--corpus", "synthetic-1000",
                 "--steps", "5", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["features"], row["env_id"]) == ("hashed-transferable", "WikiCrawl-v3")
    assert main(["crawl", "--agent", "best-first-mix", "--load", str(path), "--corpus", "synthetic-1000",
                 "--steps", "5", "--features", "hashed-site"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gym-crawl: error: ") and err.count("\n") == 1 and str(path) in err
    trained, asked = err.split("Trained: ")[1].split("; asked: ")
    assert "features 'hashed-transferable'" in trained and "text model: corpus 'synthetic-1000' (64-dim)" in trained
    assert "features 'hashed-site'" in asked and "--features hashed-transferable" in asked


def test_refusals_name_both_configurations(synthetic, tmp_path):
    _, path = _trained("online-classifier", synthetic, tmp_path)
    agent = Agent.load(path)
    for over, words in [({"features": "combined"}, "features 'combined'"),
                        ({"n_categories": 2}, "2 category slots"),
                        ({"text": {"dim": 32}}, "(32-dim)"),
                        ({"text": {"general": True}}, "the general English model")]:
        with pytest.raises(ValueError, match="Trained: features 'hashed-transferable'") as e:
            make_env_for(agent, corpus=synthetic, max_episode_steps=5, **over)
        assert words in str(e.value).split("; asked: ")[1]
    # K and the reducer choose which candidates are offered, not what a column means: the saved ones are defaults
    env = make_env_for(agent, corpus=synthetic, max_episode_steps=5, max_candidates=16, reducer="outlinks")
    assert env.unwrapped.view.max_candidates == 16


def test_a_built_env_with_another_text_width_is_refused_before_any_step(synthetic, tmp_path):
    from gym_crawl.text.model import TextModel

    _, path = _trained("best-first-mix", synthetic, tmp_path)
    agent = Agent.load(path)
    other = TextModel.build(synthetic, dim=16, progress=False)
    with pytest.raises(ValueError, match=r"trained with the text model corpus 'synthetic-1000' \(64-dim\), but "
                                         r"the text model corpus 'synthetic-1000' \(16-dim\)"):
        make_env_for(agent, corpus=synthetic, max_episode_steps=5, text=other)


def test_a_file_without_a_configuration_says_what_to_give(tmp_path):
    p = tmp_path / "old.npz"
    header = json.dumps({"agent": "online-classifier", "config": {}}).encode()
    np.savez(p, __header__=np.frombuffer(header, np.uint8), w=np.zeros(3))
    with pytest.raises(ValueError, match="records no model configuration.*--features"):
        load_model_config(p)
    with pytest.raises(ValueError, match=r"text_model must be an object with a kind"):
        read_env_config({"features": "hashed", "text_model": {"kind": "glove", "dim": 3}})


@pytest.fixture
def general_source(tmp_path, monkeypatch):
    """A tiny Wikispeedia as the general English model's source: a live crawl's default text model is then the
    general model, whose rows are [meaning, identity] (2 x 64 dims) — wider than a synthetic web's own."""
    monkeypatch.setenv("GYM_CRAWL_WIKISPEEDIA", str(make_fake(tmp_path / "wikispeedia")))
    model_mod._GENERAL_MODELS.clear()
    yield
    model_mod._GENERAL_MODELS.clear()


def test_a_learner_trained_on_a_synthetic_web_deploys_live_with_no_flags(synthetic, tmp_path, general_source,
                                                                         capsys):
    agent, path = _trained("best-first-mix", synthetic, tmp_path)
    with serve_corpus(synthetic, n_hosts=2) as site:
        seed = site.page_urls[synthetic.page_id("Geology")]
        # the trap: the live default text model is the general one, 128-dim where the synthetic web's is 64
        from gym_crawl.web import LiveWeb

        web = LiveWeb([seed], fetch=lambda url: None)
        plain = make_env_for("best-first-mix", corpus=web, topic="geology", max_episode_steps=3)
        assert plain.unwrapped.view.model_config["text_model"]["kind"] == "general"
        assert plain.unwrapped.view.feature_dim == load_model_config(path).feature_dim + 128
        plain.close()
        # the fix: the saved model names its text model; the live crawl uses that corpus' word vectors
        loaded = Agent.load(path)
        ref = LiveWeb([seed], fetch=lambda url: None, text=loaded.env_config.live_text())
        env = make_env_for(loaded, corpus=ref, topic="geology", max_episode_steps=3)
        assert env.unwrapped.view.model_config["text_model"] == load_model_config(path).text_model
        env.close()
        with pytest.raises(ValueError, match="text model differs.*Trained: .*corpus 'synthetic-1000'.*this env: "
                                             ".*hashed words"):
            make_env_for(loaded, corpus=LiveWeb([seed], fetch=lambda url: None), topic="geology")
        settings = LiveCrawlSettings(seeds=(seed,), topic="geology", max_pages=8, scope="any",
                                     policy=FetchPolicy(delay=0.0, rate=None))
        res = crawl_live(loaded, settings, progress=None, handle_signals=False)
        assert res.episode.steps == 8
        assert main(["crawl", "--live", seed, "--topic", "geology", "--agent", "best-first-mix", "--load", str(path),
                     "--max-pages", "6", "--delay", "0", "--scope", "any", "--json"]) == 0
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert out["steps"] == 6
        # another explicit text model is refused, naming both, before any request
        assert main(["crawl", "--live", seed, "--topic", "geology", "--agent", "best-first-mix", "--load", str(path),
                     "--max-pages", "6", "--delay", "0", "--text", "general"]) == 2
        err = capsys.readouterr().err
        assert "corpus 'synthetic-1000' (64-dim)" in err and "the general English model" in err


def test_a_gym_crawl_train_output_deploys_live_with_no_flags(tiny_corpus, tmp_path, capsys):
    """``gym-crawl train`` writes the text model, category slots and feature width with the policy: ``crawl --live
    URL --agent sb3:DIR`` builds the env it was trained on, the training corpus as the live web's reference."""
    pytest.importorskip("sb3_contrib", reason="Stable-Baselines3 is the optional extra 'sb3' (in 'dev')")
    from gym_crawl.agents.sb3.train import TrainConfig, train

    corpus_dir = str(tiny_corpus.save(tmp_path / "tiny"))
    out = tmp_path / "run"
    train(TrainConfig(algo="maskable-ppo", wrapper="discrete", policy="scoring", corpus=corpus_dir,
                      train_topics=["geology"], eval_topics=[], timesteps=64, n_envs=1, seed=0, out=str(out),
                      max_candidates=8, max_episode_steps=20, hidden=[8], hyper={"n_steps": 32, "batch_size": 32},
                      checkpoint_freq=0, progress_bar=False, tensorboard=False, vec="dummy", features="han2018",
                      prior="none"))
    cfg = load_model_config(out)
    assert cfg.text_model == {"kind": "corpus", "corpus": corpus_dir, "dim": 64}
    assert cfg.kwargs["features"] == "han2018" and cfg.kwargs["n_categories"] == 4 and cfg.feature_dim
    with serve_corpus(tiny_corpus, n_hosts=2) as site:
        seed = site.page_urls[tiny_corpus.page_id("Geology")]
        assert main(["crawl", "--live", seed, "--topic", "geology", "--agent", f"sb3:{out}", "--max-pages", "5",
                     "--delay", "0", "--scope", "any", "--json"]) == 0
        row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert row["steps"] == 5
        assert main(["crawl", "--live", seed, "--topic", "geology", "--agent", f"sb3:{out}", "--max-pages", "5",
                     "--delay", "0", "--features", "combined"]) == 2
        err = capsys.readouterr().err
        assert "Trained: features 'han2018'" in err and "asked: features 'combined'" in err
