"""Every byte of every cache file (corpus arrays and manifest, text model, stored score tables, the
check stamps) is checked before use: a damaged cache is rebuilt with a warning naming the file, or is
refused with an error naming it, and never crashes the process.

The fuzz runs its victims in a subprocess that forks one child per damaged copy, so a segfault fails
the test (its exit status is reported) instead of killing pytest.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import make_tiny_corpus

from gym_crawl._io import STAMP_NAME, file_identity, seal, seal_problem, verify_files
from gym_crawl.corpus import Corpus, CorpusFormatError

_CORPUS = "synthetic-500"
_STEPS = 25

# One child per case: restore the pristine cache, damage one byte, run an episode, report.
_VICTIM = textwrap.dedent(r'''
    import json, os, random, shutil, sys, warnings
    pristine, work, cases_path, out_path = sys.argv[1:5]
    import gymnasium as gym
    import numpy as np
    import gym_crawl  # noqa: F401  (registers the env, compiles nothing yet)

    def episode():
        with warnings.catch_warnings():  # Gymnasium's note that WikiCrawl-v2 is the newer default id
            warnings.filterwarnings("ignore", message=".*WikiCrawl-v1 is out of date")
            env = gym.make("WikiCrawl-v1", corpus=CORPUS, max_episode_steps=STEPS)
        obs, info = env.reset(seed=0)
        env.unwrapped.view.precompute_scores(persist=True)
        rng = np.random.default_rng(0)
        traj = []
        for _ in range(STEPS):
            n = int(obs["mask"].sum())
            a = int(rng.integers(n)) if n else 0
            obs, r, term, trunc, info = env.step(a)
            traj.append([float(r), int(info["fetched_page"]), float(info["reward_sum"]), int(info["relevant_found"])])
            if term or trunc:
                break
        return traj

    # warm up (compiled kernels loaded) on another copy, so each forked victim only opens caches and crawls;
    # the per-process memos are keyed by path and file identity, so the victims' copies miss them
    shutil.copytree(pristine, work + ".warm", symlinks=True)
    os.environ["GYM_CRAWL_DATA"] = work + ".warm"
    episode()
    cases = json.load(open(cases_path))
    results = []
    for rel, offset, mask in cases:
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(pristine, work, symlinks=True)
        if rel is not None:
            f = os.path.join(work, rel)
            st = os.stat(f)
            with open(f, "r+b") as fh:
                fh.seek(offset)
                b = fh.read(1)
                fh.seek(offset)
                fh.write(bytes([b[0] ^ mask]))
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the victim
            os.close(rfd)
            os.environ["GYM_CRAWL_DATA"] = work
            res = {}
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    res["traj"] = episode()
                except Exception as e:  # a clear error is an accepted outcome: reported, checked by the test
                    res["error"] = f"{type(e).__name__}: {e}"
            res["warnings"] = [str(x.message) for x in w]
            os.write(wfd, json.dumps(res).encode())
            os._exit(0)
        os.close(wfd)
        chunks = []
        while True:
            b = os.read(rfd, 1 << 16)
            if not b:
                break
            chunks.append(b)
        os.close(rfd)
        _, status = os.waitpid(pid, 0)
        res = json.loads(b"".join(chunks) or b"{}")
        res.update(file=rel, offset=offset, status=status,
                   signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0)
        results.append(res)
    json.dump(results, open(out_path, "w"))
''').replace("CORPUS", repr(_CORPUS)).replace("STEPS", str(_STEPS))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A cache folder holding the corpus, its text model and the stored score tables of one topic."""
    d = tmp_path_factory.mktemp("pristine")
    code = (f"import gymnasium as gym, gym_crawl\n"
            f"e = gym.make('WikiCrawl-v1', corpus={_CORPUS!r}, max_episode_steps={_STEPS}); e.reset(seed=0)\n"
            f"e.unwrapped.view.precompute_scores(persist=True)\n")
    subprocess.run([sys.executable, "-c", code], check=True, env={**_env(), "GYM_CRAWL_DATA": str(d)}, timeout=600)
    return d


def _cache_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and not p.name.endswith(".lock"))


def _run(pristine: Path, tmp_path: Path, cases: list) -> list[dict]:
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    subprocess.run([sys.executable, "-c", _VICTIM, str(pristine), str(tmp_path / "work"), str(tmp_path / "cases.json"),
                    str(tmp_path / "out.json")], check=True, env=_env(), timeout=1800)
    return json.loads((tmp_path / "out.json").read_text())


def _fuzz(pristine: Path, tmp_path: Path, per_file: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    files = _cache_files(pristine)
    assert {"manifest.json", "meta.json", STAMP_NAME, "link_rel.npy", "context_terms.npy", "vectors.npy"} <= {
        Path(f).name for f in files}
    cases: list = [[None, 0, 0]]  # the undamaged baseline first
    for f in files:
        size = (pristine / f).stat().st_size
        for _ in range(per_file):
            cases.append([f, int(rng.integers(size)), int(rng.integers(1, 256))])
    results = _run(pristine, tmp_path, cases)
    assert len(results) == len(cases)
    crashed = [(r["file"], r["offset"], r["signal"]) for r in results if r["signal"] or r["status"]]
    assert not crashed, f"victims killed by a signal (file, byte, signal): {crashed}"
    base = results[0]
    assert "traj" in base and len(base["traj"]) == _STEPS and not base["warnings"], base
    for r in results[1:]:
        name = Path(r["file"]).name
        where = f"{r['file']} byte {r['offset']}"
        if "error" in r:  # a clear error naming the damaged file
            assert name in r["error"], f"{where}: error does not name the file: {r['error']}"
            continue
        assert r["traj"] == base["traj"], f"{where}: a damaged cache changed the trajectory silently ({r['warnings']})"
        if name.endswith(".npy"):  # every byte of an array file is covered by its full sha256: rebuilt, and said so
            assert any(name in w for w in r["warnings"]), f"{where}: damage not reported ({r['warnings']})"


def test_flipped_bytes_in_every_cache_file_are_rebuilt_never_crash(pristine, tmp_path):
    _fuzz(pristine, tmp_path, per_file=1, seed=0)


@pytest.mark.slow
def test_flipped_bytes_fuzz_long(pristine, tmp_path):
    _fuzz(pristine, tmp_path, per_file=12, seed=1)


def test_bad_word_id_outside_the_sampled_blocks_is_rebuilt(tmp_path):
    """The reported crash: one word id of -5 written in the middle of ``context_terms.npy``."""
    code = textwrap.dedent('''
        import os, sys, numpy as np, gymnasium as gym, gym_crawl, warnings
        from gym_crawl.webgen.synthetic import synthetic_cache_path
        gym.make("WikiCrawl-v1", corpus="synthetic-2000").reset(seed=0)
        f = synthetic_cache_path(2000) / "context_terms.npy"
        with open(f, "r+b") as fh:
            fh.seek(os.path.getsize(f) // 2 // 4 * 4)
            fh.write(np.int32(-5).tobytes())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            gym.make("WikiCrawl-v1", corpus="synthetic-2000").reset(seed=0)
        print([str(x.message) for x in w])
    ''')
    out = subprocess.run([sys.executable, "-c", code], env={**_env(), "GYM_CRAWL_DATA": str(tmp_path)},
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "context_terms.npy: sha256 differs" in out.stdout and "regenerating" in out.stdout


def test_a_compiled_corpus_given_by_path_is_refused_naming_the_file(tmp_path):
    make_tiny_corpus(300).save(tmp_path / "c")
    f = tmp_path / "c" / "link_dst.npy"
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x80
    f.write_bytes(bytes(data))
    with pytest.raises(CorpusFormatError, match=r"link_dst\.npy: sha256 differs"):
        Corpus.load(tmp_path / "c")


def test_stamp_makes_later_opens_hash_nothing_and_a_write_is_seen(tmp_path):
    make_tiny_corpus(300).save(tmp_path / "c")
    m = json.loads((tmp_path / "c" / "manifest.json").read_text())
    key = __import__("hashlib").sha256((tmp_path / "c" / "manifest.json").read_bytes()).hexdigest()
    assert verify_files(tmp_path / "c", m["files"], key=key) == 0  # stamped by the save
    assert verify_files(tmp_path / "c", m["files"], key=key, force=True) == len(m["files"])
    f = tmp_path / "c" / "text_terms.npy"
    before = file_identity(f)
    st = f.stat()
    f.write_bytes(f.read_bytes())  # same bytes, written again: checked again
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # even with the mtime put back (the ctime moves)
    assert file_identity(f) != before
    assert verify_files(tmp_path / "c", m["files"], key=key) == 1
    (tmp_path / "c" / STAMP_NAME).write_text("{not json")  # a damaged stamp only costs a new check
    assert Corpus.load(tmp_path / "c", share=False).n_pages == 300


def test_manifest_seal_detects_an_edited_value():
    m = seal({"format": "x", "meta": {"topics": {"a": {"seeds": [10, 20]}}}})
    assert seal_problem(m, {"format", "meta"}) is None
    m["meta"]["topics"]["a"]["seeds"] = [10, 29]
    assert "seal_sha256" in seal_problem(m, {"format", "meta"})
    unsealed = {"format": "x", "meta": {}}
    assert seal_problem(unsealed, {"format", "meta"}) is None  # written before manifests were sealed
    assert "unknown field" in seal_problem({"format": "x", "seal_sha2S6": "0"}, {"format", "meta"})
