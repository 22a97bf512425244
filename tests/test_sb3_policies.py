"""Candidate-scoring SB3 policies: permutation equivariance, K transfer, masking, flat vs Dict input."""
from __future__ import annotations

import numpy as np
import pytest
import torch as th
from gymnasium import spaces
from stable_baselines3.common.policies import MultiInputActorCriticPolicy

from gym_crawl.agents.sb3.policies import (
    MASKED_LOGIT,
    CandidateScoringDQNPolicy,
    CandidateScoringPolicy,
    MaskableCandidateScoringPolicy,
    split_flat,
    transfer_policy,
)

D, S = 5, 6


def obs_space(K: int) -> spaces.Dict:
    return spaces.Dict({"candidates": spaces.Box(-1.0, 1.0, (K, D), np.float32), "mask": spaces.MultiBinary(K),
                        "state": spaces.Box(-1.0, 1.0, (S,), np.float32)})


def make(cls, K: int, **kw):
    th.manual_seed(0)
    return cls(obs_space(K), spaces.Discrete(K), lambda _: 1e-3,
               scorer_kwargs={"hidden": [16, 16], "head": [8], **kw})


def batch(K: int, B: int = 4, seed: int = 0, n_valid: list[int] | None = None) -> dict[str, th.Tensor]:
    rng = np.random.default_rng(seed)
    cand = rng.uniform(-1, 1, (B, K, D)).astype(np.float32)
    mask = np.zeros((B, K), np.float32)
    for b, n in enumerate(n_valid or [K] * B):
        mask[b, rng.choice(K, n, replace=False)] = 1
    cand *= mask[..., None]  # masked rows are zero rows, as the env gives them
    return {"candidates": th.as_tensor(cand), "mask": th.as_tensor(mask),
            "state": th.as_tensor(rng.uniform(-1, 1, (B, S)).astype(np.float32))}


def logits(policy, obs):
    with th.no_grad():
        return policy.get_distribution(obs).distribution.logits


def qvalues(policy, obs):
    with th.no_grad():
        return policy.q_net(obs)


def values(policy, obs):
    with th.no_grad():
        return policy.predict_values(obs)


def permute(obs, perm):
    return {"candidates": obs["candidates"][:, perm], "mask": obs["mask"][:, perm], "state": obs["state"]}


@pytest.mark.parametrize("cls,out", [(CandidateScoringPolicy, logits), (MaskableCandidateScoringPolicy, logits),
                                     (CandidateScoringDQNPolicy, qvalues)])
def test_permutation_equivariant(cls, out):
    K = 8
    pol = make(cls, K)
    obs = batch(K, n_valid=[8, 5, 3, 1])
    perm = np.random.default_rng(1).permutation(K)
    a, b = out(pol, obs), out(pol, permute(obs, perm))
    assert not th.allclose(a[0], a[0][perm])  # the check has teeth: outputs do depend on the row
    assert th.allclose(b, a[:, perm], atol=1e-5)
    if cls is not CandidateScoringDQNPolicy:
        assert th.allclose(values(pol, obs), values(pol, permute(obs, perm)), atol=1e-5)  # V is invariant


def test_stock_multi_input_policy_is_not_equivariant():
    """Control: the stock flattening policy maps slots, not rows (so the equivariance test is meaningful)."""
    K = 8
    th.manual_seed(0)
    pol = MultiInputActorCriticPolicy(obs_space(K), spaces.Discrete(K), lambda _: 1e-3, ortho_init=False)
    obs = batch(K)
    perm = np.random.default_rng(1).permutation(K)
    assert not th.allclose(logits(pol, permute(obs, perm)), logits(pol, obs)[:, perm], atol=1e-4)


@pytest.mark.parametrize("cls,out", [(CandidateScoringPolicy, logits), (MaskableCandidateScoringPolicy, logits),
                                     (CandidateScoringDQNPolicy, qvalues)])
def test_same_weights_run_with_other_k(cls, out):
    small = make(cls, 8)
    big = transfer_policy(small, obs_space(64), spaces.Discrete(64))
    assert big.action_space.n == 64
    o8 = batch(8, n_valid=[8, 6, 4, 2])
    o64 = {"candidates": th.zeros(4, 64, D), "mask": th.zeros(4, 64), "state": o8["state"]}
    o64["candidates"][:, :8] = o8["candidates"]
    o64["mask"][:, :8] = o8["mask"]
    a, b = out(small, o8), out(big, o64)
    valid = o8["mask"] > 0
    assert th.allclose(b[:, :8][valid], a[valid], atol=1e-5)  # same rows, same scores, whatever K
    act, _ = big.predict({k: v[0].numpy() for k, v in o64.items()}, deterministic=True)
    assert o64["mask"][0, int(act)] == 1


def test_transfer_refuses_k_specific_policies():
    th.manual_seed(0)
    pol = MultiInputActorCriticPolicy(obs_space(8), spaces.Discrete(8), lambda _: 1e-3)
    with pytest.raises(ValueError, match="depend on the spaces"):
        transfer_policy(pol, obs_space(16), spaces.Discrete(16))


def test_masked_rows_never_chosen():
    K = 8
    obs = batch(K, B=64, seed=3, n_valid=list(np.random.default_rng(0).integers(1, K + 1, 64)))
    mask = obs["mask"] > 0
    for cls in (CandidateScoringPolicy, MaskableCandidateScoringPolicy):
        lg = logits(make(cls, K), obs)
        assert th.all(lg[~mask] <= MASKED_LOGIT + 1) and th.all(lg[mask] > -1e3)
    q = qvalues(make(CandidateScoringDQNPolicy, K), obs)
    big = th.where(mask, q, th.full_like(q, float("inf"))).amin(dim=1, keepdim=True)
    assert th.all(q[~mask] < big.expand_as(q)[~mask])
    for cls in (CandidateScoringPolicy, CandidateScoringDQNPolicy):
        pol = make(cls, K)
        for b in range(64):
            for det in (True, False):
                a, _ = pol.predict({k: v[b].numpy() for k, v in obs.items()}, deterministic=det)
                assert mask[b, int(a)]


def test_dqn_masked_q_carries_no_gradient():
    pol = make(CandidateScoringDQNPolicy, 8)
    obs = batch(8, B=2, n_valid=[3, 5])
    q = pol.q_net(obs)
    masked = ~(obs["mask"] > 0)
    q[masked].sum().backward()
    assert all(p.grad is None or th.count_nonzero(p.grad) == 0 for p in pol.q_net.parameters())


def test_flat_box_input_equals_dict_input():
    K = 8
    d_pol = make(MaskableCandidateScoringPolicy, K)
    flat_space = spaces.Box(-1.0, 1.0, (K * D + K + S,), np.float32)
    f_pol = MaskableCandidateScoringPolicy(flat_space, spaces.Discrete(K), lambda _: 1e-3,
                                           scorer_kwargs={"hidden": [16, 16], "head": [8]},
                                           features_extractor_kwargs={"candidate_dim": D})
    f_pol.load_state_dict(d_pol.state_dict())
    obs = batch(K, n_valid=[8, 4, 2, 1])
    flat = th.cat([obs["candidates"].reshape(4, -1), obs["mask"], obs["state"]], dim=1)
    assert th.allclose(logits(f_pol, flat), logits(d_pol, obs), atol=1e-6)
    cand, mask, state = split_flat(flat, D, S)
    assert th.equal(cand, obs["candidates"]) and th.equal(mask, obs["mask"] > 0) and th.equal(state, obs["state"])
    with pytest.raises(ValueError, match="candidate_dim"):
        MaskableCandidateScoringPolicy(flat_space, spaces.Discrete(K), lambda _: 1e-3)


def test_parameters_do_not_depend_on_k():
    for cls in (CandidateScoringPolicy, MaskableCandidateScoringPolicy, CandidateScoringDQNPolicy):
        a = {k: tuple(v.shape) for k, v in make(cls, 4).state_dict().items()}
        b = {k: tuple(v.shape) for k, v in make(cls, 100).state_dict().items()}
        assert a == b


def raw_scores(policy, obs):
    """Per-row scores before any softmax: the actor's logits, or DQN's Q-values."""
    with th.no_grad():
        if isinstance(policy, CandidateScoringDQNPolicy):
            return policy.q_net(obs)
        return policy.mlp_extractor.forward_actor(policy.extract_features(obs, policy.features_extractor))


@pytest.mark.parametrize("cls", [CandidateScoringPolicy, MaskableCandidateScoringPolicy, CandidateScoringDQNPolicy])
def test_best_first_prior_starts_as_best_first_and_learns_a_residual(cls):
    """With ``prior_column`` the untrained scores are ``β · x[column]`` (so the greedy pick is the row with the
    highest link score, best-first's); one gradient step on the residual moves them away from it."""
    K, col = 8, 2
    pol = make(cls, K, prior_column=col, prior_scale=5.0)
    obs = batch(K, B=16, seed=4, n_valid=list(np.random.default_rng(2).integers(1, K + 1, 16)))
    mask = obs["mask"] > 0
    scores = raw_scores(pol, obs)
    assert th.allclose(scores[mask], 5.0 * obs["candidates"][:, :, col][mask], atol=1e-5)
    link = obs["candidates"][:, :, col].masked_fill(~mask, -float("inf"))
    for b in range(16):
        a, _ = pol.predict({k: v[b].numpy() for k, v in obs.items()}, deterministic=True)
        assert int(a) == int(th.argmax(link[b]))
    perm = np.random.default_rng(1).permutation(K)
    assert th.allclose(raw_scores(pol, permute(obs, perm)), scores[:, perm], atol=1e-5)
    if cls is CandidateScoringDQNPolicy:
        scorer, fe = pol.q_net.q_net.scorer, pol.q_net.features_extractor
    else:
        scorer, fe = pol.mlp_extractor.actor, pol.features_extractor
    opt = th.optim.SGD(scorer.parameters(), lr=0.1)
    s, _ = scorer.scores(fe(obs))
    (s[:, 0] - s[:, 1]).sum().backward()
    opt.step()
    assert not th.allclose(raw_scores(pol, obs)[mask], scores[mask], atol=1e-4)


def test_prior_column_and_scale_are_checked():
    with pytest.raises(ValueError, match="prior_column"):
        make(MaskableCandidateScoringPolicy, 4, prior_column=D)
    with pytest.raises(ValueError, match="prior_scale"):
        make(MaskableCandidateScoringPolicy, 4, prior_column=0, prior_scale=0.0)
    from gym_crawl.agents.sb3.policies import link_score_column
    from gym_crawl.features import get_feature_set

    names = get_feature_set("transferable").names
    assert names[link_score_column(names)] == "a.link_rel"
    with pytest.raises(ValueError, match="a.link_rel"):
        link_score_column(get_feature_set("tres").names)
