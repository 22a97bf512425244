"""URLs of the web corpora: one canonical form, the page's domain, and the URL's words.

Every loader that reads real web pages (WARC archives, the live crawler, the test site) names a page by
:func:`canonical_url`, so the same page reached by two spellings of its URL is one page:

* resolved against ``base`` (the page URL, or its ``<base href>``); leading/trailing white space and the
  tabs/newlines a browser ignores inside a URL are removed first;
* ``http`` and ``https`` only — ``mailto:``, ``javascript:``, ``data:``, ``ftp:``, a relative URL without a
  base, a URL without a host or with an invalid port → ``None``;
* scheme and host lowercased, an internationalized host in its IDNA (``xn--``) form, a trailing dot of
  the host dropped, the user name/password dropped, the default port (``:80`` for http, ``:443`` for
  https) dropped;
* the fragment dropped; the path's dot segments (``.``, ``..``) resolved; percent-encoding normalised
  (unreserved characters such as ``%7E`` decoded to ``~``, other escapes in upper case, spaces and
  non-ASCII characters percent-encoded as UTF-8); an empty path becomes ``/``;
* **query parameters sorted** by name, then value (``?b=2&a=1`` → ``?a=1&b=2``; blank values kept,
  ``?b`` → ``?b=``), an empty query (``/?``) dropped; in the query, every character but the unreserved
  ones is percent-encoded, except ``+``, which stays as written: ``%20`` (and a space) and ``+`` stay
  distinct, as servers that do not decode form encoding see them.

The path normalisation is :func:`w3lib.url.canonicalize_url` (Scrapy's), chosen over
``courlan.normalize_url``, which keeps dot segments and percent-escape case as written and so leaves
``/a/./b/../c`` and ``/%7ejoe`` different from ``/a/c`` and ``/~joe`` (measured side by side in
``gym-crawl bench warc_compile``); its query normalisation too, but for spaces: w3lib writes both ``%20``
and ``+`` as ``+``, which requests another URL from a server that reads ``+`` literally.
"""
from __future__ import annotations

import contextlib
import re
import string
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import quote, unquote, unquote_to_bytes, urljoin, urlsplit, urlunsplit

from gym_crawl.registry import install_command

__all__ = [
    "MAX_URL_CHARS", "canonical_url", "canonical_urls", "canonicalize", "is_public_suffix", "registered_domain",
    "url_host", "url_text",
]

MAX_URL_CHARS = 16384
"""Longest URL (characters, as written) :func:`canonical_url` reads; a longer one has no canonical form. A
URL that long is a trap or an attack (real links stay far below; the fetcher's own guard,
``FetchPolicy.max_url_length``, defaults to 2048)."""
_CACHED_CHARS = 2048
"""URLs (with their base) up to this length are remembered by :func:`canonical_url`'s cache."""

_DEFAULT_PORT = {"http": 80, "https": 443}
_IGNORED_IN_URL = re.compile(r"[\t\n\r]")
_SPACE = re.compile(r"\s")
_WITH_HOST = re.compile(r"https?://[^/?#\\\s]", re.IGNORECASE)
_ABSOLUTE_HTTP = re.compile(r"\s*https?://", re.IGNORECASE)
_BASE_DIR = re.compile(r"https?://[^/?#\s]+/(?:[^?#]*/)?", re.IGNORECASE)
"""The directory of a base URL that has a path: scheme, authority and path up to its last ``/``."""
_PATH_RELATIVE = re.compile(r"[^:/?#\\\s][^:/?#\\\t\n\r]*(?:[/?#][^\t\n\r]*)?(?<=\S)")
"""A relative-path reference (RFC 3986 §4.2) with no scheme, no leading ``/``, ``?``, ``#`` or white space and
no tab or line break: it resolves against its base's directory alone (§5.2.2: the base's file name, query and
fragment play no part)."""
_URL_WORD_SPLIT = re.compile(r"[^\w]+|_+")
_DROPPED_WORDS = frozenset({"www", "html", "htm", "php", "asp", "aspx", "jsp", "index"})
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
_QUERY_UNIT = re.compile(r"%[0-9A-Fa-f]{2}|\+|[^%+]+|%")


def _canonicalize(url: str) -> str:
    try:
        from w3lib.url import canonicalize_url
    except ImportError:  # pragma: no cover - w3lib is a dependency of the web extra
        raise ImportError(f"canonical URLs need w3lib: {install_command('web')}") from None
    return canonicalize_url(url, keep_fragments=False)


def _netloc(host: str, port: int | None, scheme: str) -> str:
    host = host.rstrip(".")
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    return host if port is None or port == _DEFAULT_PORT[scheme] else f"{host}:{port}"


def _query_part(text: str) -> str:
    """One name or value of a query in canonical form (see the module docstring)."""
    out = []
    for m in _QUERY_UNIT.finditer(text):
        unit = m.group()
        if unit == "+":
            out.append("+")
        elif len(unit) == 3 and unit[0] == "%":
            ch = chr(int(unit[1:], 16))
            out.append(ch if ch in _UNRESERVED else unit.upper())
        else:
            out.append(quote(unit, safe=""))  # "%" alone → %25; spaces, reserved and non-ASCII as UTF-8
    return "".join(out)


def _query_key(part: str) -> bytes:
    return unquote_to_bytes(part.replace("+", " "))


def _canonical_query(query: str) -> str:
    """The query sorted by name, then value, each in canonical form; blank values kept (``b`` → ``b=``)."""
    pairs = []
    for item in query.split("&"):
        if item:
            name, _, value = item.partition("=")
            pairs.append((_query_part(name), _query_part(value)))
    pairs.sort(key=lambda kv: (_query_key(kv[0]), _query_key(kv[1]), kv))
    return "&".join(f"{k}={v}" for k, v in pairs)


def canonicalize(url: str, base: str | None) -> str | None:
    """:func:`canonical_url` without its cache, its length bound and its type check."""
    u = _IGNORED_IN_URL.sub("", url.strip())
    try:
        if base is not None:
            u = urljoin(_IGNORED_IN_URL.sub("", base.strip()), u)
        parts = urlsplit(u)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORT or not parts.hostname:
            return None
        parts.port  # noqa: B018 - raises ValueError on an invalid port
        c = urlsplit(_canonicalize(u))
        host, port = c.hostname, c.port
    except (ValueError, UnicodeError):
        return None
    if not host:
        return None
    return urlunsplit((scheme, _netloc(host, port, scheme), c.path or "/", _canonical_query(parts.query), ""))


_canonical_cached = lru_cache(maxsize=1 << 16)(canonicalize)
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9_.~-]*(?:/[A-Za-z0-9_~-][A-Za-z0-9_.~-]*)*/?")
"""A relative path of unreserved characters with no dot segment (no segment starts with a dot) and no empty
segment: against a canonical folder it resolves and canonicalises to the folder followed by itself."""


_PLAIN_ABSOLUTE = re.compile(r"https?://(?!xn--)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.(?!xn--)[a-z0-9]"
                             r"(?:[a-z0-9-]{0,61}[a-z0-9])?)*(?:/[A-Za-z0-9_~-][A-Za-z0-9_.~-]*)*/?")
"""An absolute URL already in canonical form: lowercase scheme and host (ASCII labels, no port), a path of
unreserved characters with no dot segment and no empty segment, no query."""


@lru_cache(maxsize=1 << 12)
def _is_canonical_folder(folder: str) -> bool:
    """Whether the base directory ``folder`` (:data:`_BASE_DIR`'s match) is already in canonical form."""
    return canonicalize(folder, None) == folder


def canonical_url(url: str, base: str | None = None) -> str | None:
    """The canonical absolute form of ``url`` (see the module docstring), or ``None`` when it is not an
    ``http(s)`` URL with a host.

    ``base``: the URL ``url`` is relative to (the page it was found on, or that page's ``<base href>``).
    Deterministic: the same input always gives the same string, and ``canonical_url`` of a canonical URL
    is that URL. A URL (or base) longer than :data:`MAX_URL_CHARS` characters gives ``None``. The last
    65,536 distinct short ``(url, base)`` pairs are cached (a site's navigation links repeat on every page),
    an absolute ``http(s)`` URL without its base, a URL without its fragment.
    """
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, got {type(url).__name__}")
    if len(url) > MAX_URL_CHARS or (base is not None and len(base) > MAX_URL_CHARS):
        return None
    url, kind = _href_form(url)
    if base is None or kind == _ABSOLUTE:  # an absolute URL: the base changes nothing (one cache entry)
        return _resolve(url, None, False)
    if kind == _RELATIVE_PATH:
        folder = _base_folder(base)
        if folder is not None:
            return _resolve(url, folder, True)
    return _resolve(url, base, False)


_ABSOLUTE, _RELATIVE_PATH, _OTHER = 1, 2, 0


def _href_form(url: str) -> tuple[str, int]:
    """``url`` without its fragment where dropping it changes nothing (one cache entry for a page's every
    ``#section`` link), and its kind: :data:`_ABSOLUTE` (``http(s)://``), :data:`_RELATIVE_PATH` (resolved against
    its base's folder alone) or :data:`_OTHER`."""
    head, hash_mark, _ = url.partition("#")
    if hash_mark and _SPACE.search(url) is None and (_PATH_RELATIVE.fullmatch(head) or _WITH_HOST.match(head)):
        url = head  # the fragment is dropped anyway
    if _ABSOLUTE_HTTP.match(url):
        return url, _ABSOLUTE
    return url, _RELATIVE_PATH if _PATH_RELATIVE.fullmatch(url) else _OTHER


def _base_folder(base: str) -> str | None:
    """The folder a relative path resolves against in ``base`` (its scheme, authority and path up to the last
    ``/``), or ``None`` when ``base`` has no such folder or holds characters a browser ignores."""
    d = _BASE_DIR.match(base)
    return d.group() if d is not None and _IGNORED_IN_URL.search(base) is None else None


def _resolve(url: str, base: str | None, in_folder: bool) -> str | None:
    """:func:`canonical_url` of ``url`` (as :func:`_href_form` gives it) against ``base`` (``None`` for an absolute
    URL; the folder when ``in_folder``)."""
    if in_folder and base is not None and _PLAIN_PATH.fullmatch(url) and len(base) + len(url) <= _CACHED_CHARS \
            and _is_canonical_folder(base):
        return base + url  # nothing to resolve or normalise: the canonicaliser would return the same
    if base is None and _PLAIN_ABSOLUTE.fullmatch(url):
        return url if url.find("/", 8) >= 0 else url + "/"  # already canonical (an empty path becomes "/")
    if len(url) + (len(base) if base is not None else 0) <= _CACHED_CHARS:
        return _canonical_cached(url, base)
    return canonicalize(url, base)


_FORMS: dict[str, tuple[str, int]] = {}
_RESOLVED: dict[tuple[str, str | None, bool], str | None] = {}
_MEMO_SIZE = 1 << 15
"""Entries of :func:`canonical_urls`' two tables (each cleared when full)."""


def canonical_urls(urls: Sequence[str], base: str | None) -> list[str | None]:
    """``[canonical_url(u, base) for u in urls]`` — the links of one page — with the work that depends on ``base``
    done once and each URL's form and each resolved URL remembered (the last :data:`_MEMO_SIZE` of each), so a
    site's menu links, the same on every page of a folder, cost two dictionary look-ups each."""
    if base is not None and len(base) > MAX_URL_CHARS:
        return [None] * len(urls)
    folder = _base_folder(base) if base is not None else None
    forms, resolved = _FORMS, _RESOLVED
    out: list[str | None] = []
    for url in urls:
        form = forms.get(url)
        if form is None:
            if not isinstance(url, str):
                raise TypeError(f"url must be a str, got {type(url).__name__}")
            if len(url) > MAX_URL_CHARS:
                out.append(None)
                continue
            if len(forms) >= _MEMO_SIZE:
                forms.clear()
            form = forms[url] = _href_form(url)
        href, kind = form
        key: tuple[str, str | None, bool]
        if base is None or kind == _ABSOLUTE:
            key = (href, None, False)
        elif kind == _RELATIVE_PATH and folder is not None:
            key = (href, folder, True)
        else:
            key = (href, base, False)
        try:
            out.append(resolved[key])
        except KeyError:
            if len(resolved) >= _MEMO_SIZE:
                resolved.clear()
            out.append(resolved.setdefault(key, _resolve(*key)))
    return out


def url_host(url: str) -> str:
    """The page's domain in a corpus: ``host``, or ``host:port`` when the port is not the scheme's default
    (lowercase; the host of a canonical URL is already in IDNA form). Raises ``ValueError`` naming the URL
    when it has no host."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError as e:
        raise ValueError(f"url {url!r}: {e}") from None
    if not host:
        raise ValueError(f"url {url!r} has no host")
    scheme = parts.scheme.lower()
    return _netloc(host, port, scheme if scheme in _DEFAULT_PORT else "http")


_psl: Any = None


def _extract(host: str) -> Any:
    global _psl
    if _psl is None:
        try:
            import tldextract
        except ImportError:  # pragma: no cover - tldextract comes with the web extra
            raise ImportError(f"registered domains need tldextract: {install_command('web')}") from None
        # the bundled snapshot only: no download, no cache written
        _psl = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)
    return _psl(host)


def is_public_suffix(host: str) -> bool:
    """Whether the host name is itself a public suffix (``co.uk``, ``github.io``): no registrable domain."""
    h = host.strip().lower().rstrip(".")
    if not h or _IPV4.match(h) or ":" in h or h.startswith("["):
        return False
    r = _extract(h)
    return bool(r.suffix) and not r.domain


def registered_domain(host: str) -> str:
    """The registrable domain of ``host`` by the Public Suffix List (``www.bbc.co.uk`` → ``bbc.co.uk``,
    ``docs.python.org`` → ``python.org``; its private section too, so ``a.github.io`` → ``a.github.io``).
    An IP address, or a name under no public suffix (``localhost``, ``site.test``), is its own domain. A
    ``:port`` is dropped.

    The list is the snapshot bundled with ``tldextract`` (the ``web`` extra), never refreshed over the
    network. A host that is itself a public suffix (``co.uk``) is returned as it is
    (:func:`is_public_suffix` tells)."""
    h = host.strip().lower()
    if h.startswith("["):  # an IPv6 literal, with or without a port
        return h[: h.index("]") + 1] if "]" in h else h
    h = h.rsplit(":", 1)[0] if h.count(":") == 1 else h
    h = h.rstrip(".")
    if not h or _IPV4.match(h) or ":" in h:
        return h
    r = _extract(h)
    return (r.top_domain_under_public_suffix or h) if r.suffix else h


def url_text(url: str) -> str:
    """The words of a URL, as the title/URL tokens of its page: the host's labels and the percent-decoded
    path segments (an internationalized host decoded from IDNA) split at every non-word character and underscore
    (``-_./`` and the rest), joined by
    spaces. The scheme, port, query, ``www`` and the file extensions/names ``html``, ``htm``, ``php``,
    ``asp``, ``aspx``, ``jsp``, ``index`` are left out, so they carry no word of the page's topic.

    ``url_text("https://www.example.org/wiki/Plate_tectonics.html")`` → ``"example org wiki Plate tectonics"``.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        host, parts = "", urlsplit("")
    with contextlib.suppress(UnicodeError):  # an internationalized host's own letters, not its xn-- form
        host = host.encode("ascii").decode("idna")
    words = [w for w in _URL_WORD_SPLIT.split(host + " " + unquote(parts.path))
             if w and w.lower() not in _DROPPED_WORDS]
    return " ".join(words)
