"""Shared fixtures. The core suite runs on generated data; tests needing ../shared/data skip when absent."""
from __future__ import annotations

import dataclasses
import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.corpus import Corpus, CorpusBuilder

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

VOCAB = {
    "geo": "geology rock earth mineral volcano sediment crust science fossil basalt granite tectonic".split(),
    "med": "cancer tumor disease medicine oncology health cell therapy chemotherapy patient".split(),
    "art": "poetry poem verse literature arts sonnet rhyme poet stanza ballad".split(),
    "gen": "city year people country history river war king music market bridge village".split(),
}


def make_tiny_corpus(n: int = 600, seed: int = 0, domains_per_kind: int = 3) -> Corpus:
    """A small deterministic multi-domain web with three topics, topical locality and a hub (``domains_per_kind``
    domains for each of its four kinds of page)."""
    rng = np.random.default_rng(seed)
    kinds = ["geo", "med", "art", "gen"]
    b = CorpusBuilder(name=f"tiny-{n}-s{seed}")
    for i in range(n):
        k = kinds[i % 4]
        words = list(rng.choice(VOCAB[k], 30)) + list(rng.choice(VOCAB["gen"], 20))
        title = {0: "Geology", 1: "Cancer", 2: "Poetry", 3: "United States"}.get(i, f"{k} {VOCAB[k][i % 10]} {i}")
        b.add_page(title, " ".join(words), domain=f"{k}-{i % domains_per_kind}.org", labels=[f"subject.{k}"])
    for i in range(n):
        k = i % 4
        for j in rng.choice(n, 12, replace=False).tolist():
            same = j % 4 == k
            if j != i and (same or rng.random() < 0.3):
                ctx = " ".join(rng.choice(VOCAB[kinds[j % 4]], 4))
                b.add_link(i, j, context=ctx)
        if i != 3:
            b.add_link(i, 3)  # hub
    c = b.build()
    c.meta["topics"] = {
        "geology": {"seeds": ["Geology"], "label": "subject.geo", "words": ["geology"],
                    "categories": ["earth", "science"]},
        "cancer": {"seeds": ["Cancer"], "label": "subject.med", "words": ["cancer"],
                   "categories": ["disease", "medicine", "oncology", "health"]},
        "poetry": {"seeds": ["Poetry"], "label": "subject.art", "words": ["poetry"],
                   "categories": ["literature", "arts"]},
    }
    return c


@pytest.fixture(scope="session")
def tiny_corpus() -> Corpus:
    return make_tiny_corpus()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every test's downloads/compiled corpora out of the user's cache."""
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path_factory.getbasetemp() / "gym_crawl_data"))


class NetworkGuardError(RuntimeError):
    """A test tried to resolve or connect to something outside loopback."""


def _is_loopback(host: object) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port): the local wildcard/loopback address
    if isinstance(host, (bytes, bytearray)):
        host = bytes(host).decode("ascii", "replace")
    name = str(host).strip("[]").split("%", 1)[0].lower().rstrip(".")
    if name in ("", "localhost", "localhost.localdomain", "ip6-localhost") or name.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or ip.is_unspecified or bool(mapped is not None and mapped.is_loopback)


def _is_address(host: object) -> bool:
    """Whether ``host`` is an IP address literal (or ``None``/empty: the local wildcard), not a name."""
    if host is None:
        return True
    if isinstance(host, (bytes, bytearray)):
        host = bytes(host).decode("ascii", "replace")
    name = str(host).strip("[]").split("%", 1)[0]
    if not name:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class _NetworkGuard:
    """Fails any connection outside 127.0.0.0/8 and ::1, and any name resolution — a name looked up, even
    ``localhost``, or an address looked up backwards (tests run offline and resolve nothing)."""

    def __init__(self) -> None:
        self.violations: list[str] = []

    def fail(self, msg: str) -> None:
        msg = f"network guard: {msg}"
        self.violations.append(msg)
        raise NetworkGuardError(msg)

    def check(self, what: str, host: object) -> None:
        if not _is_loopback(host):
            self.fail(f"a test tried to {what} {host!r}; tests may only talk to servers they start on loopback "
                      "(127.0.0.0/8, ::1)")

    def check_lookup(self, host: object) -> None:
        if not _is_address(host):
            self.fail(f"a test tried to resolve the name {host!r}; tests resolve no name (use 127.0.0.x)")
        self.check("resolve", host)


@pytest.fixture(autouse=True)
def network_guard(monkeypatch: pytest.MonkeyPatch):
    """Guard every test: ``socket.socket.connect``/``connect_ex``/``sendto`` and ``create_connection`` raise
    :class:`NetworkGuardError` for a non-loopback host; ``getaddrinfo``, ``gethostbyname`` and ``gethostbyname_ex``
    for any name (only loopback address literals pass); ``gethostbyaddr``, ``getnameinfo`` and ``getfqdn`` (reverse
    lookups) always. The test fails even when the code under test swallows that error. Yields the guard
    (``.violations``)."""
    guard = _NetworkGuard()
    inet = (socket.AF_INET, socket.AF_INET6)
    connect, connect_ex, sendto = socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto
    getaddrinfo, gethostbyname, create_connection = socket.getaddrinfo, socket.gethostbyname, socket.create_connection
    gethostbyname_ex = socket.gethostbyname_ex

    def guarded_connect(self, address):
        if self.family in inet:
            guard.check("connect to", address[0])
        return connect(self, address)

    def guarded_connect_ex(self, address):
        if self.family in inet:
            guard.check("connect to", address[0])
        return connect_ex(self, address)

    def guarded_sendto(self, data, *args):
        if self.family in inet:
            guard.check("send a datagram to", args[-1][0])
        return sendto(self, data, *args)

    def guarded_getaddrinfo(host, *args, **kwargs):
        guard.check_lookup(host)
        return getaddrinfo(host, *args, **kwargs)

    def guarded_gethostbyname(host):
        guard.check_lookup(host)
        return gethostbyname(host)

    def guarded_gethostbyname_ex(host):
        guard.check_lookup(host)
        return gethostbyname_ex(host)

    def reverse(name):
        def refuse(*args, **kwargs):
            guard.fail(f"a test called socket.{name}{args!r}, a reverse lookup; our servers and clients resolve "
                       "nothing (override HTTPServer.server_bind, which calls getfqdn)")
        return refuse

    def guarded_create_connection(address, *args, **kwargs):
        guard.check("connect to", address[0])
        return create_connection(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket.socket, "sendto", guarded_sendto)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    monkeypatch.setattr(socket, "gethostbyname", guarded_gethostbyname)
    monkeypatch.setattr(socket, "gethostbyname_ex", guarded_gethostbyname_ex)
    for name in ("gethostbyaddr", "getnameinfo", "getfqdn"):
        monkeypatch.setattr(socket, name, reverse(name))
    monkeypatch.setattr(socket, "create_connection", guarded_create_connection)
    yield guard
    if guard.violations:
        pytest.fail("\n".join(guard.violations), pytrace=False)


# ---------------------------------------------------------------- both WARC readers agree on every WARC we write
_WARCS_CHECKED: set[tuple[str, int, int]] = set()


def _package_warcs(folder: Path) -> list[Path]:
    """The WARC files under ``folder`` that this package wrote (their first record is a warcinfo whose software
    is ``gym_crawl/<version>``); files crafted by tests, damaged at their start or foreign are left out."""
    try:
        from gym_crawl.web.warc_io import read_first_warcinfo
    except ImportError:  # pragma: no cover
        return []
    out = []
    for p in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if not (p.name.endswith((".warc", ".warc.gz")) and p.is_file()):
            continue
        try:
            software = str(read_first_warcinfo(p).get("software", ""))
        except (ValueError, OSError):
            continue
        if software.startswith("gym_crawl/"):
            out.append(p)
    return out


def _disagreements(folder: Path) -> list[str]:
    """FastWARC and warcio read every WARC the package wrote under ``folder`` alike (each file checked once per
    size and modification time)."""
    try:
        from gym_crawl.web.warc_io import readers_disagree
    except ImportError:  # pragma: no cover - the web extra is absent
        return []
    problems = []
    for p in _package_warcs(folder):
        st = p.stat()
        key = (str(p), st.st_size, st.st_mtime_ns)
        if key in _WARCS_CHECKED:
            continue
        _WARCS_CHECKED.add(key)
        why = readers_disagree(p)
        if why is not None:
            problems.append(why)
    return problems


@pytest.fixture(autouse=True)
def warc_readers_agree(request: pytest.FixtureRequest):
    """After every test that used ``tmp_path``: each WARC the package wrote there reads the same with FastWARC (the
    compiler's reader) and warcio (the replay's), record for record (:func:`gym_crawl.web.warc_io.readers_disagree`)."""
    yield
    tmp = getattr(request.node, "funcargs", {}).get("tmp_path")  # still a path after the fixture's teardown
    if tmp is not None:
        problems = _disagreements(Path(tmp))
        if problems:
            pytest.fail("the WARC readers disagree:\n" + "\n".join(problems), pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def warc_readers_agree_everywhere(tmp_path_factory: pytest.TempPathFactory):
    """At the end of the session, the same check over every WARC the package wrote under the session's temporary
    folders (those of module and session fixtures too)."""
    yield
    problems = _disagreements(tmp_path_factory.getbasetemp())
    if problems:
        pytest.fail("the WARC readers disagree:\n" + "\n".join(problems), pytrace=False)


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory, tiny_corpus: Corpus) -> str:
    """The tiny corpus saved as a corpus folder (once per test module): a trainer's env workers memory-map it by
    path, as they do a cached corpus."""
    p = tmp_path_factory.mktemp("corpus") / "tiny"
    tiny_corpus.save(p)
    return str(p)


@pytest.fixture
def general_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A tiny Wikispeedia as the general English text model's source (``$GYM_CRAWL_WIKISPEEDIA``), a fresh data dir,
    and no general model held in memory before or after the test; yields the Wikispeedia folder."""
    from test_wikispeedia import make_fake

    import gym_crawl.text.model as model_mod

    root = make_fake(tmp_path / "wikispeedia")
    monkeypatch.setenv("GYM_CRAWL_WIKISPEEDIA", str(root))
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    model_mod._GENERAL_MODELS.clear()
    yield root
    model_mod._GENERAL_MODELS.clear()


def shared_data(sub: str) -> Path:
    """Path of ../shared/data/<sub>, or skip the test with the reason."""
    p = SHARED_DATA / sub
    if not p.exists():
        pytest.skip(f"{p} is absent (the shared test data lives beside the repository, not in it)")
    return p


def tamper_unfetched(c: Corpus, pages: np.ndarray) -> Corpus:
    """Copy of ``c`` where ``pages`` get the text of the topic's main page ("Geology") and the topic
    label — what a leak of unfetched content or labels would expose (tests/test_conformance.py)."""
    donor = c.page_id("Geology")
    lab_geo = c.labels.index("subject.geo")
    chosen = set(np.asarray(pages).tolist())
    bags, labs = [], []
    for p in range(c.n_pages):
        src = donor if p in chosen else p
        a, b = c.text_ptr[src], c.text_ptr[src + 1]
        bags.append((c.text_terms[a:b], c.text_counts[a:b]))
        labs.append([lab_geo] if p in chosen else c.label_ids[c.label_ptr[p]:c.label_ptr[p + 1]].tolist())
    ptr = np.zeros(c.n_pages + 1, np.int64)
    ptr[1:] = np.cumsum([len(t) for t, _ in bags])
    lptr = np.zeros(c.n_pages + 1, np.int64)
    lptr[1:] = np.cumsum([len(lab) for lab in labs])
    return dataclasses.replace(
        c, text_ptr=ptr, text_terms=np.concatenate([t for t, _ in bags]).astype(np.int32),
        text_counts=np.concatenate([k for _, k in bags]).astype(np.int32),
        label_ptr=lptr, label_ids=np.asarray([x for lab in labs for x in lab], np.int32), path=None)
