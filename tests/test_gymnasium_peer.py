"""Gymnasium's own tests, adapted to every registered ``WikiCrawl`` id (and, where the reducer changes what runs,
every registered reducer): what a Gymnasium user does with an env must work on ours.

Adapted from Gymnasium's test-suite (github.com/Farama-Foundation/Gymnasium, ``tests/``), test by test:

* ``envs/test_envs.py`` — ``test_all_env_api`` (``check_env`` on ``spec.make().unwrapped``, no unexpected
  warning), ``test_all_env_passive_env_checker``, ``test_env_determinism_rollout``, ``test_pickle_env``;
* ``envs/registration/test_make.py`` — ``test_no_arguments``, ``test_max_episode_steps`` (the registered
  limit, ``max_episode_steps=N``, ``-1``), ``test_disable_env_checker``;
* ``envs/registration/test_env_spec.py`` — ``test_full_integration`` (TimeAwareObservation → NormalizeReward,
  spec → JSON → ``gym.make``), ``test_env_spec_to_from_json``, ``test_pickling_env_stack`` (FlattenObservation
  → TimeAwareObservation → NormalizeReward pickled; upstream uses ``dill``, here ``cloudpickle``, which
  Gymnasium's async vector env already uses);
* ``envs/registration/test_make_vec.py`` — ``test_make_vec_env_id``, ``test_make_vec_num_envs`` (every
  vectorization mode), ``test_make_vec_vectorization_mode``, ``test_make_vec_render_mode``,
  ``test_make_vec_wrappers``, ``test_make_vec_with_spec``;
* ``envs/test_env_implementation.py`` — ``test_cartpole_vector_equiv`` (the single env and the vector entry
  point, step for step through an autoreset);
* ``vector/test_vector_env.py`` — ``test_vector_env_equal`` (sync = async); ``vector/test_autoreset_mode.py``
  — next-step, same-step and disabled autoreset over our sub-envs;
* ``wrappers/test_time_limit.py``, ``wrappers/test_time_aware_observation.py`` (default, normalized,
  unflattened), ``wrappers/test_flatten_observation.py``, ``wrappers/test_normalize_reward.py``,
  ``wrappers/test_record_episode_statistics.py``, ``wrappers/test_order_enforcing.py``,
  ``wrappers/test_autoreset.py``, ``wrappers/vector/test_record_episode_statistics.py``,
  ``wrappers/vector/test_normalize_reward.py``.

What differs from upstream, by design (``gym_crawl/envs/budget.py``): ``WikiCrawl-v0``…``-v2`` observe the
fraction of the budget, so their spec registers a wrapper that hands the ``TimeLimit``'s limit to the env, and
Gymnasium's ``make_vec`` refuses ``vectorization_mode="vector_entry_point"`` for a spec with an additional
wrapper: for them that mode is asserted to fail loudly, naming :func:`gym_crawl.envs.make_vector_env`, whose
batched env then passes the same checks. ``WikiCrawl-v3`` passes every upstream test as CartPole does. The
corpus is a 200-page synthetic web saved to disk (so async workers load it and specs round-trip through JSON);
budgets are a dozen steps.
"""
from __future__ import annotations

import json
import math
import pickle
import warnings

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from conftest import make_tiny_corpus
from gymnasium.envs.registration import EnvSpec
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import (
    Autoreset,
    FlattenObservation,
    NormalizeReward,
    OrderEnforcing,
    PassiveEnvChecker,
    RecordEpisodeStatistics,
    TimeAwareObservation,
    TimeLimit,
)

from gym_crawl.envs import WikiCrawlEnv, WikiCrawlVectorEnv, make_vector_env
from gym_crawl.reducers import REDUCERS
from gym_crawl.wrappers.factory import env_ids

IDS = env_ids()
RED = REDUCERS.names()
ID_RED = [(i, r) for i in IDS for r in RED]
LIMIT = 12  # the max_episode_steps of most tests: rollouts cross a truncation and a reset
# Building an older id by name is Gymnasium's "out of date" warning, on purpose here.
pytestmark = pytest.mark.filterwarnings("ignore:.*WikiCrawl-v[0-9] is out of date")


def _batched_in_make_vec(env_id: str) -> bool:
    return gym.spec(env_id).vector_entry_point is not None


@pytest.fixture(scope="module")
def corpus_path(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("peer") / "tiny-200"
    make_tiny_corpus(n=200).save(path)
    return str(path)


@pytest.fixture(scope="module")
def n_pages(corpus_path) -> int:
    from gym_crawl.corpus import load_corpus

    return load_corpus(corpus_path).n_pages


def _kw(corpus_path: str, reducer: str = "topk", **kw):
    return {"corpus": corpus_path, "reducer": reducer, "max_candidates": 8, **kw}


def _make(env_id: str, corpus_path: str, reducer: str = "topk", **kw) -> gym.Env:
    """``gym.make`` of the registered spec (as upstream's ``spec.make()``)."""
    return gym.make(gym.spec(env_id), **_kw(corpus_path, reducer, **kw))


def _batched(env_id: str, corpus_path: str, num_envs: int, **kw) -> gym.vector.VectorEnv:
    """The batched vector env: make_vec's vector entry point (v3), else the refusal and make_vector_env."""
    if _batched_in_make_vec(env_id):
        return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kw)
    with pytest.raises(gym.error.Error, match=r"additional_wrappers.*gym_crawl\.envs\.make_vector_env"):
        gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kw)
    return make_vector_env(env_id, num_envs=num_envs, **kw)


def _step_equal(a, b) -> None:
    for x, y in zip(a, b):
        assert data_equivalence(x, y, exact=True)


# =========================================================================== envs/test_envs.py
@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_all_env_api(corpus_path, env_id, reducer):
    """check_env on spec.make().unwrapped (render and close checks included) warns of nothing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = _make(env_id, corpus_path, reducer, max_episode_steps=LIMIT, render_mode="ansi").unwrapped
        check_env(env, skip_render_check=False)
        env.close()
    assert not [str(w.message) for w in caught]


@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_all_env_passive_env_checker(corpus_path, env_id, reducer):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = _make(env_id, corpus_path, reducer)
        assert _has_wrapper(env, OrderEnforcing) and _has_wrapper(env, PassiveEnvChecker)
        env.reset()
        env.step(env.action_space.sample())
        env.close()
    assert not [str(w.message) for w in caught]


@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_env_determinism_rollout(corpus_path, env_id, reducer, num_steps=50, seed=0):
    env_1 = _make(env_id, corpus_path, reducer, max_episode_steps=LIMIT, disable_env_checker=True)
    env_2 = _make(env_id, corpus_path, reducer, max_episode_steps=LIMIT, disable_env_checker=True)
    assert data_equivalence(env_1.reset(seed=seed), env_2.reset(seed=seed), exact=True)
    env_1.action_space.seed(seed)
    ends = 0
    for _ in range(num_steps):
        action = env_1.action_space.sample()  # masked slots included: an invalid step is a step
        s1, s2 = env_1.step(action), env_2.step(action)
        _step_equal(s1, s2)
        assert env_1.observation_space.contains(s1[0])
        if s1[2] or s1[3]:
            ends += 1
            env_1.reset(seed=seed)
            env_2.reset(seed=seed)
    assert ends >= 3


@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_pickle_env(corpus_path, env_id, reducer):
    env = _make(env_id, corpus_path, reducer, max_episode_steps=LIMIT)
    action = env.action_space.sample()
    env_reset = env.reset(seed=123)
    env_step = env.step(action)
    pickled_env = pickle.loads(pickle.dumps(env))
    assert data_equivalence(env_reset, pickled_env.reset(seed=123))
    assert data_equivalence(env_step, pickled_env.step(action))
    env.close()
    pickled_env.close()


# =========================================================================== envs/registration/test_make.py
@pytest.mark.parametrize("env_id", IDS)
def test_no_arguments(corpus_path, env_id):
    env_from_id = gym.make(env_id, corpus=corpus_path)
    assert env_from_id.spec is not None and env_from_id.spec.id == env_id
    assert isinstance(env_from_id.unwrapped, WikiCrawlEnv)
    env_from_spec = gym.make(gym.spec(env_id), corpus=corpus_path)
    assert env_from_spec.spec.id == env_id and isinstance(env_from_spec.unwrapped, WikiCrawlEnv)
    assert env_from_id.spec == env_from_spec.spec


@pytest.mark.parametrize("env_id", IDS)
def test_max_episode_steps(corpus_path, env_id):
    env_spec = gym.spec(env_id)
    assert env_spec.max_episode_steps is not None  # every id registers its limit
    for make_id in (env_id, env_spec):
        env = gym.make(make_id, corpus=corpus_path)
        assert env.get_wrapper_attr("_max_episode_steps") == env_spec.max_episode_steps
        assert env.spec.max_episode_steps == env_spec.max_episode_steps
        assert env_spec.max_episode_steps != 7
        env = gym.make(make_id, corpus=corpus_path, max_episode_steps=7)
        assert _has_wrapper(env, TimeLimit) and env.spec.max_episode_steps == 7
        env = gym.make(make_id, corpus=corpus_path, max_episode_steps=-1)
        assert env.spec.max_episode_steps is None and not _has_wrapper(env, TimeLimit)


@pytest.mark.parametrize("make_disabled,if_disabled", [(False, False), (True, True), (None, False)])
@pytest.mark.parametrize("env_id", IDS)
def test_disable_env_checker(corpus_path, env_id, make_disabled, if_disabled):
    env = gym.make(gym.spec(env_id), corpus=corpus_path, disable_env_checker=make_disabled)
    assert _has_wrapper(env, PassiveEnvChecker) is not if_disabled


def _has_wrapper(env: gym.Env, kind: type) -> bool:
    while isinstance(env, gym.Wrapper):
        if isinstance(env, kind):
            return True
        env = env.env
    return False


# =========================================================================== envs/registration/test_env_spec.py
@pytest.mark.parametrize("env_id", IDS)
def test_full_integration(corpus_path, env_id):
    env = gym.make(env_id, corpus=corpus_path, render_mode="ansi", max_episode_steps=LIMIT)
    env = TimeAwareObservation(env)
    env = NormalizeReward(env, gamma=0.8)
    env_spec = env.spec
    own = len(gym.spec(env_id).additional_wrappers)  # v0-v2: the wrapper that hands the limit to the env
    assert isinstance(env_spec, EnvSpec) and len(env_spec.additional_wrappers) == own + 2
    recreate_env_spec = EnvSpec.from_json(env_spec.to_json())
    assert recreate_env_spec == env_spec
    recreated_env = gym.make(recreate_env_spec)
    assert recreated_env.render_mode == "ansi" and recreated_env.gamma == 0.8
    assert isinstance(recreated_env.env, TimeAwareObservation) and isinstance(recreated_env.unwrapped, WikiCrawlEnv)
    assert recreated_env.spec.max_episode_steps == LIMIT
    assert data_equivalence(env.reset(seed=42), recreated_env.reset(seed=42))
    action = env.action_space.sample()
    assert data_equivalence(env.step(action), recreated_env.step(action))
    assert env_spec.pprint(disable_print=True) == recreate_env_spec.pprint(disable_print=True)


@pytest.mark.parametrize("which", ["registered", "unwrapped", "made", "wrapped"])
@pytest.mark.parametrize("env_id", IDS)
def test_env_spec_to_from_json(corpus_path, env_id, which):
    env_spec = {"registered": lambda: gym.spec(env_id),
                "unwrapped": lambda: gym.make(env_id, corpus=corpus_path).unwrapped.spec,
                "made": lambda: gym.make(env_id, corpus=corpus_path).spec,
                "wrapped": lambda: NormalizeReward(gym.make(env_id, corpus=corpus_path)).spec}[which]()
    assert EnvSpec.from_json(env_spec.to_json()) == env_spec
    json.loads(env_spec.to_json())


@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_pickling_env_stack(corpus_path, env_id, reducer):
    env = _make(env_id, corpus_path, reducer, render_mode="ansi", max_episode_steps=LIMIT)
    env = FlattenObservation(env)
    env = TimeAwareObservation(env)
    env = NormalizeReward(env, gamma=0.8)
    pickled_env = cloudpickle.loads(cloudpickle.dumps(env))
    assert data_equivalence(env.reset(seed=123), pickled_env.reset(seed=123))
    for _ in range(LIMIT):
        action = env.action_space.sample()
        step = env.step(action)
        assert data_equivalence(step, pickled_env.step(action))
        if step[2] or step[3]:
            break
    assert step[3] or step[2]
    # mid-episode too: the copy continues exactly where the original is
    env.reset(seed=5)
    env.step(0)
    copy = cloudpickle.loads(cloudpickle.dumps(env))
    assert data_equivalence(env.step(1), copy.step(1))
    env.close()
    pickled_env.close()


# =========================================================================== envs/registration/test_make_vec.py
@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_env_id(corpus_path, env_id):
    env = gym.make_vec(env_id, corpus=corpus_path)
    assert isinstance(env, WikiCrawlVectorEnv if _batched_in_make_vec(env_id) else SyncVectorEnv)
    assert env.num_envs == 1
    env.close()


@pytest.mark.parametrize("vectorization_mode", ["vector_entry_point", "async", "sync"])
@pytest.mark.parametrize("num_envs", [1, 3])
@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_num_envs(corpus_path, env_id, num_envs, vectorization_mode):
    if vectorization_mode == "async" and num_envs == 1:
        pytest.skip("async: one size is enough (a process per sub-env)")
    if vectorization_mode == "vector_entry_point":
        env = _batched(env_id, corpus_path, num_envs, corpus=corpus_path)
    else:
        env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=vectorization_mode, corpus=corpus_path)
    assert env.num_envs == num_envs
    obs, _ = env.reset(seed=0)
    assert obs in env.observation_space
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_vectorization_mode(corpus_path, env_id):
    spec = gym.spec(env_id)
    default = gym.make_vec(env_id, corpus=corpus_path)
    if spec.vector_entry_point is not None:
        assert isinstance(default, WikiCrawlVectorEnv)
        assert isinstance(gym.make_vec(env_id, vectorization_mode=gym.VectorizeMode.VECTOR_ENTRY_POINT,
                                       corpus=corpus_path), WikiCrawlVectorEnv)
    else:
        assert isinstance(default, SyncVectorEnv)
    assert isinstance(gym.make_vec(env_id, vectorization_mode=gym.VectorizeMode.SYNC, corpus=corpus_path),
                      SyncVectorEnv)
    with pytest.raises(ValueError, match="Invalid vectorization mode: 'invalid'"):
        gym.make_vec(env_id, vectorization_mode="invalid", corpus=corpus_path)


@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_render_mode(corpus_path, env_id):
    envs = _batched(env_id, corpus_path, 2, corpus=corpus_path)
    assert envs.render_mode is None
    with pytest.raises(ValueError, match="does not render.*render_mode='ansi'"):
        _batched(env_id, corpus_path, 2, corpus=corpus_path, render_mode="ansi")
    sync = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync", corpus=corpus_path, render_mode="ansi")
    sync.reset(seed=0)
    assert all(isinstance(r, str) and "topic=" in r for r in sync.render())


@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_wrappers(corpus_path, env_id):
    env = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync", corpus=corpus_path)
    sub_env = env.envs[0]
    assert sub_env.spec is not None and sub_env.spec.max_episode_steps is not None
    assert _has_wrapper(sub_env, TimeLimit)
    assert not any(_has_wrapper(e, TimeAwareObservation) for e in env.envs)
    env = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync", corpus=corpus_path,
                       wrappers=[lambda e: TimeAwareObservation(e)])
    assert all(_has_wrapper(e, TimeAwareObservation) for e in env.envs)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(np.zeros(2, np.int64))
    assert obs[:, -1].tolist() == [1.0, 1.0]  # the time step TimeAwareObservation appends


MAKE_VEC_KWARGS = [
    {}, {"num_envs": 3}, {"vectorization_mode": "sync"}, {"vectorization_mode": "vector_entry_point"},
    {"vectorization_mode": "sync", "vector_kwargs": {"copy": False}},
    {"vectorization_mode": "sync", "wrappers": (TimeAwareObservation,)},
    {"vectorization_mode": "sync", "max_episode_steps": 5}, {"vectorization_mode": "vector_entry_point",
                                                            "max_episode_steps": 5},
    {"reward": "binary"}, {"vectorization_mode": "sync", "reward": "binary"},
]


@pytest.mark.parametrize("kwargs", MAKE_VEC_KWARGS, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()) or "none")
@pytest.mark.parametrize("spec_or_id", ["id", "spec"])
@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_with_spec(corpus_path, env_id, spec_or_id, kwargs):
    target = env_id if spec_or_id == "id" else gym.spec(env_id)
    if kwargs.get("vectorization_mode") == "vector_entry_point" and not _batched_in_make_vec(env_id):
        with pytest.raises(gym.error.Error, match="gym_crawl.envs.make_vector_env"):
            gym.make_vec(target, corpus=corpus_path, **kwargs)
        return
    envs = gym.make_vec(target, corpus=corpus_path, **kwargs)
    assert envs.spec is not None
    recreated_envs = gym.make_vec(envs.spec)
    assert envs.spec == recreated_envs.spec
    assert envs.num_envs == recreated_envs.num_envs
    assert type(envs) is type(recreated_envs)
    assert envs.observation_space == recreated_envs.observation_space
    assert envs.single_observation_space == recreated_envs.single_observation_space
    assert envs.action_space == recreated_envs.action_space
    assert envs.single_action_space == recreated_envs.single_action_space
    assert envs.render_mode == recreated_envs.render_mode
    assert data_equivalence(envs.reset(seed=1), recreated_envs.reset(seed=1), exact=True)
    envs.close()
    recreated_envs.close()


# =========================================================================== envs/test_env_implementation.py
@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_vector_equiv(corpus_path, env_id, reducer, seed=7):
    """test_cartpole_vector_equiv: the single env and the batched vector env (one sub-env) step alike,
    through the end of an episode and the vector env's next-step autoreset."""
    kw = _kw(corpus_path, reducer, max_episode_steps=LIMIT)
    env = gym.make(env_id, **kw)
    envs = _batched(env_id, corpus_path, 1, **kw)
    assert env.action_space == envs.single_action_space
    assert env.observation_space == envs.single_observation_space
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP

    def same(single, vec):  # a sub-env's value, the same number (info: a Python scalar vs its array element)
        assert set(vec) == set(single) | {"_" + k for k in single} or set(vec) == set(single)
        for key in single:
            assert np.array_equal(np.asarray(single[key]), np.asarray(vec[key][0])), key

    obs, info = env.reset(seed=seed)
    vec_obs, vec_info = envs.reset(seed=seed)
    assert obs in env.observation_space and vec_obs in envs.observation_space
    same(obs, vec_obs)
    same(info, vec_info)
    env.action_space.seed(seed)
    for _ in range(LIMIT + 1):
        action = env.action_space.sample()
        assert np.array([action]) in envs.action_space
        obs, reward, term, trunc, info = env.step(action)
        vec_obs, vec_reward, vec_term, vec_trunc, vec_info = envs.step(np.array([action]))
        same(obs, vec_obs)
        same(info, vec_info)
        assert (reward, term, trunc) == (vec_reward[0], vec_term[0], vec_trunc[0])
        if term or trunc:
            break
    assert term or trunc
    obs, info = env.reset()
    vec_obs, vec_reward, vec_term, vec_trunc, vec_info = envs.step(envs.action_space.sample())
    same(obs, vec_obs)
    same(info, vec_info)
    assert vec_reward[0] == 0 and not vec_term[0] and not vec_trunc[0]
    env.close()
    envs.close()


@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_batched_equals_sync_vector_env(corpus_path, env_id, reducer, steps=30):
    """The batched env (compiled or Python path) equals SyncVectorEnv over gym.make envs, bit for bit."""
    kw = _kw(corpus_path, reducer, max_episode_steps=LIMIT)
    fast = _batched(env_id, corpus_path, 3, **kw)
    ref = gym.make_vec(env_id, num_envs=3, vectorization_mode="sync", **kw)
    assert data_equivalence(fast.reset(seed=11), ref.reset(seed=11), exact=True)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(steps):
        acts = rng.integers(0, 8, 3)
        a, b = fast.step(acts), ref.step(acts)
        assert data_equivalence(a, b, exact=True)
        ended += int(np.sum(a[2] | a[3]))
    assert ended >= 3


# =========================================================================== vector/
@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_equal(corpus_path, env_id, autoreset_mode, num_steps=30):
    """Async and sync vector envs over our single envs agree."""
    fns = [lambda: gym.make(env_id, **_kw(corpus_path, max_episode_steps=LIMIT)) for _ in range(2)]
    async_env = AsyncVectorEnv(fns, shared_memory=True, autoreset_mode=autoreset_mode)
    sync_env = SyncVectorEnv(fns, autoreset_mode=autoreset_mode)
    try:
        assert async_env.observation_space == sync_env.observation_space
        assert async_env.single_action_space == sync_env.single_action_space
        assert data_equivalence(async_env.reset(seed=0), sync_env.reset(seed=0))
        async_env.action_space.seed(0)
        for _ in range(num_steps):
            actions = async_env.action_space.sample()
            assert data_equivalence(async_env.step(actions), sync_env.step(actions))
    finally:
        async_env.close()
        sync_env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_autoreset_modes(corpus_path, env_id, limit=3):
    """Next-step, same-step and disabled autoreset over our sub-envs, as upstream's count env."""
    fns = [lambda: gym.make(env_id, **_kw(corpus_path, max_episode_steps=limit)) for _ in range(2)]
    zeros = np.zeros(2, np.int64)
    nxt = SyncVectorEnv(fns, autoreset_mode=AutoresetMode.NEXT_STEP)
    first, _ = nxt.reset(seed=0)
    for t in range(1, limit + 1):
        _, _, term, trunc, info = nxt.step(zeros)
        assert info["steps"].tolist() == [t, t] and trunc.tolist() == [t == limit] * 2
    obs, rew, term, trunc, info = nxt.step(zeros)  # the reset step
    assert data_equivalence(obs["mask"], first["mask"]) and rew.tolist() == [0, 0] and info["steps"].tolist() == [0, 0]
    assert not (term | trunc).any()

    same = SyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)
    same.reset(seed=0)
    for _ in range(limit - 1):
        same.step(zeros)
    obs, rew, term, trunc, info = same.step(zeros)
    assert trunc.all() and info["_final_obs"].all() and info["steps"].tolist() == [0, 0]
    assert [fi for fi in info["final_info"]["steps"]] == [limit, limit]

    off = SyncVectorEnv(fns, autoreset_mode=AutoresetMode.DISABLED)
    off.reset(seed=0)
    for _ in range(limit):
        _, _, _, trunc, _ = off.step(zeros)
    assert trunc.all()
    _, info = off.reset(options={"reset_mask": np.array([True, False])})
    assert info["_steps"].tolist() == [True, False] and info["steps"][0] == 0  # only the first was reset
    _, info = off.reset(options={"reset_mask": np.array([False, True])})
    _, _, _, trunc, info = off.step(zeros)
    assert info["steps"].tolist() == [1, 1] and not trunc.any()


# =========================================================================== wrappers/
@pytest.mark.parametrize("double_wrap", [False, True])
@pytest.mark.parametrize("env_id", IDS)
def test_time_limit_wrapper(corpus_path, env_id, double_wrap):
    env = gym.make(env_id, **_kw(corpus_path, max_episode_steps=LIMIT))
    assert TimeLimit(env, max_episode_steps=10).spec.max_episode_steps == 10
    if double_wrap:
        env = TimeLimit(env, LIMIT)
    obs, info = env.reset()
    assert env.observation_space.contains(obs) and isinstance(info, dict)
    n_steps, terminated, truncated = 0, False, False
    while not (terminated or truncated):
        n_steps += 1
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
    assert n_steps == LIMIT and truncated


@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_time_aware_observation(corpus_path, n_pages, env_id, reducer):
    """test_default / normalize_time / flatten=False, and the env's own time feature agrees with the limit:
    v0-v2's ``budget_used`` is TimeAwareObservation's fraction; v3's ``log_steps`` does not depend on it."""
    env = _make(env_id, corpus_path, reducer, max_episode_steps=LIMIT, disable_env_checker=True)
    wrapped_env = TimeAwareObservation(env)
    flat = gym.spaces.flatdim(env.observation_space)
    assert wrapped_env.observation_space.shape == (flat + 1,)
    wrapped_obs, _ = wrapped_env.reset()
    assert wrapped_env.timesteps == 0 and wrapped_obs[-1] == 0.0 and wrapped_obs in wrapped_env.observation_space
    for t in (1, 2):
        wrapped_obs, *_ = wrapped_env.step(env.action_space.sample())
        assert wrapped_env.timesteps == t and wrapped_obs[-1] == t
    wrapped_obs, _ = wrapped_env.reset()
    assert wrapped_env.timesteps == 0 and wrapped_obs[-1] == 0.0

    normalized = TimeAwareObservation(_make(env_id, corpus_path, reducer, max_episode_steps=LIMIT), flatten=False,
                                      normalize_time=True)
    obs, _ = normalized.reset(seed=0)
    assert isinstance(obs, dict) and obs["time"] == 0.0 and obs in normalized.observation_space
    state_names = normalized.unwrapped.state_names
    done, t = False, 0
    while not done:
        obs, _, term, trunc, _ = normalized.step(0)
        t += 1
        assert obs in normalized.observation_space and obs["time"][0] == pytest.approx(t / LIMIT)
        if state_names[0] == "budget_used":
            assert obs["state"][0] == pytest.approx(float(obs["time"][0]), rel=1e-6)
        else:
            assert state_names[0] == "log_steps"
            assert obs["state"][0] == pytest.approx(math.log1p(t) / math.log1p(n_pages), rel=1e-6)
        done = term or trunc
    assert trunc and t == LIMIT and obs["time"][0] == pytest.approx(1.0)


@pytest.mark.parametrize("env_id", IDS)
def test_time_aware_observation_needs_a_limit(corpus_path, env_id):
    """Upstream's test_no_spec: without a TimeLimit nor a spec limit it refuses; every id registers one."""
    with pytest.raises(ValueError, match="must be wrapped by a TimeLimit wrapper"):
        TimeAwareObservation(WikiCrawlEnv(**_kw(corpus_path)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = TimeAwareObservation(gym.make(gym.spec(env_id), corpus=corpus_path))
    assert env.max_timesteps == gym.spec(env_id).max_episode_steps and not caught


@pytest.mark.parametrize("env_id", IDS)
def test_flatten_observation(corpus_path, env_id):
    env = _make(env_id, corpus_path, max_episode_steps=LIMIT)
    flat = FlattenObservation(env)
    assert isinstance(flat.observation_space, gym.spaces.Box)
    obs, _ = env.reset(seed=3)
    fobs, _ = flat.reset(seed=3)
    assert fobs in flat.observation_space
    back = gym.spaces.unflatten(env.observation_space, fobs)
    assert all(np.array_equal(back[k], obs[k]) for k in obs)


@pytest.mark.parametrize("env_id", IDS)
def test_normalize_reward(corpus_path, env_id):
    env = NormalizeReward(_make(env_id, corpus_path, max_episode_steps=LIMIT))
    assert env.update_running_mean
    env.reset(seed=0)
    var0, mean0 = env.return_rms.var, env.return_rms.mean
    _, reward, *_ = env.step(0)
    assert np.ndim(reward) == 0 and (env.return_rms.var, env.return_rms.mean) != (var0, mean0)
    env.update_running_mean = False
    var1 = env.return_rms.var
    env.step(1)
    assert env.return_rms.var == var1


@pytest.mark.parametrize("deque_size", [2, 5])
@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_record_episode_statistics(corpus_path, env_id, reducer, deque_size):
    env = RecordEpisodeStatistics(_make(env_id, corpus_path, reducer, max_episode_steps=LIMIT,
                                        disable_env_checker=True), deque_size)
    for _ in range(5):
        env.reset()
        assert env.episode_returns == 0.0 and env.episode_lengths == 0
        total = 0.0
        for _ in range(env.spec.max_episode_steps):
            _, r, terminated, truncated, info = env.step(env.action_space.sample())
            total += float(r)
            if terminated or truncated:
                assert all(k in info["episode"] for k in ("r", "l", "t"))
                assert info["episode"]["l"] == info["steps"]
                assert info["episode"]["r"] == pytest.approx(total)
                break
    assert len(env.return_queue) == deque_size and len(env.length_queue) == deque_size


@pytest.mark.parametrize("env_id", IDS)
def test_order_enforcing(corpus_path, env_id):
    env = gym.make(env_id, **_kw(corpus_path, render_mode="ansi"))
    assert _has_wrapper(env, OrderEnforcing) and env.get_wrapper_attr("has_reset") is False
    with pytest.raises(ResetNeeded):
        env.step(0)
    with pytest.raises(ResetNeeded):
        env.render()
    env.reset()
    env.step(0)
    assert isinstance(env.render(), str)
    env.close()
    env.close()  # closing twice is fine


@pytest.mark.parametrize("env_id", IDS)
def test_autoreset_wrapper(corpus_path, env_id, limit=3):
    env = Autoreset(gym.make(env_id, **_kw(corpus_path, max_episode_steps=limit)))
    first, info = env.reset(seed=0)
    for t in range(1, limit + 1):
        _, _, term, trunc, info = env.step(0)
        assert info["steps"] == t and (term or trunc) == (t == limit)
    obs, reward, term, trunc, info = env.step(0)
    assert info["steps"] == 0 and reward == 0 and not (term or trunc)
    assert np.array_equal(obs["mask"], first["mask"])


@pytest.mark.parametrize("num_envs", [1, 3])
@pytest.mark.parametrize("env_id", IDS)
def test_vector_record_episode_statistics(corpus_path, env_id, num_envs, num_steps=40):
    kw = _kw(corpus_path, max_episode_steps=LIMIT)
    wrapper_vector_env = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", **kw))
    vector_wrapper_env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync",
                                      wrappers=(RecordEpisodeStatistics,), **kw)
    batched = gym.wrappers.vector.RecordEpisodeStatistics(_batched(env_id, corpus_path, num_envs, **kw))
    assert wrapper_vector_env.single_observation_space == vector_wrapper_env.single_observation_space
    a = wrapper_vector_env.reset(seed=123)
    assert data_equivalence(a, vector_wrapper_env.reset(seed=123))
    assert data_equivalence(a, batched.reset(seed=123), exact=True)
    episodes = 0
    for _ in range(num_steps):
        action = wrapper_vector_env.action_space.sample()
        w, v, b = wrapper_vector_env.step(action), vector_wrapper_env.step(action), batched.step(action)
        for x, y, z in zip(w[:4], v[:4], b[:4]):
            assert data_equivalence(x, y) and data_equivalence(x, z, exact=True)
        if "episode" in w[4]:
            episodes += int(w[4]["_episode"].sum())
            for info in (v[4], b[4]):
                np.testing.assert_array_equal(w[4]["episode"]["l"], info["episode"]["l"])
                np.testing.assert_array_equal(w[4]["episode"]["r"], info["episode"]["r"])
    assert episodes >= num_envs


@pytest.mark.parametrize("env_id", IDS)
def test_vector_normalize_reward(corpus_path, env_id):
    envs = gym.wrappers.vector.NormalizeReward(_batched(env_id, corpus_path, 2, **_kw(corpus_path,
                                                                                     max_episode_steps=LIMIT)))
    envs.reset(seed=0)
    _, rewards, *_ = envs.step(np.zeros(2, np.int64))
    assert rewards.shape == (2,) and np.isfinite(rewards).all()


# =========================================================================== seeding (envs/test_envs.py, utils)
@pytest.mark.parametrize("env_id,reducer", ID_RED)
def test_seeding(corpus_path, env_id, reducer):
    env = _make(env_id, corpus_path, reducer, max_episode_steps=LIMIT)
    a = env.reset(seed=9)
    s1 = [env.step(i % 8) for i in range(4)]
    b = env.reset(seed=9)
    s2 = [env.step(i % 8) for i in range(4)]
    assert data_equivalence(a, b, exact=True) and data_equivalence(s1, s2, exact=True)
    rng_after_seed = env.unwrapped.np_random.bit_generator.state
    env.reset()  # unseeded: continues the generator, does not reseed
    assert env.unwrapped.np_random_seed == 9 and env.unwrapped.np_random.bit_generator.state is not rng_after_seed
