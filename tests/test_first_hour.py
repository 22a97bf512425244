"""A newcomer's first hour, as the README tells it: the two set-up commands, a core install that needs no PyTorch,
trained models that carry the env they were trained on, one default env, output piped into ``head``, agent modules
in the current folder, small webs, ``serve``'s addresses, and one output style (results on stdout, a labelled
progress bar on stderr, one error prefix, exit codes 0 / 1 / 2 / 130)."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import gym_crawl  # noqa: F401
from gym_crawl.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _readme_block(heading: str, lang: str, index: int = 0) -> str:
    """The ``index``-th fenced ``lang`` code block of the README section titled ``heading``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(heading):]
    section = section[:section.find("\n## ", len(heading))] if "\n## " in section[len(heading):] else section
    return re.findall(rf"```{lang}\n(.*?)```", section, re.DOTALL)[index]


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory, tiny_corpus) -> str:
    return str(tiny_corpus.save(tmp_path_factory.mktemp("c") / "tiny"))


def _run_cli(args: list[str], env_extra: dict | None = None, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    return subprocess.Popen([sys.executable, "-m", "gym_crawl", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, **kw)


# ---------------------------------------------------------------- the two set-up commands
def test_readme_has_two_setup_commands_and_ci_installs_and_tests_the_same_way():
    lines = [ln for ln in _readme_block("## Set up (two commands)", "bash").splitlines() if ln.strip()]
    assert len(lines) == 2, lines
    run, test = (ln.split(" && ") for ln in lines)
    assert run[0] == "pip install -e ." and run[1].startswith("gym-crawl crawl ")  # the core install: no extra
    torch_step, dev_step, pytest_step = test
    assert re.fullmatch(r"pip install torch==[\d.]+ --extra-index-url https://download\.pytorch\.org/whl/cpu",
                        torch_step), torch_step
    assert dev_step == 'pip install -e ".[dev]"' and pytest_step == "python -m pytest -q"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    pins = re.findall(r"torch==[\d.]+", ci)
    assert pins == re.findall(r"torch==[\d.]+", torch_step)  # the same CPU wheel, from the same index
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in ci
    assert ci.index("torch==") < ci.index('-e ".[dev]"') < ci.index("python -m pytest -q")
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert lines[1] in contributing


_NO_TORCH = textwrap.dedent("""
    import sys

    class NoTorch:  # as if PyTorch were not installed
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "torch":
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, NoTorch())
    from gym_crawl.cli import main

    code = main(sys.argv[1:])
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "stable_baselines3", "sb3_contrib", "ray"})
    print("IMPORTED", heavy, file=sys.stderr)
    sys.exit(code)
""")


@pytest.mark.parametrize("agent, code, extra", [("random,bfs,best-first", 0, None), ("random,tres", 2, "torch"),
                                                ("thesis-dqn", 2, "torch"), ("sb3:runs/x", 2, "sb3")])
def test_the_core_install_crawls_without_torch_and_torch_agents_name_their_extra(tiny_path, agent, code, extra):
    p = subprocess.run([sys.executable, "-c", _NO_TORCH, "crawl", "--agent", agent, "--corpus", tiny_path,
                        "--steps", "5", "--json"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == code, p.stderr
    assert "IMPORTED []" in p.stderr  # the baselines never import PyTorch (nor SB3, nor Ray)
    if extra:
        # from the checkout the tests run in: its editable install, not an index's package
        where = "." if Path.cwd().resolve() == ROOT else str(ROOT)
        assert f'pip install -e "{where}[{extra}]"' in p.stderr and agent.split(",")[-1] in p.stderr
        assert "Traceback" not in p.stderr


# ---------------------------------------------------------------- a trained model carries its env
def _old_train_output(tmp_path, tiny_corpus) -> Path:
    """A ``gym-crawl train`` seed folder as older versions wrote it: an ``agent.npz`` whose header has no env
    keywords, and the run's ``config.json`` with the env id, feature set, K and reducer (and the rest)."""
    pytest.importorskip("sb3_contrib", reason="Stable-Baselines3 is the optional extra 'sb3' (in 'dev')")
    from gym_crawl.agents import make_env_for
    from gym_crawl.agents.sb3.agent import SB3Agent

    run = tmp_path / "runs" / "train" / "seed0"
    run.mkdir(parents=True)
    agent = SB3Agent(policy="MaskableCandidateScoringPolicy",
                     policy_kwargs={"scorer_kwargs": {"hidden": [8], "head": [8], "value": [8]}})
    env = make_env_for(agent, corpus=tiny_corpus, topic="cancer", features="han2018", max_candidates=8,
                       max_episode_steps=5)
    agent._build(env)  # weights of the han2018 feature dimension
    agent.save(run / "agent.npz")
    (run / "config.json").write_text(json.dumps({
        "env_id": "WikiCrawl-v1", "corpus": "synthetic-hard", "features": "han2018", "max_candidates": 8,
        "reducer": "topk", "reward": "labels", "max_episode_steps": 100, "timesteps": 64, "seed": 0}))
    return run


def test_sb3_train_output_runs_without_flags_and_refuses_a_contradicting_one(tmp_path, tiny_corpus, tiny_path,
                                                                             capsys):
    from gym_crawl.agents import make_agent, make_env_for

    run = _old_train_output(tmp_path, tiny_corpus)
    assert main(["crawl", "--agent", f"sb3:{run}", "--corpus", tiny_path, "--topic", "cancer", "--steps", "5",
                 "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["features"], row["K"], row["reducer"], row["env_id"]) == ("han2018", 8, "topk", "WikiCrawl-v1")
    assert main(["crawl", "--agent", f"sb3:{run}", "--corpus", tiny_path, "--steps", "5",
                 "--features", "combined"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gym-crawl: error: ") and "config.json" in err
    assert "'han2018'" in err and "--features combined" in err and "--features han2018" in err
    # a candidate-scoring policy runs at another K; the saved one is only the default
    assert main(["crawl", "--agent", f"sb3:{run}", "--corpus", tiny_path, "--steps", "3", "--k", "16",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["K"] == 16
    # the same in Python: make_agent reads the model and its env
    agent = make_agent(f"sb3:{run}")
    assert agent.env_config.env_id == "WikiCrawl-v1" and agent.env_config.kwargs["features"] == "han2018"
    env = make_env_for(agent, corpus=tiny_corpus, topic="cancer", max_episode_steps=5)
    assert env.spec.id == "WikiCrawl-v1" and env.unwrapped.view.feature_set_name == "han2018"
    with pytest.raises(ValueError, match="no options"):
        make_agent(f"sb3:{run}", deterministic=False)
    # without its config.json the same file cannot know its feature set: the flags are needed again
    (run / "config.json").unlink()
    assert main(["crawl", "--agent", f"sb3:{run}", "--corpus", tiny_path, "--steps", "5"]) == 2
    assert "--features" in capsys.readouterr().err


def test_read_env_config_validates_and_names_the_file(tmp_path):
    from gym_crawl.agents.env_config import TRAINED_ENV_KEYS, read_env_config

    f = tmp_path / "config.json"
    f.write_text(json.dumps({"features": "tres", "max_candidates": 16, "reducer": "tree", "timesteps": 5}))
    cfg = read_env_config(tmp_path, keys=TRAINED_ENV_KEYS)  # a folder holding config.json
    assert cfg.kwargs == {"features": "tres", "max_candidates": 16, "reducer": "tree"} and cfg.env_id is None
    assert cfg.merged({"features": None, "reducer": "topk"})["reducer"] == "topk"  # not fixed: overridable
    with pytest.raises(ValueError, match=r"trained with features='tres', but features='han2018'"):
        cfg.merged({"features": "han2018"})
    f.write_text(json.dumps({"max_candidates": "16"}))
    with pytest.raises(ValueError, match=r"config\.json: max_candidates must be an integer"):
        read_env_config(f, keys=TRAINED_ENV_KEYS)
    f.write_text(json.dumps({"env_id": "WikiCrawl-v99"}))
    with pytest.raises(ValueError, match="WikiCrawl-v99.*not a registered"):
        read_env_config(f)
    with pytest.raises(ValueError, match=r"\['budget'\] are not WikiCrawl env keywords"):
        read_env_config({"budget": 5})
    with pytest.raises(FileNotFoundError, match="no saved env config"):
        read_env_config(tmp_path / "nothing.json")


def test_an_error_in_an_agent_list_names_the_agent(tiny_path, tmp_path, capsys):
    missing = tmp_path / "no-such-run"
    assert main(["crawl", "--agent", f"random,sb3:{missing}", "--corpus", tiny_path, "--steps", "5"]) == 2
    out, err = capsys.readouterr()
    assert f"sb3:{missing}" in err and out == ""  # every agent is loaded before the first crawl
    assert main(["crawl", "--agent", "random,bfs,best-frist", "--corpus", tiny_path, "--steps", "5"]) == 2
    assert "'best-frist'" in capsys.readouterr().err


# ---------------------------------------------------------------- one default env
def test_every_factory_and_the_cli_build_the_one_default_env(tiny_corpus, tiny_path, capsys):
    from gym_crawl.agents import make_env_for
    from gym_crawl.envs import DEFAULT_ENV_ID, check_budget, make_vector_env
    from gym_crawl.wrappers import make_scoring_env
    from gym_crawl.wrappers.factory import make_env, registered_kwargs

    budget = registered_kwargs(DEFAULT_ENV_ID)["max_episode_steps"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "out of date" warning anywhere
        envs = [make_env_for("random", corpus=tiny_corpus), make_scoring_env(corpus=tiny_corpus),
                make_env(corpus=tiny_corpus), make_vector_env(num_envs=1, corpus=tiny_corpus)]
    for env in envs:
        assert env.spec.id == DEFAULT_ENV_ID
    assert [check_budget(env) for env in envs[:3]] == [budget] * 3  # the id's budget truncates
    # the CLI with no --corpus / --steps: the default task, and the table names the corpus
    assert main(["crawl", "--agent", "random", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    reg = registered_kwargs(DEFAULT_ENV_ID)
    assert (row["env_id"], row["corpus"], row["budget"]) == (DEFAULT_ENV_ID, reg["corpus"], budget)
    assert main(["crawl", "--agent", "random", "--corpus", tiny_path, "--steps", "3"]) == 0
    header, _, first = capsys.readouterr().out.splitlines()[:3]
    assert header.split()[:2] == ["agent", "corpus"] and first.split()[1] == tiny_path


def test_readme_examples_run_as_written_without_a_warning(tiny_corpus):
    from gym_crawl.agents import AGENTS, make_agent, make_env_for, run_episode

    for code in (_readme_block("## Ten lines", "python"),
                 _readme_block("## Benchmarks", "python")):  # the third-party agent
        ns: dict = {}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exec(compile(code, "README.md", "exec"), ns)  # noqa: S102 - the README's own examples
    assert ns["register_agent"] is not None and "longest-anchor" in AGENTS
    try:
        agent = make_agent("longest-anchor")
        assert run_episode(make_env_for(agent, corpus=tiny_corpus, max_episode_steps=5), agent, seed=0).steps == 5
    finally:
        AGENTS.unregister("longest-anchor")


# ---------------------------------------------------------------- output piped into head
@pytest.mark.parametrize("argv", [["agents"], ["corpus", "info", "TINY"],
                                  ["crawl", "--agent", "random", "--corpus", "TINY", "--steps", "3", "--episodes", "3",
                                   "--json"]])
def test_a_closed_pipe_ends_the_command_quietly(argv, tiny_path):
    p = _run_cli([tiny_path if a == "TINY" else a for a in argv])
    p.stdout.close()  # the reader is gone before the first line, as `| head -1` is after it
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err


# ---------------------------------------------------------------- an agent module in the current folder
def test_agent_module_in_the_current_folder_is_importable(tmp_path, monkeypatch, tiny_path, capsys):
    from gym_crawl.agents import AGENTS

    (tmp_path / "my_agents.py").write_text("from gym_crawl.agents.baselines import RandomAgent\n\n\n"
                                           "class Agent(RandomAgent):\n    name = 'mine'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "my_agents", raising=False)
    try:
        assert main(["crawl", "--agent", "my_agents:Agent", "--corpus", tiny_path, "--steps", "3", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["agent_name"] == "mine"
        assert str(tmp_path) not in sys.path  # only while the agents load
    finally:
        AGENTS.unregister("my_agents:Agent")
        sys.modules.pop("my_agents", None)


# ---------------------------------------------------------------- small webs, flags instead of keywords
def test_k_above_the_page_count_is_lowered(tiny_corpus):
    import gymnasium as gym

    env = gym.make("WikiCrawl-v2", corpus=tiny_corpus, max_candidates=10**6)
    obs, _ = env.reset(seed=0)
    K = tiny_corpus.n_pages
    assert env.unwrapped.view.max_candidates == K and obs["candidates"].shape[0] == K
    assert env.action_space.n == K


def test_errors_speak_flags_to_cli_users(tiny_path, capsys):
    from gym_crawl.cli.errors import cli_words

    assert cli_words("pass seeds=['United States', 'Rock']") == "pass --seed-pages 'United States' Rock"
    assert cli_words("pass seeds=[...]") == "pass --seed-pages TITLE"
    assert (cli_words("x.warc.gz: WARC file exists; pass append=True to resume it or overwrite=True to replace it")
            == "x.warc.gz: WARC file exists; pass --resume to resume it or --overwrite to replace it")
    assert main(["crawl", "--corpus", tiny_path, "--topic", "subject.gen", "--steps", "3"]) == 2
    err = capsys.readouterr().err
    assert "--seed-pages" in err and "seeds=" not in err


def test_an_existing_warc_needs_resume_or_overwrite(tmp_path, capsys):
    warc = tmp_path / "crawl.warc.gz"
    warc.write_bytes(b"an earlier crawl")
    base = ["crawl", "--live", "http://127.0.0.1:9/", "--topic", "geology", "--warc", str(warc)]
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "--overwrite" in err and "append=True" not in err
    assert main([*base, "--resume", "--overwrite"]) == 2
    pytest.importorskip("warcio", reason="the live web is the optional extra 'web'")
    from gym_crawl.web.live import LiveWeb

    with pytest.raises(FileExistsError):
        LiveWeb(["http://127.0.0.1:9/"], warc=warc)
    web = LiveWeb(["http://127.0.0.1:9/"], warc=warc, overwrite=True)  # what --overwrite passes on
    web.close()
    assert warc.read_bytes() != b"an earlier crawl"


# ---------------------------------------------------------------- serve
def test_serve_a_corpus_from_the_first_address(tiny_path, capsys):
    from gym_crawl.cli import build_parser
    from gym_crawl.web.serve.server import serve_command

    args = build_parser().parse_args(["serve", tiny_path, "--hosts", "3", "--first-address", "3",
                                      "--duration", "0"])
    assert serve_command(args) == 0
    hosts = [ln.split("\t")[1].split("/")[2].split(":")[0] for ln in capsys.readouterr().out.splitlines()
             if "\thttp" in ln]
    if hosts == ["127.0.0.1"] * 3:
        pytest.skip("this machine serves every host on 127.0.0.1 (one port each): no addresses to choose")
    assert hosts == ["127.0.0.3", "127.0.0.4", "127.0.0.5"]


# ---------------------------------------------------------------- one output style
def test_every_error_has_one_prefix_and_the_usage_code(tiny_path, capsys, monkeypatch):
    assert main(["crawl", "--live", "http://127.0.0.1:9/", "--agent", "random"]) == 2
    assert capsys.readouterr().err == "gym-crawl: error: --live needs --topic WORDS (what the crawl looks for)\n"
    with pytest.raises(SystemExit) as e:
        main(["crawl", "--steps", "0"])
    assert e.value.code == 2 and "gym-crawl: error: argument --steps" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["bench", "env", "--no-such-flag"])  # a benchmark's own options
    assert e.value.code == 2 and "gym-crawl: error: unrecognized arguments" in capsys.readouterr().err
    assert main(["eval", "--seeds", "0"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("gym-crawl: error: ") and out == ""
    assert main(["train", "--timesteps", "0", "--task-set", "none"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("gym-crawl: error: --timesteps") and out == ""
    from gym_crawl.cli import agents

    def fails(args):
        raise ConnectionResetError("the peer went away")

    monkeypatch.setattr(agents, "run", fails)
    assert main(["agents"]) == 1  # a failed run, not a usage error
    assert capsys.readouterr().err == "gym-crawl: error: the peer went away\n"


def test_ctrl_c_exits_130(tiny_path):
    # SIGINT as a terminal sends it (a shell that started these tests in the background may have left it ignored)
    p = _run_cli(["crawl", "--agent", "random", "--corpus", tiny_path, "--steps", "50", "--episodes", "100000",
                  "--json"], preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert p.stdout.readline()  # a first episode is done: the crawl runs
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    assert b"gym-crawl: interrupted" in err and b"Traceback" not in err


def test_a_live_crawl_stopped_by_a_signal_exits_with_it(monkeypatch, capsys):
    from gym_crawl.cli import crawl

    class Stopped:
        stopped_by = "SIGINT"

        def summary(self):
            return {"pages_fetched": 3, "stopped_by": "SIGINT"}

    monkeypatch.setattr(crawl, "crawl_live", lambda agent, settings, **kw: Stopped())
    assert main(["crawl", "--live", "http://127.0.0.1:9/", "--topic", "geology", "--agent", "random"]) == 130
    assert "stopped_by: SIGINT" in capsys.readouterr().out


def test_train_shows_progress_on_stderr_and_prints_its_tensorboard_logs(tiny_path, tmp_path, capsys, monkeypatch):
    pytest.importorskip("sb3_contrib", reason="Stable-Baselines3 is the optional extra 'sb3' (in 'dev')")
    pytest.importorskip("tensorboard", reason="TensorBoard comes with the optional extra 'sb3'")
    from gym_crawl import _console

    monkeypatch.setattr(_console.Progress.__init__, "__defaults__", (0.0, "steps", True, False))  # a line per update
    out_dir = tmp_path / "run"
    assert main(["train", "--corpus", tiny_path, "--train-topics", "cancer", "--eval-topics", "poetry",
                 "--timesteps", "64", "--n-envs", "1", "-K", "8", "--hidden", "8", "--checkpoint-freq", "0",
                 "--vec", "dummy", "--hyper", '{"n_steps": 32, "batch_size": 32}', "--eval-episodes", "1",
                 "--max-episode-steps", "20", "--out", str(out_dir)]) == 0
    out, err = capsys.readouterr()
    assert "gym-crawl: train maskable-ppo seed 0: 64/64 env steps" in err
    assert "64/64" not in out and "━" not in out  # no progress bar among the results
    assert f"TensorBoard logs: {out_dir / 'tb'}" in out and any((out_dir / "tb").iterdir())
    # no silent phase: the score tables before training, building the model, the evaluation after it
    assert "gym-crawl: score tables of 2 topics: 0/" in err
    assert "gym-crawl: train maskable-ppo seed 0: building 1 env over 1 topic, and the model" in err
    assert "gym-crawl: train maskable-ppo seed 0: 0/64 env steps" in err  # at once: the workers may start slowly
    assert "gym-crawl: evaluate seed 0 on 1 held-out topic: 0/1 episodes" in err and "1/1 episodes" in err
    # whole rollouts: the bar's total is what PPO runs (96 = 3 rollouts of 32 for 70 steps), never n/70 with n > 70
    assert main(["train", "--corpus", tiny_path, "--train-topics", "cancer", "--eval-topics", "poetry",
                 "--timesteps", "70", "--n-envs", "1", "-K", "8", "--hidden", "8", "--checkpoint-freq", "0",
                 "--vec", "dummy", "--hyper", '{"n_steps": 32, "batch_size": 32}', "--eval-episodes", "0",
                 "--max-episode-steps", "20", "--no-tensorboard", "--out", str(tmp_path / "r2")]) == 0
    err = capsys.readouterr().err
    assert "96/96 env steps" in err and "/70 env steps" not in err
    assert main(["train", "--corpus", tiny_path, "--train-topics", "cancer", "--eval-topics", "poetry",
                 "--timesteps", "32", "--n-envs", "1", "-K", "8", "--hidden", "8", "--checkpoint-freq", "0",
                 "--vec", "dummy", "--hyper", '{"n_steps": 32, "batch_size": 32}', "--eval-episodes", "1",
                 "--max-episode-steps", "20", "--no-tensorboard", "--no-progress", "-q",
                 "--out", str(tmp_path / "r3")]) == 0
    assert "env steps" not in capsys.readouterr().err  # --no-progress (and -q) keep stderr quiet


def test_train_help_says_what_each_flag_does_and_its_default(capsys):

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    text = " ".join(out.split())
    assert "WikiCrawl-v2" not in text and f"the default task {gym_crawl.DEFAULT_ENV_ID}'s" in text
    assert "-v, --verbose" in text and "-q, --quiet" in text
    from gym_crawl.benchmarks.train_report import build_parser

    silent = [a.option_strings for a in build_parser()._actions if a.option_strings and not (a.help or "").strip()]
    assert not silent, f"flags without help text: {silent}"
    blocks = re.split(r"\n  (?=-)", out.split("options:", 1)[1])  # one block per option
    for flag, shown in (("--timesteps", "default: 100000; with a task set: 10000"), ("--n-envs", "default: 2"),
                        ("--features", "default: combined; with a task set: transferable+site"),
                        ("--vec", "default: auto; with a task set: dummy"), ("--seed", "default: 0"),
                        ("--max-candidates", "default: 32"), ("--eval-freq", "with a task set: half of --timesteps")):
        block = " ".join(next(b for b in blocks if b.startswith(flag)).split())
        assert shown in block, (flag, block)
    assert main(["train", "-q", "--timesteps", "0", "--task-set", "none"]) == 2  # -q accepted, as everywhere
    assert capsys.readouterr().err.startswith("gym-crawl: error: --timesteps")


def test_eval_progress_is_labelled(monkeypatch, capsys):
    from gym_crawl import _console
    from gym_crawl.benchmarks import suite
    from gym_crawl.tasks.task import Task

    monkeypatch.setattr(_console.Progress.__init__, "__defaults__", (0.0, "steps", True, False))
    monkeypatch.setattr(suite, "_job", lambda w: [])
    _console.setup_logging()
    task = Task(set_name="demo", label="subject.geo", seeds=("Geology",), budget=5, n_members=1, split="test")
    ts = type("TS", (), {"name": "demo", "corpus_spec": "x", "tasks": [task]})()
    suite.run_suite([ts], {}, ["random"], seeds=2, epochs=1)
    assert "gym-crawl: demo: agents x seeds: 1/" in capsys.readouterr().err


def test_reprs_are_one_line(tiny_corpus):
    from gym_crawl.agents.palotai import FleetRun

    for obj in (tiny_corpus, FleetRun(steps=3, births=1, policies={"f1": object(), "f0": object()})):
        r = repr(obj)
        assert "\n" not in r and len(r) < 200, r
    assert repr(tiny_corpus).startswith(f"Corpus('{tiny_corpus.name}': {tiny_corpus.n_pages:,} pages")
    assert "policies=['f0', 'f1']" in repr(FleetRun(policies={"f1": 1, "f0": 2}))


def test_readme_documents_exit_codes_and_one_torch_thread():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    codes = text[text.index("### Exit codes and output"):]
    for row in ("| 0 |", "| 1 |", "| 2 |", "| 130 |"):
        assert row in codes
    assert "torch.set_num_threads(1)" in text


# ---------------------------------------------------------------- optional extras: said for this checkout
def test_a_missing_extra_names_the_pip_command_of_this_checkout(tmp_path, monkeypatch, capsys):
    from gym_crawl.registry import install_command

    monkeypatch.chdir(ROOT)
    assert install_command("web") == 'pip install -e ".[web]"'  # the README's way: from the repository's folder
    monkeypatch.chdir(tmp_path)
    assert install_command("web") == f'pip install -e "{ROOT}[web]"'
    no_web = _NO_TORCH.replace('"torch"', '"w3lib"')  # as if the web extra were not installed
    p = subprocess.run([sys.executable, "-c", no_web, "crawl", "--live", "http://127.0.0.1:9/", "--topic", "geology"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("gym-crawl: error: ") and 'pip install -e ".[web]"' in p.stderr
    assert "Traceback" not in p.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme[readme.index("## Set up (two commands)"):readme.index("## Ten lines")]
    assert 'pip install -e ".[web]"' in setup and "--live" in setup  # said where the README first needs it


# ---------------------------------------------------------------- warnings: one line, once, only when something is lost
def test_a_warning_is_one_gym_crawl_line_without_a_source_path(capsys):
    import warnings as w

    from gym_crawl import _console

    _console.setup_logging()
    _console.show_warning(w.WarningMessage("cache\n  gone", UserWarning, "/abs/src/x.py", 3).message, UserWarning,
                          "/abs/src/x.py", 3)
    _console.show_warning(DeprecationWarning("old"), DeprecationWarning, "/abs/lib/y.py", 9)
    assert capsys.readouterr().err == ("gym-crawl: warning: cache gone\n"
                                       "gym-crawl: warning: DeprecationWarning: old\n")
    _console.setup_logging(verbose=1)
    _console.show_warning(UserWarning("x"), UserWarning, "/abs/src/x.py", 3)
    assert "gym-crawl: (UserWarning at /abs/src/x.py:3)" in capsys.readouterr().err  # -v: where it came from


def test_live_and_warc_runs_warn_once_in_one_line_and_only_where_something_is_lost(tmp_path):
    pytest.importorskip("warcio", reason="the live web is the optional extra 'web'")
    from gym_crawl.web.serve.server import serve_corpus
    from tests.conftest import make_tiny_corpus

    small = make_tiny_corpus(160, seed=1)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GYM_CRAWL_DATA": str(tmp_path / "data")}
    env.pop("GYM_CRAWL_WIKISPEEDIA", None)  # a new user's machine: no general English model

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "gym_crawl", *args], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path, env=env)

    with serve_corpus(small, n_hosts=2) as site:
        seed = site.page_urls[small.page_id("Geology")]
        live = cli("crawl", "--live", seed, "--topic", "geology", "--max-pages", "8", "--delay", "0",
                   "--warc", "crawl.warc.gz", "--json")
    assert live.returncode == 0, live.stderr
    warned = [ln for ln in live.stderr.splitlines() if "warning" in ln.lower()]
    # a live web without the general model hashes every word: that loses pages, so one line says how to fix it
    assert len(warned) == 1 and warned[0].startswith("gym-crawl: warning: ") and "download wikispeedia" in warned[0]
    assert "CacheWarning" not in live.stderr and ".py:" not in live.stderr and str(ROOT) not in live.stderr
    # the recorded crawl as a corpus gets its own text model, which crawls as well: nothing to warn about
    for args in (["corpus", "compile", "crawl.warc.gz", "mycorpus"],
                 ["crawl", "--corpus", "mycorpus", "--topic", "geology", "--agent", "random,best-first",
                  "--steps", "5"],
                 ["crawl", "--corpus", "crawl.warc.gz", "--topic", "geology", "--steps", "5"]):
        p = cli(*args)
        assert p.returncode == 0, p.stderr
        assert "warning" not in p.stderr.lower(), (args, p.stderr)


# ---------------------------------------------------------------- the ten lines' random policy, and the CLI's
def test_the_readme_says_which_random_policy_its_ten_lines_are(capsys):
    ns: dict = {}
    exec(compile(_readme_block("## Ten lines", "python"), "README.md", "exec"), ns)  # noqa: S102
    found = int(ns["info"]["relevant_found"])
    capsys.readouterr()  # the snippet's own print
    assert main(["crawl", "--agent", "random,best-first", "--json"]) == 0
    rows = {r["agent"]: r["relevant_found"] for r in map(json.loads, capsys.readouterr().out.splitlines())}
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    said = text[text.index("**Which random policy this is.**"):text.index("Every mask of the env")]
    # the figures the README states are what the code does (seed 0)
    assert f"finds {found} relevant pages" in said and f"best-first's {rows['best-first']}" in said
    assert f"frontier and finds {rows['random']} (" in " ".join(said.split())
    assert found > 3 * rows["random"]  # top-K slots are not the uniform random crawler: the README says so


# ---------------------------------------------------------------- errors name what they are about
def test_a_task_error_names_the_topic_not_an_agent(tiny_path, capsys):
    from gym_crawl.cli.errors import cli_words

    assert main(["crawl", "--corpus", tiny_path, "--topic", "subject.gen", "--agent", "random,best-first",
                 "--steps", "3"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("gym-crawl: error: topic 'gen': no seed pages")  # before any agent ran
    assert "--agent" not in err and "--seed-pages" in err
    assert main(["crawl", "--corpus", tiny_path + "-missing", "--agent", "random,best-first"]) == 2
    err = capsys.readouterr().err
    assert "--agent" not in err and tiny_path + "-missing" in err
    assert cli_words("corpus 'warc:x' has no default topic: pass topic=...") == \
        "corpus 'warc:x' has no default topic: pass --topic TOPIC"  # a placeholder, never `--topic Ellipsis`


# ---------------------------------------------------------------- help: every sub-command's arguments and -v / -q
def test_compile_help_names_its_arguments_and_every_command_takes_v_and_q(capsys):
    from gym_crawl.cli import build_parser

    with pytest.raises(SystemExit):
        main(["corpus", "compile", "--help"])
    out = capsys.readouterr().out
    assert "SOURCE" in out and "OUT" in out and "WARC file" in out and "compiled corpus" in out
    for cmd in (["serve"], ["bench"], ["eval"], ["crawl"], ["corpus", "info"], ["download"], ["agents"]):
        with pytest.raises(SystemExit):
            main([*cmd, "--help"])
        out = capsys.readouterr().out
        assert "-v, --verbose" in out and "-q, --quiet" in out, cmd
        assert "(default: )" not in out
    args = build_parser(["serve"]).parse_args(["serve", "-q", "--demo", "--duration", "0"])
    assert args.quiet == 1
    args = build_parser(["bench"]).parse_args(["bench", "-v", "env", "--quick"])
    assert args.verbose == 1 and args.args == ["--quick"]


def test_train_rllib_takes_the_same_verbosity_flags():
    from gym_crawl.agents.rllib.train import build_parser

    p = build_parser()
    assert p.parse_args(["-v", "--quiet"]).quiet == 1 and p.parse_args(["-qq"]).quiet == 2
    assert p.parse_args([]).quiet == 0  # -q also drops the per-iteration lines (they are INFO lines on stderr)
    silent = [a.option_strings for a in p._actions if a.option_strings and not (a.help or "").strip()]
    assert not silent, f"flags without help text: {silent}"
