"""One factory: no code outside :mod:`gym_crawl.wrappers.factory` (and the env package itself) builds a
WikiCrawl env by hand. Agents get theirs from :func:`gym_crawl.agents.make_env_for` (or the task API that calls
it); agent-less measurements of the env use ``make_env`` / ``make_vec_env`` of the factory module."""
from __future__ import annotations

import ast
import io
import tokenize
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("gym_crawl", "agents", "benchmarks")
#: the one module that calls gym.make / gym.make_vec on a WikiCrawl id, and the env package (its classes)
FACTORY = {Path("gym_crawl/wrappers/factory.py")}
ENV_PACKAGE = Path("gym_crawl/envs")
#: files allowed to build an env by hand, each with the reason
EXEMPT = {
    Path("benchmarks/bench_step.py"): "its worker scripts time the public gym.make path and also run against "
                                      "older git revisions (--baseline), which have no factory module",
    Path("benchmarks/paired_step.py"): "the same reason as bench_step: its worker runs against a git revision too",
    Path("benchmarks/arith.py"): "its worker script also runs against older git revisions (--baseline), which "
                                 "have no factory module",
}
PATTERNS = ('gym.make("WikiCrawl', "gym.make('WikiCrawl", 'make_vec("WikiCrawl', "make_vec('WikiCrawl",
            "WikiCrawlEnv(", "WikiCrawlVectorEnv(")


def _docstring_lines(tree: ast.AST) -> set[int]:
    """Line numbers covered by docstrings (a string literal that is a whole statement)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return out


def violations(text: str, name: str = "<text>") -> list[tuple[int, str]]:
    """``(line, code)`` of every hand-built WikiCrawl env in ``text``, docstrings and comments left out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        tree = ast.parse(text, filename=name)
    skip = _docstring_lines(tree)
    lines = text.splitlines()
    code = {i: line for i, line in enumerate(lines, 1) if i not in skip}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT and tok.start[0] in code:
            row, col = tok.start
            code[row] = code[row][:col]
    return [(i, line.strip()) for i, line in sorted(code.items()) if any(p in line for p in PATTERNS)]


def _files() -> list[Path]:
    out = []
    for top in SCANNED:
        for f in sorted((ROOT / top).rglob("*.py")):
            rel = f.relative_to(ROOT)
            if rel in FACTORY or rel in EXEMPT or ENV_PACKAGE in rel.parents:
                continue
            out.append(f)
    return out


def test_no_env_is_built_outside_the_factory():
    found = [f"{f.relative_to(ROOT)}:{line}: {code}" for f in _files()
             for line, code in violations(f.read_text(encoding="utf-8"), str(f))]
    assert not found, ("WikiCrawl envs built outside gym_crawl.wrappers.factory — use "
                       "gym_crawl.agents.make_env_for (an agent's env) or make_env / make_vec_env:\n"
                       + "\n".join(found))


def test_the_scan_sees_code_and_code_strings_but_not_docs():
    src = '''"""Docs may say gym.make("WikiCrawl-v1")."""
import gymnasium as gym

def f():
    """Also here: WikiCrawlEnv(corpus)."""
    a = 1  # a comment: gym.make("WikiCrawl-v1")
    env = gym.make("WikiCrawl-v1", corpus=None)
    v = gym.make_vec('WikiCrawl-v1', num_envs=2)
    code = "env = WikiCrawlEnv(corpus)"
    return env, v, code, a
'''
    assert [line for line, _ in violations(src)] == [7, 8, 9]


@pytest.mark.parametrize("path", sorted(FACTORY | set(EXEMPT)))
def test_factory_and_exemptions_exist(path):
    assert (ROOT / path).is_file(), f"{path} is listed in this test but does not exist"


def test_make_env_builds_every_registered_id_without_the_out_of_date_warning(tiny_corpus):
    from gym_crawl.wrappers.factory import env_ids, make_env

    assert {"WikiCrawl-v0", "WikiCrawl-v1", "WikiCrawl-v2"} <= set(env_ids())
    for env_id in ("WikiCrawl-v0", "WikiCrawl-v1"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            env = make_env(env_id, corpus=tiny_corpus, max_episode_steps=3)
        assert env.spec.id == env_id
        env.close()


def test_make_env_refuses_an_unknown_id():
    from gym_crawl.wrappers.factory import make_env

    with pytest.raises(ValueError, match="CartPole-v1.*registered: .*WikiCrawl-v1"):
        make_env("CartPole-v1")
    with pytest.raises(ValueError, match="WikiCrawl-v9"):
        make_env("WikiCrawl-v9")
