"""SB3 training helpers, the SB3 agent adapter, the `gym-crawl train` CLI and `gym-crawl bench sb3 --quick`."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch as th

from gym_crawl.agents import make_env_for
from gym_crawl.agents.base import Agent
from gym_crawl.agents.runner import run_episode
from gym_crawl.agents.sb3.agent import SB3Agent, algo_class, load_sb3_agent
from gym_crawl.agents.sb3.train import TrainConfig, main, make_env, train


def cfg_for(corpus_dir: str, out: Path, algo: str, wrapper: str = "discrete", policy: str = "scoring",
            **kw) -> TrainConfig:
    hyper = {"n_steps": 64, "batch_size": 64} if algo in ("ppo", "maskable-ppo") else {}
    if algo in ("dqn", "sac", "td3"):
        hyper = {"learning_starts": 64, "batch_size": 32, "train_freq": 4}
    base = dict(algo=algo, wrapper=wrapper, policy=policy, corpus=corpus_dir, train_topics=["geology", "cancer"],
                eval_topics=["poetry"], timesteps=192, n_envs=1, seed=0, out=str(out), max_candidates=8,
                max_episode_steps=40, hidden=[16], hyper=hyper, checkpoint_freq=0, progress_bar=False,
                tensorboard=False, vec="dummy")
    base.update(kw)
    return TrainConfig(**base)


COMBOS = [("dqn", "discrete", "scoring", {}), ("ppo", "discrete", "scoring", {}), ("a2c", "discrete", "scoring", {}),
          ("maskable-ppo", "discrete", "scoring", {}), ("maskable-ppo", "discrete", "scoring", {"flatten": True}),
          ("ppo", "discrete", "mlp", {}), ("dqn", "discrete", "mlp", {"flatten": True}),
          ("ppo", "continuous", "mlp", {}), ("sac", "continuous", "mlp", {}), ("td3", "continuous", "mlp", {}),
          ("a2c", "continuous", "mlp", {"reducer": "full"})]
#: algorithms whose wrapper and policy kind another algorithm already covers in the default suite: with the slow tests
SLOW_COMBOS = {("dqn", "discrete", "scoring"), ("a2c", "discrete", "scoring"), ("sac", "continuous", "mlp"),
               ("td3", "continuous", "mlp")}


@pytest.mark.parametrize("algo,wrapper,policy,kw", [
    pytest.param(a, w, p, k, marks=[pytest.mark.slow] if (a, w, p) in SLOW_COMBOS and not k else [],
                 id=f"{a}-{w}-{p}{'-flat' if k.get('flatten') else ''}{'-full' if k.get('reducer') else ''}")
    for a, w, p, k in COMBOS])
def test_train_predict_save_load(corpus_dir, tmp_path, algo, wrapper, policy, kw):
    res = train(cfg_for(corpus_dir, tmp_path, algo, wrapper, policy, **kw))
    assert res.timesteps >= 192
    for f in ("model.zip", "agent.npz", "config.json", "results.json"):
        assert (tmp_path / f).exists()
    ev = res.evaluation
    assert [r["topic"] for r in ev["eval"]] == ["poetry"] and {r["topic"] for r in ev["train"]} == {"geology", "cancer"}
    assert all(r["steps"] == 40 and r["relevant_found"] > 0 for r in ev["eval"] + ev["train"])

    # the same observations through: the trained model, SB3's reloaded zip, our pickle-free agent
    env = make_env(res.config, ["poetry"])
    plain = make_env_for(SB3Agent(wrapper=wrapper), corpus=corpus_dir, max_candidates=8, max_episode_steps=40,
                         reducer=res.config.reducer, reward=res.config.reward)
    reloaded = algo_class(algo).load(tmp_path / "model.zip", device="cpu")
    agent = load_sb3_agent(tmp_path)
    assert isinstance(agent, SB3Agent) and agent.config["algo"] == algo
    obs, info = env.reset(seed=4)
    raw, pinfo = plain.reset(seed=4, options={"topic": "poetry"})
    agent.begin_episode(plain.unwrapped.view, np.random.default_rng(0))
    for _ in range(12):
        kw_mask = {"action_masks": env.get_wrapper_attr("action_masks")()} if algo == "maskable-ppo" else {}
        a1, _ = res.model.predict(obs, deterministic=True, **kw_mask)
        a2, _ = reloaded.predict(obs, deterministic=True, **kw_mask)
        a3 = agent.policy_action(raw)
        assert env.action_space.contains(a1)
        np.testing.assert_allclose(a2, a1, rtol=0, atol=1e-6)
        np.testing.assert_allclose(a3, a1, rtol=0, atol=1e-6)
        obs, _, term, trunc, info = env.step(a1)
        raw, _, _, _, pinfo = plain.step(agent.act(raw, pinfo))  # slot or page: the env's own action mode
        assert pinfo["fetched_page"] == info["fetched_page"]  # adapter and wrapper fetch the same page
        if term or trunc:
            break


def test_scoring_agent_runs_with_larger_k_mlp_agent_refuses(corpus_dir, tmp_path):
    scoring = train(cfg_for(corpus_dir, tmp_path / "s", "maskable-ppo")).agent
    mlp = train(cfg_for(corpus_dir, tmp_path / "m", "ppo", policy="mlp")).agent
    big = make_env_for("sb3", corpus=corpus_dir, max_candidates=32, max_episode_steps=30)
    r = run_episode(big, Agent.load(tmp_path / "s" / "agent.npz"), seed=0, options={"topic": "poetry"})
    assert r.steps == 30 and r.invalid_actions == 0 and r.relevant_found > 0
    with pytest.raises(ValueError, match="candidate-scoring"):
        run_episode(big, mlp, seed=0, options={"topic": "poetry"})
    assert scoring.state_dict().keys() == Agent.load(tmp_path / "s" / "agent.npz").state_dict().keys()


def test_agent_file_is_pickle_free(corpus_dir, tmp_path):
    train(cfg_for(corpus_dir, tmp_path, "dqn"))
    with np.load(tmp_path / "agent.npz", allow_pickle=False) as z:
        header = json.loads(bytes(z["__header__"]).decode())
        assert header["agent"] == "sb3" and header["config"]["policy"] == "CandidateScoringDQNPolicy"
        assert all(z[k].dtype != object for k in z.files)


@pytest.mark.slow  # three trainings (~11 CPU-s)
def test_same_seed_same_weights(corpus_dir, tmp_path):
    def weights(out, seed):
        m = train(cfg_for(corpus_dir, out, "ppo", seed=seed, timesteps=128)).model
        return th.cat([p.detach().flatten() for p in m.policy.parameters()])

    a, b, c = weights(tmp_path / "a", 1), weights(tmp_path / "b", 1), weights(tmp_path / "c", 2)
    assert th.equal(a, b) and not th.equal(a, c)


def test_subproc_vec_env_maskable_ppo_and_worker_memory(corpus_dir, tmp_path):
    res = train(cfg_for(corpus_dir, tmp_path, "maskable-ppo", n_envs=2, vec="subproc", timesteps=256,
                        tensorboard=True, checkpoint_freq=128, eval_freq=128))
    assert len(res.worker_memory_mb) == 2 and all(m["rss"] > 0 and m["uss"] > 0 for m in res.worker_memory_mb)
    events = list((tmp_path / "tb").rglob("events.out.tfevents*"))
    assert events
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags = set()
    for ev in events:
        acc = EventAccumulator(str(ev))
        acc.Reload()
        tags |= set(acc.Tags()["scalars"])
    # a run shorter than one episode shows crawl progress and the update's losses, not only time/fps
    assert {"crawl_live/harvest_rate", "crawl_live/relevant_found", "train/loss"} <= tags, sorted(tags)
    assert any((tmp_path / "checkpoints").glob("maskable-ppo_*_steps.zip"))
    assert (tmp_path / "eval" / "evaluations.npz").exists()


def test_cli_train_and_errors(corpus_dir, tmp_path, capsys):
    rc = main(["--algo", "a2c", "--corpus", corpus_dir, "--train-topics", "geology", "--eval-topics", "poetry",
               "--timesteps", "64", "--n-envs", "1", "--out", str(tmp_path), "-K", "8", "--max-episode-steps", "30",
               "--hidden", "8", "--no-progress", "--no-tensorboard", "--checkpoint-freq", "0"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "relevant pages / episode" in out and (tmp_path / "results.json").exists()
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["algo"] == "a2c" and res["policy"] == "scoring" and res["evaluation"]["eval"]["episodes"] == 1
    assert main(["--algo", "sac", "--wrapper", "discrete", "--out", str(tmp_path)]) == 2
    assert main(["--algo", "td3", "--wrapper", "continuous", "--policy", "scoring", "--out", str(tmp_path)]) == 2
    assert "does not fit" in capsys.readouterr().err  # errors go to stderr


@pytest.mark.slow  # a benchmark run (~35 CPU-s)
def test_bench_sb3_quick(corpus_dir, tmp_path):
    from gym_crawl.benchmarks.sb3 import main as bench

    assert bench(["--quick", "--corpus", corpus_dir, "--train-topics", "geology", "--eval-topics", "poetry",
                  "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "sb3_tiny.json").read_text())
    names = [a["name"] for a in res["agents"]]
    assert names[:3] == ["best-first", "random", "oracle"] and "maskable-ppo-scoring" in names
    sb3 = next(a for a in res["agents"] if a["name"] == "maskable-ppo-scoring")
    assert sb3["timesteps"] >= 1500 and sb3["held_out"][0]["steps"] == 200
    assert [t["workers"] for t in res["throughput"] if "steps_per_second" in t] == [1, 1, 2]
    assert all(t["steps_per_second"] > 0 for t in res["throughput"] if "steps_per_second" in t)
    for f in ("sb3_tiny.md", "sb3_tiny.png", "sb3_tiny_throughput.png"):
        assert (tmp_path / f).stat().st_size > 0


def test_untrained_prior_policy_crawls_as_best_first(corpus_dir, tmp_path):
    """``prior="best-first"``: before any update the scoring policy fetches exactly best-first's pages; with
    ``prior="none"`` it does not. A config whose features lack the link score is refused, naming the flag."""
    from gym_crawl.agents import make_agent
    from gym_crawl.agents.sb3.train import build_model, make_vec_env, policy_spec

    def crawl(prior: str) -> np.ndarray:
        cfg = cfg_for(corpus_dir, tmp_path / prior, "maskable-ppo", prior=prior, features="transferable")
        venv = make_vec_env(cfg, cfg.train_topics, 1, 0)
        model = build_model(cfg, venv)
        name, pkw = policy_spec(cfg, int(venv.get_attr("candidate_dim")[0]))
        agent = SB3Agent.from_model(model, algo=cfg.algo, policy=name, policy_kwargs=pkw,
                                    info={"max_candidates": 8, "reducer": "topk"})
        venv.close()
        env = make_env_for(agent, corpus=corpus_dir, max_candidates=8, features="transferable", reducer="topk",
                           max_episode_steps=40, reward="labels")
        return run_episode(env, agent, seed=0, options={"topic": "poetry"}).fetched

    bf = make_agent("best-first")
    env = make_env_for(bf, corpus=corpus_dir, max_candidates=8, features="transferable", max_episode_steps=40,
                       reward="labels")
    expected = run_episode(env, bf, seed=0, options={"topic": "poetry"}).fetched
    assert np.array_equal(crawl("best-first"), expected)
    assert not np.array_equal(crawl("none"), expected)
    with pytest.raises(ValueError, match="--prior none"):
        cfg_for(corpus_dir, tmp_path, "maskable-ppo", features="tres").validate()
