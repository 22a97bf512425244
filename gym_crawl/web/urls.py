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
  ``?b`` → ``?b=``), an empty query (``/?``) dropped.

The path and query normalisation is :func:`w3lib.url.canonicalize_url` (Scrapy's), chosen over
``courlan.normalize_url``, which keeps dot segments and percent-escape case as written and so leaves
``/a/./b/../c`` and ``/%7ejoe`` different from ``/a/c`` and ``/~joe`` (measured side by side in
``gym-crawl bench warc_compile``).
"""
from __future__ import annotations

import contextlib
import re
from functools import lru_cache
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

__all__ = ["canonical_url", "canonicalize", "url_host", "url_text"]

_DEFAULT_PORT = {"http": 80, "https": 443}
_IGNORED_IN_URL = re.compile(r"[\t\n\r]")
_ABSOLUTE_HTTP = re.compile(r"\s*https?://", re.IGNORECASE)
_URL_WORD_SPLIT = re.compile(r"[^\w]+|_+")
_DROPPED_WORDS = frozenset({"www", "html", "htm", "php", "asp", "aspx", "jsp", "index"})


def _canonicalize(url: str) -> str:
    try:
        from w3lib.url import canonicalize_url
    except ImportError:  # pragma: no cover - w3lib is a dependency of the web extra
        raise ImportError("canonical URLs need w3lib: pip install 'gym-crawl[web]'") from None
    return canonicalize_url(url, keep_fragments=False)


def _netloc(host: str, port: int | None, scheme: str) -> str:
    host = host.rstrip(".")
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    return host if port is None or port == _DEFAULT_PORT[scheme] else f"{host}:{port}"


def canonicalize(url: str, base: str | None) -> str | None:
    """:func:`canonical_url` without its cache and its type check: what the cache stores for ``(url, base)``."""
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
    return urlunsplit((scheme, _netloc(host, port, scheme), c.path or "/", c.query, ""))


_canonical = lru_cache(maxsize=1 << 16)(canonicalize)


def canonical_url(url: str, base: str | None = None) -> str | None:
    """The canonical absolute form of ``url`` (see the module docstring), or ``None`` when it is not an
    ``http(s)`` URL with a host.

    ``base``: the URL ``url`` is relative to (the page it was found on, or that page's ``<base href>``).
    Deterministic: the same input always gives the same string, and ``canonical_url`` of a canonical URL
    is that URL. The last 65,536 distinct ``(url, base)`` pairs are cached (a site's navigation links
    repeat on every page), an absolute ``http(s)`` URL without its base.
    """
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, got {type(url).__name__}")
    if base is not None and _ABSOLUTE_HTTP.match(url):  # an absolute URL: the base changes nothing (one cache entry)
        base = None
    return _canonical(url, base)


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
