"""Every numeric option and policy field bounded and typed when it is parsed, header values checked, outputs that
are not regular files refused, a full disk named as such, a fetch function's wrong result named: one line each,
naming the option (or field) and its range, before anything runs."""
from __future__ import annotations

import errno
import os
import subprocess
import sys

import numpy as np
import pytest

from gym_crawl.web.policy import POLICY_BOUNDS, FetchPolicy, header_value_problem


def _live(*argv: str) -> list[str]:
    return ["crawl", "--live", "http://127.0.0.1:9/", "--topic", "geology", *argv]


@pytest.mark.parametrize("argv, message", [
    (["--rate", "1e-9"], "argument --rate: must be a number from 0.01 to 10_000 requests per second, or 0"),
    (["--rate", "5e-324"], "argument --rate: must be a number from 0.01"),
    (["--rate", "nan"], "argument --rate: must be a number from 0.01"),
    (["--delay", "1e308"], "argument --delay: must be a number from 0 to 3600 seconds, got 1e308"),
    (["--delay", "inf"], "argument --delay: must be a number from 0 to 3600 seconds"),
    (["--max-pages", "1000000000000"], "argument --max-pages: must be an integer from 1 to 10_000_000"),
    (["--concurrency", "99999999999999999999"], "argument --concurrency: must be an integer from 1 to 1024"),
    (["--concurrency", "2.5"], "argument --concurrency: expected an integer from 1 to 1024"),
    (["--per-host", "0"], "argument --per-host: must be an integer from 1 to 1024, got 0"),
    (["--capacity", "0"], "argument --capacity: must be an integer from 1 to"),
    (["--user-agent-contact", "mailto:a\x01b"], "argument --user-agent-contact: must be printable ASCII"),
    (["--user-agent-contact", "https://x.org/\r\nX-Evil: 1"], "argument --user-agent-contact: must be printable"),
    (["--user-agent-contact", "a\x00b"], "argument --user-agent-contact: must be printable ASCII"),
])
def test_hostile_live_options_are_usage_errors_naming_the_range(argv, message, capsys):
    from gym_crawl.cli import main

    with pytest.raises(SystemExit) as e:
        main(_live(*argv))
    err = capsys.readouterr().err
    assert e.value.code == 2 and message in err, err
    assert err.strip().splitlines()[-1].startswith("gym-crawl: error: argument ")


def test_a_budget_the_machine_cannot_hold_is_refused_before_allocating(capsys):
    from gym_crawl.cli import main

    assert main(_live("--max-pages", "10000000")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gym-crawl: error: --max-pages 10,000,000") and "--capacity" in err[0]
    assert "memory" in err[0] and "Traceback" not in err[0]


def test_a_budget_from_steps_out_of_range_names_the_flags(capsys):
    from gym_crawl.cli import main

    assert main(_live("--steps", "100000000")) == 2
    assert "--max-pages (or --steps) must be an integer from 1 to 10000000" in capsys.readouterr().err


@pytest.mark.parametrize("kw, message", [
    ({"max_bytes": 1.5}, "FetchPolicy.max_bytes must be an integer from 1 to 1073741824, got 1.5"),
    ({"max_retries": 2.0}, "FetchPolicy.max_retries must be an integer from 0 to 100"),
    ({"rate": 1e-9}, "FetchPolicy.rate must be a number from 0.01 to 10000 or None"),
    ({"delay": 1e308}, "FetchPolicy.delay must be a number from 0 to 3600"),
    ({"delay": True}, "FetchPolicy.delay must be a number"),
    ({"max_time": float("nan")}, "FetchPolicy.max_time must be a number"),
    ({"robots_retry": -1}, "FetchPolicy.robots_retry must be a number from 0"),
    ({"max_pages_per_host": 0}, "FetchPolicy.max_pages_per_host must be an integer from 1"),
    ({"contact": "a\x01b"}, "FetchPolicy.contact must be printable ASCII"),
    ({"contact": "x\r\nX-Evil: 1"}, "FetchPolicy.contact must be printable ASCII"),
    ({"user_agent": "bot\x00"}, "FetchPolicy.user_agent must be printable ASCII"),
    ({"user_agent": " bot"}, "FetchPolicy.user_agent must not start or end with a space"),
    ({"user_agent": "bot/1 (é)"}, "FetchPolicy.user_agent must be printable ASCII"),
    ({"content_types": ("text/html\r\n",)}, "FetchPolicy.content_types"),
])
def test_policy_fields_are_typed_and_bounded(kw, message):
    with pytest.raises(ValueError) as e:
        FetchPolicy(**kw)
    assert message in str(e.value)


def test_every_numeric_policy_field_has_bounds_and_the_defaults_are_inside():
    import dataclasses

    numeric = {f.name for f in dataclasses.fields(FetchPolicy) if f.type in ("float", "int", "float | None",
                                                                               "int | None")}
    assert numeric == set(POLICY_BOUNDS)
    default = FetchPolicy()
    for name, (_, lo, hi) in POLICY_BOUNDS.items():
        v = getattr(default, name)
        assert v is None or lo <= v <= hi, name
    assert header_value_problem(default.agent) is None
    assert FetchPolicy(contact="mailto:ops@example.org").agent.endswith("(+mailto:ops@example.org)")


def test_the_user_agent_on_the_wire_is_the_checked_one():
    """A valid contact reaches the server's log as given; nothing the policy refuses can."""
    from gym_crawl.web.fetcher import PoliteFetcher
    from gym_crawl.web.serve.server import html_page, serve_site

    with serve_site({"a": {"/": html_page("a", "<p>x</p>")}}) as site, \
            PoliteFetcher(FetchPolicy(delay=0, rate=None, obey_robots=False, contact="https://ops.example/")) as f:
        assert f.fetch(site.url("a", "/")).ok
        ua = site.requests("a", "/")[0].user_agent
    assert ua.endswith("(+https://ops.example/)") and all(0x20 <= ord(c) <= 0x7E for c in ua)


# ------------------------------------------------------------------ outputs that are not regular files
def test_a_warc_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    from gym_crawl.web.warc_io import WarcRecorder

    fifo = tmp_path / "crawl.warc.gz"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        WarcRecorder(fifo, overwrite=True)
    for extra in ([], ["--overwrite"], ["--resume"]):
        p = subprocess.run([sys.executable, "-m", "gym_crawl", *_live("--warc", str(fifo), *extra)],
                           capture_output=True, text=True, timeout=120)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1, (extra, p.stderr)
        assert lines[0] == f"gym-crawl: error: --warc {fifo}: is not a regular file (a FIFO, device or socket); " \
                           f"give a file name"


@pytest.mark.parametrize("flag", ["--save", "--plot"])
def test_other_outputs_that_are_not_regular_files_are_refused(tmp_path, flag, capsys):
    from gym_crawl.cli import main

    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    assert main(["crawl", "--corpus", "synthetic-500", "--steps", "5", flag, str(fifo)]) == 2
    assert "is not a regular file" in capsys.readouterr().err


# ------------------------------------------------------------------ a full disk, named
def test_numpys_short_write_on_a_full_disk_names_the_file_and_disk_space(tmp_path, monkeypatch, capsys):
    """numpy's ``tofile`` reports a full disk as "N requested and M written" (no errno, no file): the compile says
    which file and that the disk is full."""
    from gym_crawl import cli

    def full(f, arr, allow_pickle=False):
        raise OSError("1928008 requested and 745440 written")

    monkeypatch.setattr(np, "save", full)
    assert cli.main(["corpus", "compile", "synthetic-500", str(tmp_path / "c")]) == 1
    err = [ln for ln in capsys.readouterr().err.strip().splitlines() if ln.startswith("gym-crawl: error:")]
    assert len(err) == 1 and ".npy: No space left on device (wrote 745,440 of 1,928,008 bytes)" in err[0], err
    assert not (tmp_path / "c").exists()


def test_save_npy_keeps_an_error_that_has_its_errno():
    from gym_crawl._io import _short_write

    e = OSError(errno.EACCES, "Permission denied", "/x")
    assert _short_write(e, "/y") is e


# ------------------------------------------------------------------ a fetch function's wrong result
@pytest.mark.parametrize("result", [None, "<html></html>"])
def test_a_fetch_function_returning_no_result_is_named(result):
    import gymnasium as gym

    from gym_crawl.web.live import LiveWeb

    def my_fetch(url):
        return result

    web = LiveWeb(["http://example.org/"], fetch=my_fetch)
    env = gym.make("WikiCrawl-v1", corpus=web, topic="geology", max_episode_steps=3, action="page",
                   observation="state")
    with pytest.raises(TypeError) as e:
        env.reset(seed=0)
    msg = str(e.value)
    assert "my_fetch" in msg and type(result).__name__ in msg and "'http://example.org/'" in msg
    assert "FetchResult" in msg and "archive" not in msg
