"""A new user's first hour: masks, trained models in the CLI, reports that say what they are, outputs where
the user is, local copies of named datasets, CLI conventions and the RLlib extra."""
from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- one mask dtype
def test_every_mask_is_bool_and_agrees(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, topic="cancer", max_candidates=16, max_episode_steps=20)
    obs, info = env.reset(seed=0)
    assert env.observation_space["mask"].dtype == np.bool_
    for _ in range(5):
        masks = (obs["mask"], info["action_mask"], env.unwrapped.action_masks())
        assert all(m.dtype == np.bool_ for m in masks), [m.dtype for m in masks]
        assert np.array_equal(masks[0], masks[1]) and np.array_equal(masks[1], masks[2])
        assert env.observation_space.contains(obs)
        ids = info["candidate_ids"][info["action_mask"]]  # boolean selection, not positions 0/1
        assert (ids >= 0).all() and len(ids) == int(info["action_mask"].sum())
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            break


def test_vector_env_masks_are_bool(tiny_corpus):
    from gym_crawl.envs.vector import WikiCrawlVectorEnv

    v = WikiCrawlVectorEnv(2, corpus=tiny_corpus, topic="cancer", max_candidates=8, max_episode_steps=10)
    v.reset(seed=0)
    obs, *_ = v.step(np.zeros(2, np.int64))
    assert obs["mask"].dtype == np.bool_ and v.action_masks().dtype == np.bool_
    assert np.array_equal(obs["mask"], v.action_masks())
    v.close()


# ---------------------------------------------------------------- models trained in Python run in the CLI
def _stock_models(tiny_corpus, tmp_path):
    pytest.importorskip("stable_baselines3", reason="Stable-Baselines3 is the optional extra 'sb3' (in 'dev')")
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import DQN, PPO

    from gym_crawl.wrappers import make_scoring_env

    env = make_scoring_env(corpus=tiny_corpus, topic="cancer", max_candidates=8, max_episode_steps=20)
    flat = make_scoring_env(corpus=tiny_corpus, topic="cancer", max_candidates=8, max_episode_steps=20,
                            flatten=True)
    models = {"ppo": PPO("MultiInputPolicy", env, n_steps=16, batch_size=8, n_epochs=1, seed=0),
              "mppo": MaskablePPO("MultiInputPolicy", env, n_steps=16, batch_size=8, n_epochs=1, seed=0),
              "dqn": DQN("MlpPolicy", flat, learning_starts=0, seed=0)}
    for name, m in models.items():
        m.learn(16)
        m.save(tmp_path / f"{name}.zip")
    return models, env


def test_stock_sb3_model_zip_acts_like_the_model(tiny_corpus, tmp_path):
    from gym_crawl.agents import make_env_for
    from gym_crawl.agents.sb3.agent import load_sb3_agent
    from gym_crawl.wrappers.discrete import flatten_observation

    models, _ = _stock_models(tiny_corpus, tmp_path)
    for name, model in models.items():
        agent = load_sb3_agent(tmp_path / f"{name}.zip")  # no agent.npz beside it; nothing unpickled
        assert agent.env_defaults["max_candidates"] == 8 and agent.flatten == (name == "dqn")
        env = make_env_for(agent, corpus=tiny_corpus, topic="cancer", max_episode_steps=10)
        obs, info = env.reset(seed=1)
        agent.begin_episode(env, np.random.default_rng(0))
        for _ in range(5):
            x = flatten_observation(obs) if agent.flatten else obs
            kw = {"action_masks": info["action_mask"]} if name == "mppo" else {}
            want, _ = model.predict(x, deterministic=True, **kw)
            assert agent.act(obs, info) == int(want), name
            obs, _, term, trunc, info = env.step(agent.act(obs, info))
            if term or trunc:
                break


def test_cli_runs_a_stock_model_zip_and_names_k_on_mismatch(tiny_corpus, tmp_path, capsys):
    from gym_crawl.cli import main

    _stock_models(tiny_corpus, tmp_path)
    z = str(tmp_path / "ppo.zip")
    assert main(["crawl", "--agent", f"sb3:{z}", "--corpus", "synthetic-2000", "--steps", "5", "--json"]) == 0
    assert main(["crawl", "--agent", f"sb3:{z}", "--corpus", "synthetic-2000", "--steps", "5", "--k", "16"]) == 2
    err = capsys.readouterr().err
    assert "max_candidates=8" in err and "--k 8" in err and "--k 16" in err  # both values, the flag to drop
    assert main(["crawl", "--agent", f"sb3:{z}", "--corpus", "synthetic-2000", "--steps", "5",
                 "--features", "han2018"]) == 2
    assert "--features" in capsys.readouterr().err


def test_export_sb3_model_round_trips(tiny_corpus, tmp_path):
    from gym_crawl.agents import Agent
    from gym_crawl.agents.sb3.agent import export_sb3_model, load_sb3_agent

    models, _ = _stock_models(tiny_corpus, tmp_path)
    path = export_sb3_model(models["mppo"], tmp_path / "agent.npz", reducer="topk")
    a, b = Agent.load(path, expect="sb3"), load_sb3_agent(tmp_path / "mppo.zip")
    assert a.config["algo"] == b.config["algo"] == "maskable-ppo"
    assert a.env_defaults == {"reducer": "topk", "max_candidates": 8}
    assert all(np.array_equal(a.state_dict()[k], v) for k, v in b.state_dict().items())


def test_sb3_zip_with_pickled_policy_kwargs_is_refused_with_the_export(tiny_corpus, tmp_path):
    import json
    import zipfile

    from gym_crawl.agents.sb3.agent import load_sb3_zip

    _stock_models(tiny_corpus, tmp_path)
    src, dst = tmp_path / "ppo.zip", tmp_path / "bad.zip"
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w") as zo:
        for n in zi.namelist():
            raw = zi.read(n)
            if n == "data":
                d = json.loads(raw)
                d["policy_kwargs"] = {"activation_fn": {":type:": "<class 'type'>", ":serialized:": "gAR="}}
                raw = json.dumps(d).encode()
            zo.writestr(n, raw)
    with pytest.raises(ValueError, match="never unpickles.*export_sb3_model"):
        load_sb3_zip(dst)
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="junk.zip"):
        load_sb3_zip(tmp_path / "junk.zip")


def _fake_rllib_run(tmp_path):
    import json

    torch = pytest.importorskip("torch")
    run = tmp_path / "run"
    run.mkdir()
    torch.save({}, run / "module.pt")
    (run / "module.pt.json").write_text(json.dumps({"max_candidates": 8, "candidate_dim": 24, "state_dim": 6,
                                                    "action_n": 8, "model_config": {}}))
    (run / "config.json").write_text(json.dumps({"features": "combined", "reducer": "topk", "max_candidates": 8}))
    return run


def test_rllib_agent_without_ray_names_the_extra(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("ray") is not None:
        pytest.skip("Ray is installed here: the missing-extra error cannot be shown")
    from gym_crawl.cli import main

    run = _fake_rllib_run(tmp_path)
    assert main(["crawl", "--agent", f"rllib:{run}", "--steps", "5"]) == 2
    from gym_crawl.registry import install_command

    assert install_command("rllib") in capsys.readouterr().err
    assert main(["crawl", "--agent", f"rllib:{tmp_path / 'nothing'}", "--steps", "5"]) == 2
    assert "module.pt" in capsys.readouterr().err


def test_rllib_agent_runs_a_saved_module(tiny_corpus, tmp_path):
    pytest.importorskip("ray.rllib", reason="Ray RLlib is the optional extra 'rllib' (pip install 'gym-crawl[rllib]')")
    from gymnasium import spaces

    from gym_crawl.agents import make_env_for, run_episode
    from gym_crawl.agents.rllib.agent import load_rllib_agent
    from gym_crawl.agents.rllib.model import CandidateScoringRLModule
    from gym_crawl.agents.rllib.train import save_module

    obs_space = gym.make("WikiCrawl-v1", corpus=tiny_corpus, topic="cancer", max_candidates=8).observation_space
    m = CandidateScoringRLModule(observation_space=obs_space, action_space=spaces.Discrete(8), model_config={})
    run = tmp_path / "run"
    run.mkdir()
    save_module(m, run / "module.pt", obs_space, spaces.Discrete(8), {})
    agent = load_rllib_agent(run)
    env = make_env_for(agent, corpus=tiny_corpus, topic="cancer", max_episode_steps=10)
    res = run_episode(env, agent, seed=0)
    assert res.steps == 10


# ---------------------------------------------------------------- outputs go where the user is
def _names_from_file(tree) -> set[str]:
    """Module-level names whose value is derived from ``__file__`` (directly or through another such name)."""
    import ast

    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in tree.body:
            if isinstance(node, ast.Assign):
                used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
                if "__file__" in used or used & tainted:
                    for t in node.targets:
                        if isinstance(t, ast.Name) and t.id not in tainted:
                            tainted.add(t.id)
                            changed = True
    return tainted


def test_no_benchmark_writes_into_the_installed_package():
    import ast

    checked = 0
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        tainted = _names_from_file(tree) | {"__file__"}
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument"
                    and call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == "--out"):
                continue
            checked += 1
            for kw in call.keywords:
                if kw.arg == "default":
                    used = {n.id for n in ast.walk(kw.value) if isinstance(n, ast.Name)}
                    assert not used & tainted, f"{path.name}: --out default is derived from __file__"
                    if isinstance(kw.value, ast.Constant) and kw.value.value is not None:
                        assert not Path(kw.value.value).is_absolute(), path.name
    assert checked >= 15



# ---------------------------------------------------------------- reports say what they are
def test_crawl_json_rows_carry_spec_seed_topic_reward_k_version(capsys):
    import json

    from gym_crawl import __version__
    from gym_crawl.cli import main

    assert main(["crawl", "--agent", "random,best-first", "--episodes", "2", "--corpus", "synthetic-2000",
                 "--steps", "5", "--seed", "3", "--k", "16", "--reward", "binary", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["agent"], r["episode"], r["seed"]) for r in rows] == [
        ("random", 0, 3), ("random", 1, 4), ("best-first", 0, 3), ("best-first", 1, 4)]
    for r in rows:
        assert r["topic"] and r["reward"] == "binary" and r["K"] == 16 and r["gym_crawl_version"] == __version__
        assert r["corpus"] == "synthetic-2000" and r["budget"] == 5


def test_summed_curves_hold_a_short_curve_at_its_last_value():
    from gym_crawl.benchmarks.plotting import summed_curves

    got = summed_curves([np.array([1.0, 2.0, 3.0]), np.array([0.0, 5.0]), np.zeros(0)])
    assert got.tolist() == [1.0, 7.0, 8.0] and summed_curves([]).shape == (0,)


def test_colours_are_distinct_and_stable_across_processes():
    import subprocess
    import sys

    from gym_crawl.benchmarks.plotting import agent_colors

    names = ["random", "oracle", "best-first", "lfa-async"] + [f"sb3:runs/model{i}.zip" for i in range(40)]
    cols = agent_colors(names)
    assert len(set(cols.values())) == len(names)
    code = ("import json; from gym_crawl.benchmarks.plotting import agent_colors; "
            f"print(json.dumps(agent_colors({names!r})))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**__import__("os").environ, "PYTHONHASHSEED": str(s)}).stdout for s in (1, 2)}
    assert len(outs) == 1 and __import__("json").loads(outs.pop()) == cols


def test_cli_plot_names_models_numbers_episodes_per_agent_dashes_bounds(tmp_path, monkeypatch):
    from gym_crawl.cli import crawl

    figs = []
    monkeypatch.setattr(crawl, "save_png", lambda fig, path: figs.append(fig) or Path(path))
    results, rows = [], []
    for agent in ("random", "sb3:runs/ppo_geology/model.zip", "oracle"):
        for ep in range(2):
            results.append(type("R", (), {"relevant_curve": np.arange(5)})())
            rows.append({"agent": agent, "episode": ep, "topic": "geology", "reward": "labels", "K": 8})
    crawl.plot_curves(results, rows, tmp_path / "p.png")
    ax = figs[0].axes[0]
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert labels == ["random ep 1", "random ep 2", "sb3:ppo_geology/model.zip ep 1", "sb3:ppo_geology/model.zip ep 2",
                      "oracle ep 1", "oracle ep 2"]
    styles = {ln.get_label(): ln.get_linestyle() for ln in ax.get_lines()}
    assert styles["random ep 1"] == styles["oracle ep 2"] == "--" and styles["sb3:ppo_geology/model.zip ep 1"] == "-"
    colours = {ln.get_label().rsplit(" ep ", 1)[0]: ln.get_color() for ln in ax.get_lines()}
    assert len(set(colours.values())) == 3
    anchor = ax.get_legend().get_bbox_to_anchor().transformed(ax.transAxes.inverted())
    assert anchor.x0 > 1.0  # legend outside the axes, never over the curves


def test_bench_report_stamps_rows_and_marks_quick_runs(tmp_path):
    import argparse
    import json

    from gym_crawl import __version__
    from gym_crawl.benchmarks.report import write_json_report

    res = {"runs": [{"agent": "lfa-async", "topic": "cancer", "relevant_found": 3}, {"agent": "random"}],
           "table": {"x": [{"agent": "oracle", "reward": "labels"}]}}
    args = argparse.Namespace(quick=True, seed=7, reward="han2018", k=32, out=tmp_path)
    data = json.loads(write_json_report(tmp_path / "r.json", res, "demo", args).read_text())
    assert data["about"] == {"benchmark": "demo", "gym_crawl_version": __version__, "quick": True,
                             "status": "illustrative, not a result",
                             "arguments": {"quick": True, "seed": 7, "reward": "han2018", "k": 32,
                                           "out": str(tmp_path)}}
    a, b = data["runs"]
    assert a["topic"] == "cancer" and a["benchmark_seed"] == 7
    assert a["K"] == 32 and a["reward"] == "han2018"
    assert b["gym_crawl_version"] == __version__ and "topic" not in b
    assert data["table"]["x"][0]["reward"] == "labels"  # a row's own value wins


# ---------------------------------------------------------------- CLI conventions
def test_diagnostics_go_to_stderr_via_logging_and_quiet_silences_them(tmp_path, capsys):
    from gym_crawl.cli import main

    png = str(tmp_path / "c.png")
    assert main(["crawl", "--agent", "random", "--corpus", "synthetic-500", "--steps", "5", "--plot", png]) == 0
    out, err = capsys.readouterr()
    assert "curve written to" in err and "curve written" not in out and out.startswith("agent")
    for argv in (["-q", "crawl"], ["crawl", "-q"]):
        assert main([*argv, "--agent", "random", "--corpus", "synthetic-500", "--steps", "5", "--plot", png]) == 0
        out, err = capsys.readouterr()
        assert err == "" and out.startswith("agent")


def test_progress_logs_a_line_every_few_seconds_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    import sys

    from gym_crawl import _console

    _console.setup_logging()
    p = _console.Progress(10, "random ep 1/1", every=0.0)
    assert p.bar is None  # pytest's captured stderr is not a terminal
    for _ in range(3):
        p.update()
    p.close()
    err = capsys.readouterr().err
    assert err.count("random ep 1/1: ") == 3 and "3/10 steps" in err
    monkeypatch.setitem(sys.modules, "ipykernel", sys)  # in a notebook kernel: a tqdm.auto bar
    q = _console.Progress(10, "x")
    assert q.bar is not None
    q.close()
    _console.setup_logging(quiet=1)
    assert _console.Progress(10, "x", every=0.0).bar is None
    _console.Progress(10, "quiet", every=0.0).update()
    assert "quiet" not in capsys.readouterr().err


def test_train_uses_the_default_reward_of_crawl_and_gym_make(tiny_corpus):
    from gym_crawl.agents.rllib.train import RLlibConfig
    from gym_crawl.agents.sb3.train import TrainConfig, _env_spec, build_parser
    from gym_crawl.wrappers import make_scoring_env

    assert TrainConfig().reward is None and RLlibConfig().reward is None
    assert build_parser().parse_args([]).reward is None
    spec = _env_spec(TrainConfig(), ["cancer"], "random", corpus=tiny_corpus)
    assert spec["reward"] is None and spec["reward_scale"] is None
    env = make_scoring_env(**spec)
    plain = gym.make("WikiCrawl-v1", corpus=tiny_corpus, topic="cancer")
    env.reset(seed=0)
    assert env.unwrapped.view.reward_name == plain.unwrapped.view.reward_name == "labels"
    _, r, *_ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    assert abs(r) <= 1.0 + 1e-9  # scaled by 1 / |max reward| of the scheme the env picked


def test_train_picks_dummy_vec_env_beyond_the_cores_and_sets_torch_threads(monkeypatch):
    from gym_crawl.agents import train_common
    from gym_crawl.agents.train_common import resolve_torch_threads, use_subprocesses

    assert use_subprocesses(2, "auto", cores=2) and not use_subprocesses(3, "auto", cores=2)
    assert not use_subprocesses(1, "auto", cores=8) and use_subprocesses(4, "subproc", cores=1)
    assert not use_subprocesses(2, "dummy", cores=8)
    assert resolve_torch_threads(None, 2, True, cores=8) == 6 and resolve_torch_threads(None, 2, True, cores=2) == 1
    assert resolve_torch_threads(None, 4, False, cores=8) == 8 and resolve_torch_threads(3, 2, True, cores=2) == 3
    with pytest.raises(ValueError, match="--torch-threads"):
        resolve_torch_threads(0, 1, False)
    pytest.importorskip("stable_baselines3", reason="Stable-Baselines3 is the optional extra 'sb3' (in 'dev')")
    from stable_baselines3.common.vec_env import DummyVecEnv

    from gym_crawl.agents.sb3.train import TrainConfig, make_vec_env

    monkeypatch.setattr(train_common, "available_cores", lambda: 1)
    v = make_vec_env(TrainConfig(corpus="synthetic-500", max_episode_steps=5), ["geology"], 2, 0)
    assert isinstance(v, DummyVecEnv)
    v.close()


# ---------------------------------------------------------------- named datasets offline with a local copy
def _no_network(monkeypatch):
    from gym_crawl.corpus import download as dl

    def refuse(url, *a, **k):
        raise dl.DownloadError(url, "the test forbids the network")

    monkeypatch.setattr(dl, "fetch", refuse)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the fake Wikispeedia's fingerprint differs by design
def test_download_from_registers_a_local_copy_used_by_corpus_and_info(tmp_path, monkeypatch, capsys):
    import json

    from test_wikispeedia import make_fake

    from gym_crawl.cli import main
    from gym_crawl.corpus import load_corpus

    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "cache"))
    monkeypatch.delenv("GYM_CRAWL_WIKISPEEDIA", raising=False)
    _no_network(monkeypatch)
    fake = make_fake(tmp_path / "my-wikispeedia", "snap-archives")
    assert main(["download", "wikispeedia", "--from", str(fake)]) == 0
    assert capsys.readouterr().out.strip() == str(fake.resolve())
    assert load_corpus("wikispeedia").n_pages == 4
    assert main(["corpus", "info", "wikispeedia", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pages"] == 4
    assert main(["crawl", "--corpus", "wikispeedia", "--agent", "bfs", "--topic",
                 "subject.Geography.Geology_and_geophysics", "--seed-pages", "Rock", "--steps", "2", "--k", "2",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["corpus"] == "wikispeedia"
    # a folder that is not the dataset is refused and not registered
    (tmp_path / "empty").mkdir()
    assert main(["download", "wikispeedia", "--from", str(tmp_path / "empty")]) == 2
    assert "empty" in capsys.readouterr().err
    assert json.loads((tmp_path / "cache" / "local_copies.json").read_text()) == {"wikispeedia": str(fake.resolve())}
    # the environment variable wins; a registered path that vanished is an error naming it, never a download
    monkeypatch.setenv("GYM_CRAWL_WIKISPEEDIA", str(tmp_path / "gone"))
    with pytest.raises(FileNotFoundError, match="GYM_CRAWL_WIKISPEEDIA"):
        load_corpus("wikispeedia")


def test_failed_download_leaves_no_empty_folders(tmp_path, monkeypatch):
    from gym_crawl.corpus.download import DownloadError, download
    from gym_crawl.corpus.mediawiki_download import download_simplewiki

    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "cache"))
    monkeypatch.delenv("GYM_CRAWL_WIKISPEEDIA", raising=False)
    _no_network(monkeypatch)
    with pytest.raises(DownloadError, match="--from"):
        download("wikispeedia")
    assert not (tmp_path / "cache" / "wikispeedia").exists()
    with pytest.raises(DownloadError):
        download("wikispeedia", tmp_path / "a" / "b" / "c")
    assert not (tmp_path / "a").exists()
    with pytest.raises(DownloadError, match="--from"):
        download_simplewiki("20240101", progress=False)
    assert not (tmp_path / "cache" / "simplewiki").exists()


# ---------------------------------------------------------------- RLlib extra (what runs without Ray)
def test_rllib_progress_lines_never_print_nan():
    from gym_crawl.agents.rllib.train import progress_line

    nan = float("nan")
    first = {"iteration": 1, "env_steps": 400.0, "seconds": 3.2, "episode_return_mean": nan,
             "relevant_found_mean": nan}
    line = progress_line(first)
    assert "nan" not in line and "no episode finished yet" in line and "env steps     400" in line
    later = {**first, "iteration": 2, "episode_return_mean": 0.8125, "relevant_found_mean": 12.0}
    assert "return 0.812" in progress_line(later) and "relevant/ep 12.0" in progress_line(later)
    assert "nan" not in progress_line({**first, "env_steps": nan})


def test_rllib_curve_goes_to_tensorboard_with_the_sb3_tags(tmp_path):
    pytest.importorskip("tensorboard", reason="TensorBoard is in the 'sb3' and 'dev' extras")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from gym_crawl.agents.rllib.train import log_curve_row, open_tensorboard

    w = open_tensorboard(tmp_path / "tb")
    nan = float("nan")
    log_curve_row(w, {"iteration": 1, "env_steps": 400.0, "seconds": 4.0, "episode_return_mean": nan,
                      "relevant_found_mean": nan, "harvest_rate_mean": nan, "reward_sum_mean": nan})
    log_curve_row(w, {"iteration": 2, "env_steps": 800.0, "seconds": 8.0, "episode_return_mean": 0.5,
                      "relevant_found_mean": 12.0, "harvest_rate_mean": 0.3, "reward_sum_mean": 40.0})
    w.close()
    ea = EventAccumulator(str(tmp_path / "tb"))
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    assert {"rollout/ep_rew_mean", "crawl/relevant_found", "crawl/harvest_rate", "crawl/reward_sum",
            "time/fps"} <= tags
    assert [(e.step, e.value) for e in ea.Scalars("crawl/relevant_found")] == [(800, 12.0)]  # the nan row skipped
    assert [e.value for e in ea.Scalars("time/fps")] == [100.0, 100.0]


def test_docs_rllib_install_the_cpu_wheel_first():
    text = (ROOT / "docs" / "rllib.md").read_text()
    install = text[text.index("## Install"):text.index("## One machine")]
    assert install.index("download.pytorch.org/whl/cpu") < install.index('pip install "gym-crawl[rllib]"')


def test_cli_errors_about_k_name_the_flag_and_help_states_the_reward_default(capsys):
    from gym_crawl.agents.sb3.train import build_parser as train_parser
    from gym_crawl.cli import build_parser, main

    assert main(["crawl", "--agent", "random", "--corpus", "synthetic-500", "--steps", "5", "--k", "600",
                 "--features", "nope"]) == 2
    assert "--k" not in capsys.readouterr().err  # K above the corpus' pages is lowered, not an error
    from gym_crawl.cli.errors import cli_words

    assert cli_words("max_candidates must be an integer") == "K (--k) must be an integer"
    crawl = next(a for a in build_parser()._subparsers._group_actions[0].choices["crawl"]._actions
                 if a.dest == "reward")
    assert "labels for a topic with a label, else han2018" in crawl.help
    train = next(a for a in train_parser()._actions if a.dest == "reward")
    assert train.default is None and "labels for a topic with a ground-truth label, else han2018" in train.help
