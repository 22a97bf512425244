"""Regressions of the adversarial trial: a call that raises changes nothing (or leaves an env that refuses
every call but ``reset``); no silently wrong number."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.envs import make_vector_env


def make(corpus, **kw):
    kw.setdefault("max_episode_steps", 200)
    return gym.make("WikiCrawl-v1", corpus=corpus, **kw)


def _snapshot(env) -> dict:
    u = env.unwrapped
    st = u.state
    snap = {f"state.{k}": np.array(a) for k, a in st.arrays.items()}
    ep = u.episode
    snap.update(ctr=st.counters.copy(), sums=st.sums.copy(), t=ep.t, over=ep.over, started=ep.started,
                cand=np.array(ep.cand), feats=ep.feats.copy(), mask=ep.mask.copy(), svec=ep.svec.copy(),
                topic=u.topic, last_reward=ep.last_reward)
    return snap


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a)


def _nan_on(pages):
    bad = {int(p) for p in pages}

    def reward(s):
        r = np.asarray(s.rel, np.float64) * 10
        if s.pages is not None:
            r = np.where(np.isin(s.pages, list(bad)), np.nan, r)
        return r
    return reward


# ------------------------------------------------------------------ item 3: non-finite reward
def test_non_finite_reward_step_changes_nothing(tiny_corpus):
    env = make(tiny_corpus)
    env.reset(seed=0)
    u = env.unwrapped
    target = int(u.episode.cand[0])
    env = make(tiny_corpus, reward=_nan_on([target]))
    _obs, info = env.reset(seed=0)
    u = env.unwrapped
    assert int(u.episode.cand[0]) == target
    before = _snapshot(env)
    with pytest.raises(ValueError, match=rf"non-finite value nan for page {target}"):
        env.step(0)
    assert _same(before, _snapshot(env))  # not fetched, reward_sum unchanged, still steppable
    assert np.isfinite(info["reward_sum"])
    _, r, _, _, info = env.step(1)
    assert np.isfinite(r) and np.isfinite(info["reward_sum"]) and info["fetched_page"] != target


def test_non_finite_reward_in_the_vector_env_steps_no_sub_env(tiny_corpus):
    # Python path (a custom reward): sub-env 1 would fetch the NaN page; sub-env 0 must not have stepped
    e = make(tiny_corpus)
    e.reset(seed=1)
    target = int(e.unwrapped.episode.cand[0])
    v = make_vector_env("WikiCrawl-v1", num_envs=2, corpus=tiny_corpus,
                     reward=_nan_on([target]), max_episode_steps=50)
    v.reset(seed=0)
    u = v.unwrapped
    assert int(u.envs[1].episode.cand[0]) == target and int(u.envs[0].episode.cand[1]) != target
    before = [_snapshot(x) for x in u.envs]
    with pytest.raises(ValueError, match="non-finite"):
        v.step(np.array([1, 0]))
    assert all(_same(b, _snapshot(x)) for b, x in zip(before, u.envs))
    v.step(np.array([1, 1]))  # steps normally afterwards


def test_non_finite_cached_reward_in_the_compiled_vector_step_steps_no_sub_env(tiny_corpus):
    v = make_vector_env("WikiCrawl-v1", num_envs=3, corpus=tiny_corpus,
                     max_episode_steps=50)
    v.reset(seed=0)
    u = v.unwrapped
    assert u._uniform
    p = int(u._sel_p[2, 0])
    stack = {k: a.copy() for k, a in u._stack.items()}
    ctr, sums, t = u._ctr.copy(), u._sums.copy(), u._t.copy()
    keep = u._rwt[0][p]
    u._rwt[0][p] = np.nan  # a damaged entry of the (process-wide) reward cache: the page sub-env 2 is about to fetch
    try:
        with pytest.raises(ValueError, match=rf"non-finite value nan for page {p}"):
            v.step(np.array([1, 1, 0]))
    finally:
        u._rwt[0][p] = keep
    assert all(np.array_equal(stack[k], u._stack[k]) for k in stack)
    assert np.array_equal(ctr, u._ctr) and np.array_equal(sums, u._sums) and np.array_equal(t, u._t)


# ------------------------------------------------------------------ item 4: failed reset
def test_failed_reset_changes_nothing(tiny_corpus):
    env = make(tiny_corpus)
    env.reset(seed=0)
    env.step(0)
    before = _snapshot(env)
    rng_state = env.unwrapped.np_random.bit_generator.state
    for options in ({"topic": "cancer", "seeds": [10**9]}, {"topic": "no such topic"}, {"seeds": "x"},
                    {"topic": "cancer", "bogus": 1}, "garbage", ["topic"]):
        with pytest.raises((ValueError, KeyError)):
            env.reset(seed=5, options=options)
        assert _same(before, _snapshot(env)), options
    assert env.unwrapped.np_random.bit_generator.state == rng_state
    _, _, _, _, info = env.step(0)  # the old crawl goes on, on its own topic
    assert info["topic"] == before["topic"].name


def test_reset_options_must_be_a_dict(tiny_corpus):
    env = make(tiny_corpus)
    with pytest.raises(ValueError, match=r"reset options must be a dict .*got str 'garbage'"):
        env.reset(options="garbage")


def test_reset_failing_after_validation_refuses_step_until_a_reset(tiny_corpus):
    env = make(tiny_corpus)
    env.reset(seed=0)
    seed_page = int(env.unwrapped.view.fetched_pages()[0])
    env = make(tiny_corpus, reward=_nan_on([seed_page]))
    with pytest.raises(ValueError, match="non-finite"):
        env.reset(seed=0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(0)


# ------------------------------------------------------------------ item 6: reward_sum
@pytest.mark.parametrize("vector", [False, True])
def test_reward_sum_counts_invalid_action_penalties(tiny_corpus, vector):
    if vector:
        env = make_vector_env("WikiCrawl-v1", num_envs=2, corpus=tiny_corpus, max_candidates=64, max_episode_steps=40)
    else:
        env = make(tiny_corpus, max_candidates=64, max_episode_steps=40)
    _obs, info = env.reset(seed=0)
    total = np.array(info["reward_sum"], np.float64)
    rng = np.random.default_rng(0)
    n_invalid = 0
    for _ in range(30):
        a = rng.integers(64, size=2) if vector else int(rng.integers(64))
        _, r, term, trunc, info = env.step(a)
        total = total + r
        n_invalid += int(np.sum(info["invalid_action"]))
        assert np.allclose(info["reward_sum"], total, rtol=0, atol=1e-9)
        if np.any(term) or np.any(trunc):
            break
    assert n_invalid > 0


# ------------------------------------------------------------------ item 5: state observation + slot actions
def test_state_observation_with_slot_actions_is_refused(tiny_corpus):
    with pytest.raises(ValueError, match=r"observation='state'.*action='page'"):
        make(tiny_corpus, observation="state", action="slot")
    env = make(tiny_corpus, observation="state", action="page")
    env.reset(seed=0)
    page = int(env.unwrapped.view.frontier_pages()[0])
    assert env.step(page)[4]["fetched_page"] == page


# ------------------------------------------------------------------ item 7: label topics, task names
def _labelled_corpus():
    from gym_crawl.corpus import CorpusBuilder

    b = CorpusBuilder(name="labels")
    for i, lab in enumerate(["x.Math", "x.Mathematics", "x.Math.Algebra", "y.Math", "x.Physics"] * 4):
        b.add_page(f"P{i}", f"math algebra physics words page {i}", labels=[lab])
    for i in range(19):
        b.add_link(i, i + 1)
    return b.build()


def test_label_topics_match_whole_components():
    from gym_crawl.relevance.topic import resolve_topic

    c = _labelled_corpus()
    t = resolve_topic("x.Math", c)
    got = {c.page_labels(int(p))[0] for p in np.flatnonzero(t.label_mask(c))}
    assert got == {"x.Math", "x.Math.Algebra"}  # not x.Mathematics, not y.Math
    with pytest.raises(KeyError, match=r"no label 'x.Mat'.*close matches: \['x.Math'"):
        resolve_topic("x.Mat", c)
    with pytest.raises(KeyError, match="no label 'z.Math'"):
        resolve_topic("z.Math", c)


def test_suite_task_names_are_unique_per_label():
    from gym_crawl.benchmarks.suite import Task

    a = Task("s", "x.A", ("Seed",), 100, 30, "train")
    b = Task("s", "y.A", ("Seed",), 100, 30, "train")
    assert a.name != b.name and a.name.startswith("x.A/")


# ------------------------------------------------------------------ item 8: fleet page ids
def test_fleet_refuses_non_integer_page_ids():
    pytest.importorskip("pettingzoo")
    from gym_crawl.envs.fleet import ForagerFleetEnv
    from gym_crawl.webgen.changing import make_changing_web

    env = ForagerFleetEnv(make_changing_web(200, 24.0, seed=0, state_dim=4), step_hours=1.0,
                          n_initial=np.int64(2))
    obs, _ = env.reset(seed=0)
    good = int(np.flatnonzero(obs["forager_1"]["action_mask"])[0])
    for bad in (np.float32(0.7), "31", True, 3.0, None):
        with pytest.raises(ValueError, match=r"forager_0 must be an integer page id"):
            env.step({"forager_0": bad, "forager_1": good})
    env.step({"forager_0": np.int64(good), "forager_1": np.array(good)})


# ------------------------------------------------------------------ item 9: agents
def test_unknown_agent_options_are_refused_with_a_close_match():
    from gym_crawl.agents import make_agent

    with pytest.raises(ValueError, match=r"unknown option\(s\) \['epsilom'\].*did you mean 'epsilon'"):
        make_agent("lfa-sync", epsilom=0.9)
    with pytest.raises(ValueError, match=r"'random'.*unknown option"):
        make_agent("random", epsilon=0.5)
    assert make_agent("lfa-sync", epsilon=0.9).config["epsilon"] == 0.9


def test_agent_load_refuses_nan_weights_and_names_the_file(tmp_path, tiny_corpus):
    import io
    import json

    from gym_crawl.agents import Agent, make_agent, make_env_for, run_episode

    agent = make_agent("lfa-async")
    run_episode(make_env_for(agent, corpus=tiny_corpus, max_episode_steps=20), agent, seed=0)
    good = agent.save(tmp_path / "a.npz")
    state = agent.state_dict()
    k = next(iter(state))
    state[k] = np.full_like(state[k], np.nan)
    buf = io.BytesIO()
    np.savez(buf, __header__=np.frombuffer(json.dumps({"agent": "lfa-async", "config": agent.config}).encode(),
                                           np.uint8), **state)
    (tmp_path / "nan.npz").write_bytes(buf.getvalue())
    with pytest.raises(ValueError, match=r"nan\.npz: non-finite weights"):
        Agent.load(tmp_path / "nan.npz")
    buf = io.BytesIO()  # a list header
    np.savez(buf, __header__=np.frombuffer(b'["lfa-async"]', np.uint8))
    (tmp_path / "list.npz").write_bytes(buf.getvalue())
    with pytest.raises(ValueError, match=r"list\.npz: damaged agent header"):
        Agent.load(tmp_path / "list.npz")
    data = bytearray(good.read_bytes())  # a flipped byte inside the archive
    data[len(data) // 2] ^= 0xFF
    (tmp_path / "flip.npz").write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"flip\.npz"):
        Agent.load(tmp_path / "flip.npz")
    buf = io.BytesIO()  # an object array (needs pickle)
    np.savez(buf, __header__=np.frombuffer(b'{"agent": "lfa-async"}', np.uint8), w=np.array([{}, 1], object))
    (tmp_path / "obj.npz").write_bytes(buf.getvalue())
    with pytest.raises(ValueError, match=r"obj\.npz"):
        Agent.load(tmp_path / "obj.npz")


# ------------------------------------------------------------------ item 10: smaller
def test_sizes_that_cannot_fit_are_refused_with_the_estimate(tiny_corpus):
    from gym_crawl.corpus import load_corpus

    with pytest.raises(ValueError, match=r"synthetic corpus of 100,000,000 pages would need about .* GB"):
        load_corpus("synthetic-100000000")
    with pytest.raises(ValueError, match=r"n_categories=10000000 .* would need about"):
        make(tiny_corpus, n_categories=10**7)
    with pytest.raises(ValueError, match=r"text=\{'dim': 1000000000\} .* would need about"):
        make(tiny_corpus, text={"dim": 10**9})
    with pytest.raises(ValueError, match=r"num_envs=5000000 .* would need about"):
        make_vector_env("WikiCrawl-v1", num_envs=5_000_000, corpus=tiny_corpus)


def test_empty_corpus_name_and_numpy_integers(tiny_corpus):
    from gym_crawl.corpus import load_corpus

    with pytest.raises(ValueError, match="corpus '' is empty"):
        load_corpus("")
    with pytest.raises(ValueError, match="corpus '  ' is empty"):
        make("  ")
    v = make_vector_env("WikiCrawl-v1", num_envs=np.int64(2), corpus=tiny_corpus)
    assert v.num_envs == 2


def test_negative_ids_do_not_wrap_around(tiny_corpus):
    env = make(tiny_corpus)
    env.reset(seed=0)
    u = env.unwrapped.view
    for call, arg in ((u.link_scores, [-1]), (u.is_frontier, -1), (u.word, -1), (u.is_frontier, u.n_pages),
                      (u.word, True), (u.link_scores, [0.5])):
        with pytest.raises(ValueError, match="ids must"):
            call(arg)
    f = int(u.frontier_pages()[0])
    assert u.is_frontier(f) is True and u.is_frontier(np.array([f]))[0]
    assert u.word(np.int64(0)) == u.word(0)


# ------------------------------------------------------------------ item 11: CLI
@pytest.mark.parametrize("argv, message", [
    (["--steps", "-1"], "argument --steps: must be >= 1"),
    (["--episodes", "0"], "argument --episodes: must be >= 1"),
    (["--seed", "-1"], "argument --seed: must be >= 0"),
    (["--k", "0"], "argument --k: must be >= 1"),
    (["--steps", "ten"], "argument --steps: expected an integer"),
])
def test_cli_refuses_bad_numbers_before_the_run(argv, message, capsys):
    from gym_crawl.cli import main

    with pytest.raises(SystemExit) as e:
        main(["crawl", *argv])
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--agent", ""], "no agent name given"),
    (["--save", "/proc/self/agent.npz"], "--save /proc/self/agent.npz: cannot write in /proc/self"),
    (["--save", "/no/such/folder/a.npz"], "folder /no/such/folder does not exist"),
    (["--plot", "/proc/self/c.png"], "--plot /proc/self/c.png: cannot write"),
])
def test_cli_checks_agent_and_outputs_before_the_run(argv, message, capsys, monkeypatch):
    import gym_crawl.agents as agents_mod
    from gym_crawl.cli import main

    def no_run(*a, **k):
        raise AssertionError("the run started")
    monkeypatch.setattr(agents_mod, "run_episode", no_run)
    assert main(["crawl", "--corpus", "synthetic-500", "--steps", "5", *argv]) == 2
    assert message in capsys.readouterr().err


# ------------------------------------------------------------------ item 16: the user's umask
@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_files_are_created_with_the_users_umask(tmp_path, umask):
    import os
    import stat

    from conftest import make_tiny_corpus

    from gym_crawl._io import atomic_write_json, current_umask
    from gym_crawl.agents import make_agent

    old = os.umask(umask)
    try:
        assert current_umask() == umask
        make_tiny_corpus(200).save(tmp_path / "c")
        atomic_write_json(tmp_path / "r.json", {"a": 1})
        make_agent("lfa-async").save(tmp_path / "agent.npz")
    finally:
        os.umask(old)
    want = 0o666 & ~umask
    for f in (tmp_path / "c" / "manifest.json", tmp_path / "c" / ".verified.json", tmp_path / "c" / "link_dst.npy",
              tmp_path / "r.json", tmp_path / "agent.npz"):
        assert stat.S_IMODE(f.stat().st_mode) == want, f


# ------------------------------------------------------------------ item 18: CLI conventions
def test_cli_version_defaults_and_did_you_mean(capsys):
    from gym_crawl import __version__
    from gym_crawl.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"gym-crawl {__version__}"
    with pytest.raises(SystemExit):
        main(["crawl", "--help"])
    out = capsys.readouterr().out
    flat = " ".join(out.split())  # the default task's budget and corpus, named in the help
    assert "(default: the default task's, 100)" in flat and "synthetic-hard)" in flat
    assert "(default: best-first;" in flat and "(default: None)" not in out  # live: the recorded default
    assert main(["crawl", "--agent", "best-frst", "--steps", "3", "--corpus", "synthetic-500"]) == 2
    assert "did you mean 'best-first'" in capsys.readouterr().err
    assert main(["corpus", "info", "wikispedia"]) == 2
    assert "did you mean 'wikispeedia'" in capsys.readouterr().err


# ------------------------------------------------------------------ item 13: plug in your own agent
_PLUGIN = '''
import numpy as np
from gym_crawl.agents import Agent


class LongestAnchorAgent(Agent):
    name, action_kind = "longest-anchor", "page"

    def act(self, obs, info):
        F = self.env.frontier_pages()
        return int(F[np.argmax([len(self.env.link_words(int(p))["anchor"]) for p in F])])


NOT_AN_AGENT = 3
'''


@pytest.fixture()
def plugin_dir(tmp_path, monkeypatch):
    """A module on sys.path and an installed-package record (dist-info) declaring it as an entry point."""
    import sys

    from gym_crawl.agents import base

    (tmp_path / "trust_plugin_agents.py").write_text(_PLUGIN)
    di = tmp_path / "trust_plugin-0.1.dist-info"
    di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: trust-plugin\nVersion: 0.1\n")
    (di / "entry_points.txt").write_text("[gym_crawl.agents]\nlongest-anchor = "
                                         "trust_plugin_agents:LongestAnchorAgent\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(base, "_PLUGINS_LOADED", False)
    yield tmp_path
    for n in ("longest-anchor", "trust_plugin_agents:LongestAnchorAgent", "trust_plugin_agents:NOT_AN_AGENT"):
        base.AGENTS.unregister(n)
    sys.modules.pop("trust_plugin_agents", None)


def test_agent_by_module_and_class_and_by_entry_point(plugin_dir, tiny_corpus, capsys):
    from gym_crawl.agents import agent_names, make_agent, make_env_for, run_episode
    from gym_crawl.cli import main

    a = make_agent("trust_plugin_agents:LongestAnchorAgent")
    res = run_episode(make_env_for(a, corpus=tiny_corpus, max_episode_steps=15), a, seed=0)
    assert res.summary()["steps"] == 15
    assert "longest-anchor" in agent_names()  # the entry point of the installed package
    b = make_agent("longest-anchor")
    assert type(b).__name__ == "LongestAnchorAgent"
    with pytest.raises(ValueError, match="not a subclass of gym_crawl.agents.Agent"):
        make_agent("trust_plugin_agents:NOT_AN_AGENT")
    with pytest.raises(ValueError, match="no_such_module"):
        make_agent("no_such_module:Agent")
    assert main(["crawl", "--agent", "longest-anchor,trust_plugin_agents:LongestAnchorAgent", "--corpus",
                 "synthetic-500", "--steps", "5", "--json"]) == 0
    out = capsys.readouterr().out  # "agent": the spec as given; "agent_name": the class's registered name
    assert out.count('"agent_name": "longest-anchor"') == 2
    assert '"agent": "trust_plugin_agents:LongestAnchorAgent"' in out


def test_link_words_are_the_discovering_links_words(tiny_corpus):
    env = make(tiny_corpus)
    env.reset(seed=0)
    u = env.unwrapped
    p = int(u.view.frontier_pages()[0])
    w = u.view.link_words(p)
    c = tiny_corpus
    e = int(u.state.best_link[p])
    assert int(c.link_dst[e]) == p and w["anchor"] == [c.vocab[int(t)] for t in
                                                       c.anchor_terms[c.anchor_ptr[e]:c.anchor_ptr[e + 1]]]
    assert w["url"] and all(isinstance(x, str) for x in w["url"])
    with pytest.raises(ValueError, match="not in the frontier"):
        u.view.link_words(int(u.view.fetched_pages()[0]))


# ------------------------------------------------------------------ item 16: a plot only when asked
def test_cli_writes_a_plot_only_when_asked(tmp_path, monkeypatch, capsys):
    from gym_crawl.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["crawl", "--agent", "random", "--corpus", "synthetic-500", "--steps", "5"]) == 0
    out, err = capsys.readouterr()
    assert list(tmp_path.iterdir()) == [] and "curve written" not in out + err
    assert main(["crawl", "--agent", "random", "--corpus", "synthetic-500", "--steps", "5", "--plot", "c.png"]) == 0
    assert (tmp_path / "c.png").is_file() and "curve written to c.png" in capsys.readouterr().err  # a diagnostic


def test_bench_help_lists_every_benchmark_with_one_line(capsys):
    from gym_crawl.cli import main

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    out = capsys.readouterr().out
    assert "fuzz_env             Random-action fuzz of the env API" in out and "han2018" in out
    listed = {ln.split()[0] for ln in out.splitlines() if ln.startswith("  ") and ln.split()}
    assert not listed & {"plotting", "report", "evaluate", "train_report"}  # shared machinery is not a benchmark
