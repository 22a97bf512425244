"""ForagerFleetEnv (Palotai et al.'s forager fleet, PettingZoo ParallelEnv) and the Palotai foragers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import parallel_api_test

from gym_crawl.agents.palotai import PalotaiForager, make_fleet_policy, run_fleet
from gym_crawl.envs.fleet import ForagerFleetEnv
from gym_crawl.webgen.changing import ChangingWeb, make_changing_web


@pytest.fixture(scope="module")
def web() -> ChangingWeb:
    return make_changing_web(400, 48.0, seed=0, state_dim=8)


def _hand_web(mod1=()) -> ChangingWeb:
    """Front page 0 links to page 1 (born 0.5 h before the start: new) and page 2 (born 48 h before: stale)."""
    return ChangingWeb.from_lists(3, [(0, 1), (0, 2)], birth=[-100.0, -0.5, -48.0],
                                  modifications=[[], list(mod1), []], horizon=10.0, state_dim=2, home=0)


def _random_actions(env, obs, rng):
    return {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}


# ------------------------------------------------------------------------------ PettingZoo API
def test_parallel_api_test_with_births_and_deaths(web):
    env = ForagerFleetEnv(web, step_hours=0.25, max_score=101.0, min_score=99.9, n_initial=3, max_names=64)
    seen = {"births": 0, "deaths": 0, "truncated": 0}
    step = env.step

    def counting_step(actions):
        out = step(actions)
        seen["births"] += sum(bool(i["child"]) for i in out[4].values())
        seen["deaths"] += sum(out[2].values())
        seen["truncated"] += sum(out[3].values())
        return out

    env.step = counting_step
    with warnings.catch_warnings():
        # the run ends with names never born (possible_agents lists every name that may ever exist)
        warnings.filterwarnings("ignore", message="No agents present but not all possible_agents")
        parallel_api_test(env, num_cycles=200)
    # the API test went through births, deletions and the final truncation
    assert seen["births"] > 0 and seen["deaths"] > 0 and seen["truncated"] > 0


def test_spaces_hold_observations_and_bad_actions_raise(web):
    env = ForagerFleetEnv(web, step_hours=1.0)
    obs, infos = env.reset(seed=0)
    assert env.agents == ["forager_0", "forager_1"]
    assert env.possible_agents[:2] == env.agents and len(env.possible_agents) == 256
    for a in env.agents:
        assert env.observation_space(a).contains(obs[a])
        assert env.observation_space(a) is env.observation_space("forager_200")  # one shared space object
        assert set(infos[a]) >= {"time", "fetched_page", "sent", "relevant", "score", "child", "parent"}
    with pytest.raises(ValueError, match="forager_1"):
        env.step({"forager_0": 0})
    with pytest.raises(ValueError, match=r"\[0, 400\)"):
        env.step({"forager_0": 400, "forager_1": 0})
    with pytest.raises(ValueError, match="unknown agent"):
        env.observation_space("crawler_0")
    with pytest.raises(ValueError, match="unknown ForagerFleetEnv parameters"):
        ForagerFleetEnv(web, max_scor=3)
    # an id outside the mask: the step is spent without a fetch, penalty, flagged
    bad = int(np.flatnonzero(obs["forager_0"]["action_mask"] == 0)[0])
    good = int(np.flatnonzero(obs["forager_1"]["action_mask"])[0])
    obs, rew, _term, _trunc, info = env.step({"forager_0": bad, "forager_1": good})
    assert info["forager_0"]["invalid_action"] and info["forager_0"]["fetched_page"] == -1
    assert rew["forager_0"] == -1.0 and not info["forager_1"]["invalid_action"]
    for a in env.agents:
        assert env.observation_space(a).contains(obs[a])
        assert env.action_space(a) is env.action_space("forager_9") and env.action_space(a).n == 400
    assert env.render() is None  # no render mode
    ansi = ForagerFleetEnv(web, step_hours=1.0, render_mode="ansi")
    ansi.reset(seed=0)
    text = ansi.render()
    assert text.splitlines()[0] == "t=0.0h foragers=2" and "forager_1: score=100.00 path_step=101" in text
    ansi.close()


# ------------------------------------------------------------------------------ the reinforcing agent
def test_ra_rewards_only_the_first_submitter():
    w = _hand_web()
    winners = set()
    for seed in range(12):
        env = ForagerFleetEnv(w, step_hours=0.1, start_urls=[0])
        obs, _ = env.reset(seed=seed)
        assert all(o["path_start"] == 1 and o["action_mask"].tolist() == [1, 0, 0] for o in obs.values())
        obs, rew, _, _, info = env.step({"forager_0": 0, "forager_1": 0})
        # both downloaded pages 0, 1, 2 and sent only page 1 (0 and 2 are older than 24 h)
        assert [info[a]["sent"] for a in ("forager_0", "forager_1")] == [1, 1]
        assert sorted(rew.values()) == [-1.0, 100.0]
        win = max(rew, key=rew.get)
        lose = min(rew, key=rew.get)
        assert info[win]["relevant"] == 1 and info[lose]["relevant"] == 0
        assert info[win]["score"] == pytest.approx(100 - 0.05 + 1) and info[lose]["score"] == pytest.approx(99.95)
        found = env.found_documents()
        assert found["page"].tolist() == [1] and found["version"].tolist() == [0]
        assert found["forager"].tolist() == [int(win.split("_")[1])]
        winners.add(win)
    assert winners == {"forager_0", "forager_1"}  # the RA's order is random, not a fixed priority


def test_ra_remembers_documents_across_steps():
    """A document the RA accepted earlier is not relevant again: the late submitter gets PENALTY."""
    env = ForagerFleetEnv(_hand_web(), step_hours=0.1, start_urls=[0])
    env.reset(seed=0)
    # forager_1 wastes step 1 on an invalid id (no fetch); forager_0 alone sends page 1 (version 0)
    _, rew, _, _, info = env.step({"forager_0": 0, "forager_1": 2})
    assert rew == {"forager_0": 100.0, "forager_1": -1.0} and info["forager_1"]["invalid_action"]
    _, rew, _, _, info = env.step({"forager_0": 1, "forager_1": 0})
    assert info["forager_1"]["sent"] == 1 and info["forager_1"]["relevant"] == 0 and rew["forager_1"] == -1.0
    assert info["forager_1"]["score"] == pytest.approx(100 - 0.05)
    assert rew["forager_0"] == 0.0 and info["forager_0"]["sent"] == 0   # page 1 v0 was sent by it already
    assert env.found_documents()["forager"].tolist() == [0]


def test_bad_parameters_name_the_argument(web):
    for kw, name in (({"reward": "100"}, "reward"), ({"window": -1.0}, "window"), ({"max_step": 2.5}, "max_step"),
                     ({"send_window": float("nan")}, "send_window"), ({"step_hours": 0}, "step_hours"),
                     ({"n_initial": 0}, "n_initial"), ({"start_urls": [400]}, "start_urls"),
                     ({"min_foragers": 5, "max_foragers": 4}, "min_foragers"), ({"max_names": 1}, "max_names"),
                     ({"render_mode": "human"}, "render_mode")):
        with pytest.raises(ValueError, match=name):
            ForagerFleetEnv(web, **kw)
    s = np.array(web.states)
    s[0, 0] = 2.0
    fake = type("W", (), {k: getattr(web, k) for k in ("n_pages", "horizon", "state_dim", "indptr", "indices",
                                                         "birth", "mod_ptr", "mod_times", "home")})()
    fake.states = s
    with pytest.raises(ValueError, match=r"states must be finite and in \[-1, 1\]"):
        ForagerFleetEnv(fake)
    for kw, name in (({"alpha": 2.0}, "alpha"), ({"weblog_size": 0}, "weblog_size")):
        with pytest.raises(ValueError, match=name):
            PalotaiForager("wl", 10, 2, np.random.default_rng(0), **kw)


def test_stale_documents_are_penalized_and_not_sent_by_default():
    w = _hand_web()
    env = ForagerFleetEnv(w, step_hours=0.1, start_urls=[0], send_window=1e9)  # foragers that send everything
    env.reset(seed=0)
    _, rew, _, _, info = env.step({"forager_0": 0, "forager_1": 0})
    assert [info[a]["sent"] for a in ("forager_0", "forager_1")] == [3, 3]
    assert sorted(rew.values()) == [-3.0, 98.0]  # page 1: +100 to the first; pages 0 and 2 (stale): -1 each
    assert env.run_log()["relevant"].tolist() == [1]


def test_a_modified_page_is_a_new_document():
    w = _hand_web(mod1=[0.15])
    env = ForagerFleetEnv(w, step_hours=0.1, start_urls=[0], max_step=1, n_initial=1, min_foragers=1)
    env.reset(seed=0)
    _, rew, *_ = env.step({"forager_0": 0})               # t=0: path start, page 1 v0 rewarded
    assert rew["forager_0"] == 100.0
    obs, rew, _, _, info = env.step({"forager_0": 1})     # t=0.1: page 1 again, same version: not resent
    assert info["forager_0"]["sent"] == 0 and rew["forager_0"] == 0.0
    assert obs["forager_0"]["path_start"] == 1            # MAX_STEP = 1 ordered step: a new path
    assert obs["forager_0"]["action_mask"].tolist() == [1, 1, 0]  # seed + its own visited URLs
    _, rew, _, _, info = env.step({"forager_0": 0})      # t=0.2: page 1 was modified at 0.15: version 1
    assert info["forager_0"]["sent"] == 1 and rew["forager_0"] == 100.0
    f = env.found_documents()
    assert f["page"].tolist() == [1, 1] and f["version"].tolist() == [0, 1]
    assert [w.version_at(p, t) for p, t in zip(f["page"], f["time"])] == [0, 1]


# ------------------------------------------------------------------------------ fleet life (Alg. 8)
def test_multiplication_threshold_and_inheritance(web):
    env = ForagerFleetEnv(web, step_hours=0.25, max_score=101.0, max_foragers=4)
    obs, infos = env.reset(seed=3)
    rng = np.random.default_rng(0)
    prev = {a: infos[a]["score"] for a in env.agents}
    fetched = {a: set() for a in env.agents}
    births = []
    while env.agents:
        obs, _rew, _term, _trunc, infos = env.step(_random_actions(env, obs, rng))
        assert len(env.agents) <= 4
        for a, inf in infos.items():
            if inf["parent"]:
                continue
            fetched[a].add(inf["fetched_page"])
            expected = prev[a] - 0.05 * inf["sent"] + inf["relevant"]
            if inf["child"]:
                births.append((a, inf["child"]))
                assert expected >= 101.0 and inf["score"] == 100.0 and infos[inf["child"]]["score"] == 100.0
                child_obs = obs[inf["child"]]
                assert child_obs["path_start"] == 1 and infos[inf["child"]]["parent"] == a
                known = {p for p in fetched[a] if p >= 0}
                assert known <= set(np.flatnonzero(child_obs["action_mask"]).tolist())  # inherited URLs
            else:
                assert inf["score"] == pytest.approx(expected)
                if inf["n_foragers"] < 4:  # room left after this step's births: no one else qualified
                    assert expected < 101.0
        for a, inf in infos.items():
            prev[a] = inf["score"]
            fetched.setdefault(a, set(fetched.get(inf["parent"], set())) if inf["parent"] else set())
    assert births and births[0][1] == "forager_2"  # the next unused name
    names = [c for _, c in births]
    assert len(names) == len(set(names))  # never reused


def test_deletion_threshold_keeps_min_foragers(web):
    env = ForagerFleetEnv(web, step_hours=0.25, min_score=150.0, max_score=1e9, n_initial=5, min_foragers=2)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(1)
    dead = set()
    for _ in range(5):
        live = list(env.agents)
        obs, _rew, term, _trunc, infos = env.step(_random_actions(env, obs, rng))
        for a in live:
            if term[a]:
                assert infos[a]["deleted"] and infos[a]["score"] <= 150.0 and a not in env.agents
                dead.add(a)
        assert len(env.agents) >= 2 and not dead & set(env.agents)
    assert len(env.agents) == 2 and len(dead) == 3


# ------------------------------------------------------------------------------ Alg. 1, hand-computed
def test_weblog_update_on_a_hand_computed_path():
    f = PalotaiForager("wl", 50, 2, np.random.default_rng(0), weblog_size=4, start_size=2,
                       weblog=(np.array([10, 11, 12]), np.zeros(3)))
    # path 11 -> 20 -> 21 with step rewards -1, 100, -2: reward-to-go 97, 98, -2
    f.weblog_update([11, 20, 21], [-1.0, 100.0, -2.0])
    assert f.wl_urls.tolist() == [20, 11, 10, 12]          # 21 (-2) truncated at WEBLOG_SIZE = 4
    assert f.wl_vals.tolist() == pytest.approx([98.0, 0.3 * 97.0, 0.0, 0.0])
    # path 20 -> 22 with 5, 3: 20 known: 0.7 * 98 + 0.3 * 8 = 71; 22 new: 3
    f.weblog_update([20, 22], [5.0, 3.0])
    assert f.wl_urls.tolist() == [20, 11, 22, 10]
    assert f.wl_vals.tolist() == pytest.approx([71.0, 29.1, 3.0, 0.0])
    assert f.start_list().tolist() == [20, 11]


def test_weblog_update_through_act_and_frozen_for_rl():
    mask = np.zeros(50, np.int8)
    mask[[10, 11, 12]] = 1
    start = {"action_mask": mask, "path_start": 1, "n_fetched": 0}
    for kind in ("wl", "rl"):
        f = PalotaiForager(kind, 50, 2, np.random.default_rng(0), weblog_size=4, start_size=1)
        assert f.act(start) == 10  # the seeds enter the weblog with value 0 (Alg. 10); START_SIZE = 1
        for page, r in ((10, -1.0), (20, 5.0)):
            f.observe(r, {"n_fetched": 0}, {"fetched_page": page})
        # next path start: Alg. 1 on the path 10 (-1), 20 (+5): reward-to-go 4, 5
        nxt = f.act(start)
        if kind == "wl":
            assert f.wl_urls.tolist() == [20, 10, 11, 12]
            assert f.wl_vals.tolist() == pytest.approx([5.0, 0.3 * 4.0, 0.0, 0.0])
            assert nxt == 10  # 20 leads the start list but is not a valid start here (not in the mask)
        else:  # RL foragers keep the seed weblog
            assert f.wl_urls.tolist() == [10, 11, 12] and f.wl_vals.tolist() == [0.0, 0.0, 0.0]


def test_td_update_and_greedy_url_ordering():
    f = PalotaiForager("rl", 10, 2, np.random.default_rng(0), weights=np.array([1.0, 0.0]), normalize_td=False)
    f.put_states([3, 4, 5], [[0.5, 0.0], [0.2, 0.1], [0.9, -0.5]])
    mask = np.zeros(10, np.int8)
    mask[[3, 4, 5]] = 1
    f.wl_urls, f.wl_vals = np.array([3]), np.zeros(1)
    assert f.act({"action_mask": mask, "path_start": 0}) == 5  # argmax of state . weight
    f.observe(0.0, {"n_fetched": 0}, {"fetched_page": 3})
    f.observe(10.0, {"n_fetched": 0}, {"fetched_page": 4})
    # delta = 10 + 0.9 * 0.2 - 0.5 = 9.68; w += 0.1 * 9.68 * (0.5, 0)
    assert f.weights.tolist() == pytest.approx([1.0 + 0.1 * 9.68 * 0.5, 0.0])
    f.wl_urls, f.wl_vals = np.arange(10), np.zeros(10)
    g = f.spawn()
    assert g.weights.tolist() == f.weights.tolist() and g.weights is not f.weights
    # RL foragers all keep the same seed weblog (§4.2.1): the child gets a copy, the parent keeps its own
    assert g.wl_urls.tolist() == f.wl_urls.tolist() == list(range(10)) and g.wl_urls is not f.wl_urls
    h = PalotaiForager("rl", 10, 2, np.random.default_rng(0), weights=np.zeros(2), normalize_td=True)
    h.put_states([1, 2], [[1.0, 1.0], [0.0, 0.0]])
    h.observe(0.0, {"n_fetched": 0}, {"fetched_page": 1})
    h.observe(4.0, {"n_fetched": 0}, {"fetched_page": 2})
    assert h.weights.tolist() == pytest.approx([0.1 * 4.0 / 2.0] * 2)  # step α / ‖s‖² for ‖s‖² = 2 > 1
    w = PalotaiForager("wl", 10, 2, np.random.default_rng(0), weblog=(np.arange(8), np.arange(8.0)[::-1]))
    child = w.spawn()  # Alg. 6: half of the weblog, removed from the parent's; new random weights
    assert len(child.wl_urls) == 4 and len(w.wl_urls) == 4
    assert sorted(child.wl_urls.tolist() + w.wl_urls.tolist()) == list(range(8))
    assert not np.allclose(child.weights, w.weights)


# ------------------------------------------------------------------------------ determinism, fairness
def _trace(web, kind, seed, env=None):
    env = env or ForagerFleetEnv(web, step_hours=0.5, max_score=110.0)  # births (Alg. 6 draws) within 96 steps
    steps = []
    run = run_fleet(env, kind, seed,
                    on_step=lambda t, r, i: steps.append((dict(r), {a: dict(v) for a, v in i.items()})))
    weights = {a: p.weights.copy() for a, p in run.policies.items()}
    weblogs = {a: (p.wl_urls.copy(), p.wl_vals.copy()) for a, p in run.policies.items()}
    return steps, env.run_log(), env.found_documents(), weights, weblogs, (run.births, run.deaths)


@pytest.mark.parametrize("kind", ["wl", "rl", "wlrl"])
def test_whole_fleet_is_deterministic_under_a_seed(web, kind):
    """Same seed: every reward and info of every step, the run log, the found documents and the final
    policies' weights and weblogs are identical bit for bit; another seed changes the run."""
    t1, t2 = _trace(web, kind, 5), _trace(web, kind, 5)
    assert len(t1[0]) == 96 and t1[5][0] > 0  # a whole run, with births
    assert _same(t1, t2)
    assert all(t1[3][a].tobytes() == t2[3][a].tobytes() for a in t1[3])
    t3 = _trace(web, kind, 6)
    assert not _same(t1[0], t3[0])
    env = ForagerFleetEnv(web, step_hours=0.5, max_score=110.0)  # reset(seed) on a used env: the same run
    _trace(web, kind, 6, env)
    assert _same(_trace(web, kind, 5, env), t1)


def _fleet_trace(web, steps=40):
    """Everything the env returns to every agent under a state-blind driver (a seeded random valid id, which
    depends only on the masks), so that nothing but what the env shows can differ between two webs; and the
    pages the fleet visited and downloaded."""
    env = ForagerFleetEnv(web, step_hours=0.5)
    obs, infos = env.reset(seed=0)
    rng = np.random.default_rng(7)
    out = [(obs, infos)]
    visited, downloaded = set(), set()
    for _ in range(steps):
        obs, rew, term, trunc, infos = env.step(_random_actions(env, obs, rng))
        out.append((obs, rew, term, trunc, infos))
        for a, o in obs.items():
            downloaded.update(o["fetched_ids"][: o["n_fetched"]].tolist())
            if infos[a]["fetched_page"] >= 0:
                visited.add(infos[a]["fetched_page"])
    return out, visited, downloaded


def _same(x, y) -> bool:
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, tuple):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and np.array_equal(x, y)
    return type(x) is type(y) and x == y


def _tampered(web, state_pages=(), mod_pages=(), link_pages=(), birth_pages=()):
    """``web`` with the states of ``state_pages`` negated, the modifications of ``mod_pages`` moved (one more
    modification, just after birth), the out-links of ``link_pages`` exchanged among them (out-degrees
    kept, so the observation shapes stay the same) and ``birth_pages`` published 5 hours earlier."""
    birth = np.array(web.birth)
    birth[list(birth_pages)] -= 5.0
    s = np.array(web.states)
    s[list(state_pages)] = -s[list(state_pages)]
    mods = [list(web.mod_times[web.mod_ptr[p]:web.mod_ptr[p + 1]]) for p in range(web.n_pages)]
    for p in mod_pages:
        first = mods[p][0] if mods[p] else web.horizon
        mods[p] = [(web.birth[p] + first) / 2.0, *mods[p]]
    mod_ptr = np.concatenate([[0], np.cumsum([len(m) for m in mods])]).astype(np.int64)
    mod_times = np.asarray([t for m in mods for t in m], np.float64)
    indices = np.array(web.indices)
    rows = [np.arange(web.indptr[p], web.indptr[p + 1]) for p in link_pages]
    if rows:
        slots = np.concatenate(rows)
        indices[slots] = np.random.default_rng(0).permutation(indices[slots])
    return ChangingWeb(web.indptr, indices, birth, mod_ptr, mod_times, s, web.horizon, home=web.home)


def test_no_leak_of_unfetched_pages_states_links_or_modifications(web):
    """A forager sees only what it downloaded: tampering with the states and modification times of pages no
    forager downloaded, with the out-links of pages no forager visited, and with the birth times of pages
    that are not even linked from a visited page changes nothing the env returns to any agent
    (observations, rewards, terminations, truncations, infos)."""
    base, visited, downloaded = _fleet_trace(web)
    never_dl = np.setdiff1d(np.arange(web.n_pages), sorted(downloaded))
    never_visited = np.setdiff1d(np.arange(web.n_pages), sorted(visited))
    never_visited = never_visited[np.diff(web.indptr)[never_visited] > 0]
    linked = np.concatenate([web.indices[web.indptr[p]:web.indptr[p + 1]] for p in visited])
    unlinked = np.setdiff1d(never_dl, linked)
    assert len(downloaded) > 20 and len(never_dl) > 100 and len(never_visited) > 20 and len(unlinked) > 100
    other, v2, d2 = _fleet_trace(_tampered(web, never_dl, never_dl, never_visited, unlinked))
    assert v2 == visited and d2 == downloaded
    assert all(_same(x, y) for x, y in zip(base, other))
    # the check can fail: the same tampering of pages the fleet did download shows
    dl = np.array(sorted(downloaded))
    late_linked = linked[web.birth[linked] > 0]  # linked from a visited page, born during the run
    assert len(late_linked) > 0
    for kw in ({"state_pages": dl[:3]}, {"mod_pages": dl}, {"link_pages": np.array(sorted(visited))},
               {"birth_pages": late_linked}):
        changed, *_ = _fleet_trace(_tampered(web, **kw))
        assert not all(_same(x, y) for x, y in zip(base, changed)), kw


def test_run_fleet_kinds_and_policy_factory(web):
    env = ForagerFleetEnv(web, step_hours=0.5)
    env.reset(seed=0)
    p = make_fleet_policy("wlrl", env, "forager_0", 0)
    assert p.n_pages == web.n_pages and p.state_dim == 8 and p.alpha == 0.1 and p.gamma == 0.9 and p.beta == 0.3
    with pytest.raises(ValueError, match="kind"):
        make_fleet_policy("sarsa", env, "forager_0")
    with pytest.raises(ValueError, match="kind"):
        run_fleet(env, "sarsa")
    with pytest.raises(ValueError, match="max_steps"):
        run_fleet(env, "wl", max_steps=-1)
    assert run_fleet(env, "wl", seed=1, max_steps=7).steps == 7
    for kind in ("wl", "rl", "wlrl"):
        run = run_fleet(env, kind, seed=1)
        lg = env.run_log()
        assert run.steps == 96 and lg["invalid"].sum() == 0 and lg["relevant"].sum() > 0
        assert np.all(np.isfinite(np.concatenate([q.weights for q in run.policies.values()])))


def test_paths_of_max_step_steps_restart_from_known_urls(web):
    env = ForagerFleetEnv(web, step_hours=0.5, max_step=3)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(2)
    visited = {a: {int(u) for u in env.start_urls} for a in env.agents}
    starts = 0
    while env.agents:
        before = {a: obs[a] for a in env.agents}
        obs, _rew, _term, _trunc, infos = env.step(_random_actions(env, before, rng))
        for a, inf in infos.items():
            if inf["parent"]:
                continue
            if before[a]["path_start"]:
                starts += 1
                assert inf["path_start"] and inf["path_step"] == 1 and inf["fetched_page"] in visited[a]
                assert set(np.flatnonzero(before[a]["action_mask"]).tolist()) <= visited[a]
            else:
                assert not inf["path_start"] and 2 <= inf["path_step"] <= 4  # MAX_STEP = 3 ordered steps
            visited[a].add(inf["fetched_page"])
            if inf["path_step"] > 3:
                assert obs[a]["path_start"] == 1
            elif not obs[a]["path_start"]:
                assert obs[a]["action_mask"].any()  # a path continues only with a non-empty frontier
        for a, inf in infos.items():
            if inf["parent"]:  # a newborn may restart from its parent's URLs
                visited[a] = set(visited[inf["parent"]])
    assert starts >= 2 * 96 // 4


@pytest.mark.slow  # ~13 CPU-s (web generation, graph statistics, figures); > 1 min wall on a loaded machine
def test_bench_palotai_quick_writes_json_markdown_png(tmp_path):
    import json

    from gym_crawl.benchmarks.palotai import main

    assert main(["--quick", "--runs", "2", "--pages", "800", "--hours", "12", "--clock", "step", "--step-hours", "0.2",
                 "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "palotai.json").read_text())
    assert res["config"]["clock"] == "step" and res["config"]["steps"] == 60
    assert set(res["table"]) == {"sfsw", "rewired"} and set(res["table"]["sfsw"]) == {"wl", "rl", "wlrl"}
    for g in res["table"].values():
        for cell in g.values():
            assert cell["runs"] == 2 and 0 < cell["sent_efficiency"][0] <= 1 and 0 < cell["freshness"][0] <= 1
    assert {"clustering", "mean_path"} <= set(res["graphs"]["rewired"])
    assert set(res["verdicts"]) == {"sfsw", "rewired"}
    assert "Table 2" in (tmp_path / "palotai.md").read_text()
    assert "Fetch profile" in (tmp_path / "palotai.md").read_text()
    for g in res["table"].values():
        for cell in g.values():
            assert 0 < cell["profile_distinct_share"][0] <= 1 and 0 <= cell["profile_index_share"][0] <= 1
            assert cell["profile_fetched_rate"][0] > 0
    for f in res["figures"]:
        assert (tmp_path / f).stat().st_size > 1000



def test_fetch_profile_hand_computed():
    from gym_crawl.benchmarks.palotai import fetch_profile

    w = ChangingWeb.from_lists(4, [(0, 1), (0, 2), (0, 3)], [0.0] * 4, [[], [], [], []], 10.0,
                               rates=[2.0, 0.5, 0.1, 0.01], is_index=[True, False, False, False])
    # fetches 0, 0, 0, 1, 2: 3 distinct of 5, 3 of 5 on the index page, rates 2, 2, 2, 0.5, 0.1 -> median 2
    p = fetch_profile(w, np.array([0, 0, 0, 1, 2]), np.array([1, 3]))
    assert p["fetches"] == 5 and p["distinct_share"] == 0.6 and p["index_share"] == 0.6
    assert p["fetched_rate"] == 2.0 and p["relevant_rate"] == (0.5 + 0.01) / 2 and p["relevant_index_share"] == 0.0
    e = fetch_profile(w, np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert e["fetches"] == 0 and all(np.isnan(e[k]) for k in ("distinct_share", "index_share", "relevant_rate"))


# ------------------------------------------------------------------------------ the paper's clock (clock="download")
DH = 2.6 / 3600.0


def test_parallel_api_test_download_clock_with_births_and_deaths(web):
    env = ForagerFleetEnv(web, clock="download", download_hours=0.01, slice_hours=0.02, max_score=101.0,
                          min_score=99.9, n_initial=3, max_names=64)
    seen = {"births": 0, "deaths": 0, "acted": 0}
    step = env.step

    def counting_step(actions):
        acting = env.acting_agents
        out = step(actions)
        assert len(acting) == 1 and [a for a, i in out[4].items() if i["acted"]] == acting
        assert all(out[1][a] == 0.0 for a in out[1] if a not in acting)
        seen["births"] += sum(bool(i["child"]) for i in out[4].values())
        seen["deaths"] += sum(out[2].values())
        seen["acted"] += 1
        return out

    env.step = counting_step
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="No agents present but not all possible_agents")
        parallel_api_test(env, num_cycles=400)
    assert seen["births"] > 0 and seen["deaths"] > 0 and seen["acted"] > 0


def test_download_clock_advances_by_the_downloads():
    """Fetching the front page downloads it and its 2 linked pages (Alg. 12): 3 download times; a leaf: 1;
    an invalid id: 1. One forager acts per step, the others' actions are ignored; the slice passes the turn."""
    env = ForagerFleetEnv(_hand_web(), clock="download", download_hours=DH, slice_hours=3.5 * DH, start_urls=[0])
    obs, _ = env.reset(seed=0)
    assert env.acting_agents == ["forager_0"] and env.time == 0.0
    # forager_1's action (an invalid id for it) is ignored: not its turn
    obs, rew, _, _, info = env.step({"forager_0": 0, "forager_1": 2})
    assert info["forager_0"]["acted"] and not info["forager_1"]["acted"] and info["forager_1"]["fetched_page"] == -1
    assert info["forager_0"]["downloaded"] == 3 and env.time == pytest.approx(3 * DH)
    assert rew == {"forager_0": 100.0, "forager_1": 0.0}
    assert env.acting_agents == ["forager_0"]  # 3 DH < the 3.5 DH slice
    obs, rew, _, _, info = env.step({"forager_0": 2, "forager_1": 0})  # a frontier leaf: one download
    assert info["forager_0"]["downloaded"] == 1 and env.time == pytest.approx(4 * DH)
    assert env.acting_agents == ["forager_1"]  # the slice is over (the step in progress was finished)
    obs, rew, _, _, info = env.step({"forager_0": 0, "forager_1": 1})  # page 1 is not a start URL: invalid
    assert info["forager_1"]["invalid_action"] and rew["forager_1"] == -1.0 and env.time == pytest.approx(5 * DH)
    lg = env.run_log()
    assert lg["time"].tolist() == pytest.approx([0.0, 3 * DH, 4 * DH])
    assert lg["downloaded"].tolist() == [3, 1, 0] and lg["invalid"].tolist() == [0, 0, 1]
    # the clock reaches the horizon: every agent is truncated
    env2 = ForagerFleetEnv(_hand_web(), clock="download", download_hours=1.5, slice_hours=1.0, start_urls=[0])
    obs, _ = env2.reset(seed=0)
    n = 0
    while env2.agents:
        a = env2.acting_agents[0]
        obs, _, term, trunc, _ = env2.step({b: int(np.flatnonzero(obs[b]["action_mask"])[0]) for b in env2.agents})
        n += 1
    # forager_0 fetches page 0 (3 pages: 4.5 h), forager_1 page 0 (9 h), forager_0 page 1 (10.5 h >= horizon 10)
    assert n == 3 and env2.time == pytest.approx(10.5) and a == "forager_0"
    assert all(trunc.values()) and not any(term.values())


def test_download_clock_ra_rewards_the_earliest_submitter_in_time():
    """forager_0 acts first (first slice, first name) but on a stale leaf; forager_1 sends the new page 1 at
    t = 1 download; forager_0 sends it later in simulated time and gets PENALTY, whatever the name order."""
    env = ForagerFleetEnv(_hand_web(), clock="download", download_hours=DH, slice_hours=0.5 * DH,
                          start_urls=[0, 1, 2])
    env.reset(seed=0)
    _, rew, _, _, info = env.step({"forager_0": 2, "forager_1": 1})  # forager_1's 1 is ignored: not its turn
    assert rew == {"forager_0": 0.0, "forager_1": 0.0} and info["forager_0"]["sent"] == 0
    assert env.acting_agents == ["forager_1"]
    _, rew, _, _, info = env.step({"forager_0": 1, "forager_1": 1})
    assert rew == {"forager_0": 0.0, "forager_1": 100.0} and info["forager_1"]["relevant"] == 1
    _, rew, _, _, info = env.step({"forager_0": 1, "forager_1": 0})
    assert rew == {"forager_0": -1.0, "forager_1": 0.0} and info["forager_0"]["sent"] == 1
    found = env.found_documents()
    assert found["page"].tolist() == [1] and found["forager"].tolist() == [1]
    assert found["time"].tolist() == pytest.approx([DH])
    # the same steps under the per-step clock: both send page 1 in one step, and the RA's random order decides
    winners = set()
    for seed in range(12):
        e = ForagerFleetEnv(_hand_web(), step_hours=0.1, start_urls=[0, 1, 2])
        e.reset(seed=seed)
        e.step({"forager_0": 2, "forager_1": 2})
        _, rew, _, _, _ = e.step({"forager_0": 1, "forager_1": 1})
        winners.add(max(rew, key=rew.get))
    assert winners == {"forager_0", "forager_1"}


def _download_trace(web, kind, seed):
    env = ForagerFleetEnv(web, clock="download", download_hours=0.01, slice_hours=0.05, max_score=110.0)
    steps = []
    run = run_fleet(env, kind, seed,
                    on_step=lambda t, r, i: steps.append((dict(r), {a: dict(v) for a, v in i.items()})))
    weights = {a: p.weights.copy() for a, p in run.policies.items()}
    return steps, env.run_log(), env.found_documents(), weights, (run.births, run.deaths), env.time


@pytest.mark.parametrize("kind", ["wl", "rl"])
def test_download_clock_fleet_is_deterministic_under_a_seed(web, kind):
    t1, t2 = _download_trace(web, kind, 3), _download_trace(web, kind, 3)
    assert t1[4][0] > 0 and t1[5] >= web.horizon - 1e-9  # a whole run, with births
    assert _same(t1[:3], t2[:3]) and t1[4:] == t2[4:]
    assert all(t1[3][a].tobytes() == t2[3][a].tobytes() for a in t1[3])
    # the clock is the sum of the download costs (invalid actions cost one download)
    lg = t1[1]
    assert lg["time"][-1] + 0.01 * max(1, lg["downloaded"][-1]) == pytest.approx(t1[5])
    assert np.all(np.diff(lg["time"]) == pytest.approx(0.01 * np.maximum(1, lg["downloaded"][:-1])))
    t3 = _download_trace(web, kind, 4)
    assert not _same(t1[0], t3[0])


def test_bad_clock_arguments(web):
    with pytest.raises(ValueError, match="clock"):
        ForagerFleetEnv(web, clock="wall")
    with pytest.raises(ValueError, match="download_hours"):
        ForagerFleetEnv(web, clock="download", download_hours=0.0)
    with pytest.raises(ValueError, match="slice_hours"):
        ForagerFleetEnv(web, clock="download", slice_hours=-1.0)
