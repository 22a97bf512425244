"""Ray RLlib backend: the candidate-scoring RLModule (masking, permutation equivariance, K transfer,
pickle-free save/load) without starting Ray, and — marked slow — a short PPO run on a local Ray with 2 env runners
through ``gym-crawl train --backend rllib``."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="Ray RLlib is an optional extra: pip install 'gym-crawl[rllib]'")
torch = pytest.importorskip("torch")

from gymnasium import spaces
from ray.rllib.core.columns import Columns
from ray.rllib.models.torch.torch_distributions import TorchCategorical

from gym_crawl.agents.rllib.model import MASKED_LOGIT, CandidateScoringRLModule
from gym_crawl.agents.rllib.train import (
    RLlibConfig,
    env_creator,
    evaluate_module,
    greedy_actions,
    load_module,
    requested_backend,
    save_module,
)

D, S = 5, 6


def space(K: int, d: int = D) -> spaces.Dict:
    return spaces.Dict({"candidates": spaces.Box(-1, 1, (K, d), np.float32), "mask": spaces.MultiBinary(K),
                        "state": spaces.Box(-1, 1, (S,), np.float32)})


def module(K: int = 8, **mc) -> CandidateScoringRLModule:
    torch.manual_seed(0)
    m = CandidateScoringRLModule(observation_space=space(K), action_space=spaces.Discrete(K),
                                 model_config={"hidden": [16, 16], "head": [16], "value": [16], **mc})
    # larger output weights than the near-uniform init, so that the scores differ visibly
    torch.nn.init.normal_(m.score_head[-1].weight, std=1.0)
    return m.eval()


def batch(B: int, K: int, seed: int = 0, p_mask: float = 0.4) -> dict[str, torch.Tensor]:
    rng = np.random.default_rng(seed)
    mask = (rng.random((B, K)) > p_mask).astype(np.int8)
    mask[:, 0] = 1
    cand = rng.uniform(-1, 1, (B, K, D)).astype(np.float32) * mask[..., None]
    return {"candidates": torch.as_tensor(cand), "mask": torch.as_tensor(mask),
            "state": torch.as_tensor(rng.uniform(-1, 1, (B, S)).astype(np.float32))}


def test_masked_slots_get_zero_probability_and_are_never_sampled():
    m, obs = module(), batch(64, 8)
    with torch.no_grad():
        for fwd in (m.forward_inference, m.forward_exploration, m.forward_train):
            logits = fwd({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
            mask = obs["mask"].bool()
            assert torch.all(logits[~mask] == MASKED_LOGIT) and torch.all(logits[mask] > MASKED_LOGIT / 2)
            dist = TorchCategorical.from_logits(logits)
            probs = torch.softmax(logits, dim=1)
            assert torch.all(probs[~mask] == 0)
            draws = torch.stack([dist.sample() for _ in range(50)])
            assert bool(mask.gather(1, draws.T).all())
            assert bool(mask.gather(1, logits.argmax(1, keepdim=True)).all())
            assert torch.isfinite(dist.entropy()).all() and torch.isfinite(dist.logp(logits.argmax(1))).all()
        assert m.compute_values({Columns.OBS: obs}).shape == (64,)


def test_all_masked_observation_stays_finite():
    m, obs = module(), batch(3, 8)
    obs["mask"][:] = 0
    obs["candidates"][:] = 0
    with torch.no_grad():
        logits = m.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
        v = m.compute_values({Columns.OBS: obs})
    assert torch.isfinite(logits).all() and torch.isfinite(v).all()
    assert torch.allclose(torch.softmax(logits, 1), torch.full((3, 8), 1 / 8))


@pytest.mark.parametrize("context", [True, False])
def test_logits_are_permutation_equivariant_and_value_invariant(context):
    m, obs = module(context=context), batch(16, 8, seed=3)
    perm = torch.as_tensor(np.random.default_rng(1).permutation(8))
    permuted = {"candidates": obs["candidates"][:, perm], "mask": obs["mask"][:, perm], "state": obs["state"]}
    with torch.no_grad():
        a, b = m.logits(obs), m.logits(permuted)
        va, vb = m.compute_values({Columns.OBS: obs}), m.compute_values({Columns.OBS: permuted})
    assert torch.allclose(a[:, perm], b, atol=1e-5)
    assert torch.allclose(va, vb, atol=1e-5)
    # a valid row's score depends on its own features: changing one row changes its logit
    obs2 = {k: v.clone() for k, v in obs.items()}
    obs2["candidates"][:, 0] = -obs2["candidates"][:, 0]
    with torch.no_grad():
        assert not torch.allclose(m.logits(obs2)[:, 0], a[:, 0])


def test_weights_do_not_depend_on_k_and_save_load_is_pickle_free(tmp_path):
    m = module(K=8)
    save_module(m, tmp_path / "module.pt", space(8), spaces.Discrete(8), dict(m.model_config))
    state = torch.load(tmp_path / "module.pt", weights_only=True)  # plain tensors only
    assert set(state) == set(m.state_dict())
    same, big = load_module(tmp_path), load_module(tmp_path / "module.pt", max_candidates=32)
    obs = batch(4, 8, seed=5)
    with torch.no_grad():
        assert torch.equal(same.logits(obs), m.logits(obs))
        # the K = 8 observation padded with masked rows to K = 32: the same logits on the first 8 slots
        pad = {"candidates": torch.cat([obs["candidates"], torch.zeros(4, 24, D)], 1),
               "mask": torch.cat([obs["mask"], torch.zeros(4, 24, dtype=torch.int8)], 1), "state": obs["state"]}
        lb = big.logits(pad)
    assert lb.shape == (4, 32) and torch.allclose(lb[:, :8], m.logits(obs), atol=1e-5)
    assert torch.all(lb[:, 8:] == MASKED_LOGIT)
    with pytest.raises(FileNotFoundError, match="no RLlib module"):
        load_module(tmp_path / "missing")


def test_bad_spaces_and_config_are_refused():
    with pytest.raises(ValueError, match="Dict observation space"):
        CandidateScoringRLModule(observation_space=spaces.Box(-1, 1, (4,)), action_space=spaces.Discrete(4))
    with pytest.raises(ValueError, match="Discrete\\(8\\)"):
        CandidateScoringRLModule(observation_space=space(8), action_space=spaces.Discrete(5))
    with pytest.raises(ValueError, match="unknown model_config keys \\['hiden'\\]"):
        CandidateScoringRLModule(observation_space=space(8), action_space=spaces.Discrete(8),
                                 model_config={"hiden": [8]})
    with pytest.raises(ValueError, match="activation"):
        CandidateScoringRLModule(observation_space=space(8), action_space=spaces.Discrete(8),
                                 model_config={"activation": "swish"})


def test_backend_flag_and_config_validation():
    assert requested_backend(["--algo", "ppo"]) == "sb3"
    assert requested_backend(["--timesteps", "5", "--backend", "rllib"]) == "rllib"
    assert requested_backend(["--backend=rllib"]) == "rllib"
    with pytest.raises(ValueError, match="--num-env-runners"):
        RLlibConfig(num_env_runners=-1).validate()
    with pytest.raises(ValueError, match="not PPOConfig.training options"):
        RLlibConfig(hyper={"n_steps": 5}).validate()
    with pytest.raises(ValueError, match="compiled corpus directory"):
        env_creator({"corpus": "synthetic", "topics": ["geology"]})


def test_module_acts_on_the_real_env_and_never_picks_a_masked_slot(corpus_dir):
    cfg = RLlibConfig(corpus=corpus_dir, max_candidates=8, max_episode_steps=30, hidden=[16])
    env = env_creator({"corpus": corpus_dir, "topics": ["geology"], "max_episode_steps": 30, "max_candidates": 8})
    torch.manual_seed(0)
    m = CandidateScoringRLModule(observation_space=env.observation_space, action_space=env.action_space,
                                 model_config={"hidden": [16], "head": [16], "value": [16]}).eval()
    obs, _ = env.reset(seed=0)
    for _ in range(30):
        a = int(greedy_actions(m, {k: v[None] for k, v in obs.items()})[0])
        assert obs["mask"][a] == 1
        obs, _, term, trunc, info = env.step(a)
        assert not info["invalid_action"]
        if term or trunc:
            break
    rows = evaluate_module(m, cfg, corpus_dir, ["poetry", "cancer"], seed=1)
    assert [r["topic"] for r in rows] == ["poetry", "cancer"]
    assert all(r["invalid_actions"] == 0 and r["steps"] == 30 and r["relevant_found"] > 0 for r in rows)
    assert rows == evaluate_module(m, cfg, corpus_dir, ["poetry", "cancer"], seed=1)  # deterministic


@pytest.mark.slow
def test_train_on_local_ray_with_two_env_runners(corpus_dir, tmp_path, capsys):
    from gym_crawl.agents.rllib.train import main

    out = tmp_path / "run"
    rc = main(["--backend", "rllib", "--corpus", corpus_dir, "--train-topics", "geology,cancer",
               "--eval-topics", "poetry", "--timesteps", "400", "--num-env-runners", "2", "--max-candidates", "8",
               "--max-episode-steps", "40", "--hidden", "16", "--out", str(out), "--quiet",
               "--hyper", json.dumps({"train_batch_size_per_learner": 200, "minibatch_size": 50, "num_epochs": 2})])
    assert rc == 0
    text = capsys.readouterr().out
    assert "with 2 env runner(s)" in text
    curve = json.loads((out / "curve.json").read_text())
    assert len(curve) >= 2 and curve[-1]["env_steps"] >= 400
    assert [r["env_steps"] for r in curve] == sorted(r["env_steps"] for r in curve)
    assert any(np.isfinite(r["relevant_found_mean"]) for r in curve)
    res = json.loads((out / "results.json").read_text())
    assert res["num_env_runners"] == 2 and res["corpus_path"] == str(Path(corpus_dir).resolve())
    assert res["evaluation"]["eval"]["relevant_found_by_topic"].keys() == {"poetry"}
    assert all(r["invalid_actions"] == 0 for r in res["episodes"]["eval"] + res["episodes"]["train"])
    m = load_module(out)
    env = env_creator({"corpus": corpus_dir, "topics": ["poetry"], "max_episode_steps": 40, "max_candidates": 8})
    obs, _ = env.reset(seed=0)
    a = int(greedy_actions(m, {k: v[None] for k, v in obs.items()})[0])
    assert obs["mask"][a] == 1


@pytest.mark.slow
def test_bench_rllib_quick_writes_json_markdown_png(corpus_dir, tmp_path):
    from gym_crawl.benchmarks.rllib import main as bench_main

    out = tmp_path / "bench"
    assert bench_main(["--quick", "--corpus", corpus_dir, "--out", str(out), "--train-topics", "geology,cancer",
                       "--eval-topics", "poetry", "--seeds", "1", "--timesteps", "400", "--episode-steps", "40",
                       "-K", "8", "--runners", "1,2"]) == 0
    res = json.loads((out / "rllib.json").read_text())
    assert [t["env_runners"] for t in res["throughput"]] == [1, 2]
    for t in res["throughput"]:
        assert t["sampling"]["env_steps"] >= 600 and t["sampling"]["steps_per_second"] > 0
        assert t["training"]["env_steps"] > 0 and t["training"]["steps_per_cpu_second"] > 0
    (run,) = res["learning"]
    assert run["timesteps"] >= 400 and run["heldout_before"] is not None and run["heldout_after"] is not None
    assert set(run["heldout_after_by_topic"]) == {"poetry"}
    assert (out / "rllib.png").stat().st_size > 10_000 and "| 2 |" in (out / "rllib.md").read_text()
