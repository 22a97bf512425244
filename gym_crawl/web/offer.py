"""What a live web offers the crawler: the rules that keep a step from going to a URL that cannot give a page.

A link found on a fetched page becomes a page the crawler may choose (it is *offered*) only when nothing
already known says the fetch would be wasted. :class:`OfferRules` are those rules, checked in this order when
a URL is first discovered (:class:`~gym_crawl.web.live.LiveWeb` applies them; every refusal is counted by
reason, and a refused URL never costs a step):

1. **not HTML by its URL** (``"not-html"``): the last path segment's extension is one of
   :data:`NON_HTML_EXTENSIONS` (documents, images, archives, source files, feeds, data …), a path segment is
   one of :data:`NON_HTML_SEGMENTS` (Sphinx's ``_sources/``, ``_downloads/``, ``_images/``, ``_static/``; a
   ``raw/`` view), or the query asks for a raw or download view (:data:`NON_HTML_QUERY`);
2. **learned** (``"learned"``): a URL *shape* of the host (:func:`failure_keys`: its folder and extension,
   its top folder and extension, the host and a non-HTML extension) that failed ``learn_after`` times — not
   HTML, too large, a client error — and never gave a page;
3. **the trap guards** of the fetch policy that a URL alone decides (``"trap:url-length"``,
   ``"trap:path-depth"``, ``"trap:query-params"``, ``"trap:repeated-segment"``) and its caps, counted over
   the URLs offered: at most ``max_pages_per_pattern`` URLs per digit pattern (``"trap:pattern"``) and
   ``max_pages_per_host`` per host (``"host-cap"``), so traps stay bounded;
4. **robots.txt** (``"robots"``): the origin's robots.txt, fetched before any page of the origin is offered
   (until it arrives, the origin's discovered pages are held back: discovered, not offered); when it
   arrives, the held pages it disallows are refused, and later links are checked as they are found.

Which failures teach a shape (:data:`LEARNED_ERRORS`): ``content-type`` (not HTML), ``too-large``, and the
client errors ``http-400``, ``-401``, ``-403``, ``-404``, ``-405``, ``-406``, ``-410``, ``-414``, ``-415``,
``-451``; not timeouts, connection errors, 429 or 5xx, which say nothing about the URL.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlsplit

from gym_crawl._io import dataclass_kwargs
from gym_crawl.registry import install_command

__all__ = ["LEARNED_ERRORS", "NON_HTML_EXTENSIONS", "NON_HTML_QUERY", "NON_HTML_SEGMENTS", "OfferRules",
           "RobotsRules", "failure_keys", "not_html_reason", "origin_of"]

NON_HTML_EXTENSIONS = frozenset((
    # documents and text
    "pdf", "ps", "eps", "dvi", "djvu", "doc", "docx", "odt", "rtf", "xls", "xlsx", "ods", "ppt", "pptx", "odp",
    "epub", "mobi", "txt", "text", "rst", "md", "markdown", "tex", "bib", "info", "man", "pod", "csv", "tsv",
    "log", "diff", "patch",
    # images, audio, video, fonts
    "png", "jpg", "jpeg", "gif", "bmp", "tif", "tiff", "svg", "svgz", "webp", "avif", "ico", "psd", "mp3", "ogg",
    "oga", "wav", "flac", "m4a", "aac", "mp4", "m4v", "webm", "mkv", "avi", "mov", "wmv", "flv", "woff", "woff2",
    "ttf", "otf", "eot",
    # archives, packages, binaries
    "zip", "gz", "tgz", "bz2", "tbz2", "xz", "txz", "zst", "7z", "rar", "tar", "jar", "war", "whl", "egg", "deb",
    "rpm", "apk", "dmg", "iso", "img", "exe", "msi", "bin", "so", "dll", "class", "wasm", "pyc", "o", "a",
    # source code, data, feeds, web assets
    "py", "c", "h", "cc", "cpp", "hpp", "cxx", "rs", "go", "java", "kt", "scala", "rb", "pl", "pm", "sh", "bash",
    "ps1", "bat", "r", "m", "jl", "lua", "hs", "ml", "el", "lisp", "clj", "swift", "cs", "fs", "vb", "sql", "ipynb",
    "js", "mjs", "cjs", "ts", "css", "scss", "less", "map", "json", "jsonl", "yaml", "yml", "toml", "ini", "cfg",
    "conf", "xml", "xsl", "xsd", "dtd", "rss", "atom", "rdf", "ics", "vcf", "gpx", "kml",
))
"""Extensions of a URL's last path segment that name something other than an HTML page."""
NON_HTML_SEGMENTS = frozenset(("_sources", "_downloads", "_images", "_static", "raw"))
"""Path segments of source, download, asset and raw views (Sphinx's folders; a ``raw/`` view)."""
NON_HTML_QUERY = (("raw", None), ("download", None), ("dl", None),
                  ("format", frozenset(("raw", "txt", "text", "pdf", "json", "xml", "csv", "zip", "rss", "atom"))),
                  ("action", frozenset(("raw", "download"))))
"""Query parameters that ask for a raw or download view: ``(key, None)`` any value, ``(key, values)`` those."""
LEARNED_ERRORS = frozenset(("content-type", "too-large", "http-400", "http-401", "http-403", "http-404", "http-405",
                            "http-406", "http-410", "http-414", "http-415", "http-451"))
"""Fetch errors that count against a URL shape (see the module docstring)."""
_HTML_EXTENSIONS = frozenset(("html", "htm", "xhtml", "shtml", "php", "asp", "aspx", "jsp", "cgi", "pl"))
_DIGITS = re.compile(r"\d+")


def _extension(segment: str) -> str:
    base, dot, ext = segment.rpartition(".")
    return ext.lower() if dot and base and ext and len(ext) <= 10 else ""


def not_html_reason(url: str, parts: SplitResult | None = None) -> bool:
    """Whether the URL itself says it is not an HTML page (extension, source/raw/download view; the module
    docstring has the lists). ``parts``: ``urlsplit(url)`` when the caller has it."""
    parts = parts or urlsplit(url)
    segs = [s for s in parts.path.split("/") if s]
    if segs and not parts.path.endswith("/") and _extension(segs[-1]) in NON_HTML_EXTENSIONS:
        return True
    if any(s in NON_HTML_SEGMENTS for s in segs[:-1] if s) or (segs and segs[-1] in NON_HTML_SEGMENTS and
                                                             parts.path.endswith("/")):
        return True
    if parts.query:
        q = parse_qsl(parts.query, keep_blank_values=True)
        for key, values in NON_HTML_QUERY:
            for k, v in q:
                if k.lower() == key and (values is None or v.lower() in values):
                    return True
    return False


def failure_keys(url: str, parts: SplitResult | None = None) -> tuple[str, ...]:
    """The URL shapes a failure of ``url`` counts against: its origin, folder (digit runs as ``#``) and
    extension (``http://h/docs/v#/*.txt``), with its query's keys; in a folder two or more deep, its origin,
    top folder and extension too (``http://h/docs/**/*.txt``); and, when the extension is not an HTML one, its
    origin and extension (``http://h/**/*.txt``). ``parts``: ``urlsplit(url)`` when the caller has it."""
    parts = parts or urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path or "/"
    folder, _, last = path.rpartition("/")
    ext = _extension(last)
    dot_ext = f".{ext}" if ext else ""
    keys = "&".join(sorted({k for k, _ in parse_qsl(parts.query, keep_blank_values=True)}))
    out = [f"{origin}{_DIGITS.sub('#', folder)}/*{dot_ext}" + (f"?{keys}" if keys else "")]
    segs = folder.split("/")  # "", top, ...
    if len(segs) > 2:
        out.append(f"{origin}/{_DIGITS.sub('#', segs[1])}/**/*{dot_ext}")
    if ext and ext not in _HTML_EXTENSIONS:
        out.append(f"{origin}/**/*.{ext}")
    return tuple(out)


@dataclass(frozen=True)
class OfferRules:
    """Which discovered URLs a :class:`~gym_crawl.web.live.LiveWeb` offers (see the module docstring).

    :param not_html: refuse URLs that say they are not HTML pages.
    :param learn_after: refuse a URL shape after this many failures without a page (``0``: never learn).
    :param robots: hold an origin's pages until its robots.txt arrived, and refuse those it disallows (with a
        fetcher that obeys robots.txt).
    :param traps: apply the fetch policy's URL trap guards and its per-pattern and per-host caps at discovery.
    """

    not_html: bool = True
    learn_after: int = 3
    robots: bool = True
    traps: bool = True

    def __post_init__(self) -> None:
        for name in ("not_html", "robots", "traps"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"OfferRules.{name} must be True or False, got {getattr(self, name)!r}")
        if isinstance(self.learn_after, bool) or not isinstance(self.learn_after, int) or self.learn_after < 0:
            raise ValueError(f"OfferRules.learn_after must be an integer >= 0 (0: never learn), got "
                             f"{self.learn_after!r}")

    @classmethod
    def none(cls) -> OfferRules:
        """Offer every in-scope URL (the rules of a crawl recorded before offer rules existed)."""
        return cls(not_html=False, learn_after=0, robots=False, traps=False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OfferRules:
        return cls(**dataclass_kwargs(cls, d))


class RobotsRules:
    """One origin's robots.txt as the crawl obeys it: ``"allow"`` (no usable file), ``"disallow"`` (the
    origin refused, or the file could not be read whole), or ``"parse"`` with the file's ``text`` (parsed with
    ``protego``, as the fetcher does), and ``reason``, why (one of
    :data:`gym_crawl.web.fetcher.ROBOTS_REASONS`: ``"parsed"``, ``"unreachable:timeout"`` ...; ``""`` when
    unknown, as in a WARC recorded before reasons were). Built from what the fetcher read and rebuilt from the
    WARC record of it, so a replay decides the same."""

    __slots__ = ("agent", "kind", "reason", "text", "_rp")

    def __init__(self, kind: str, text: str | None, agent: str, reason: str = ""):
        if kind not in ("allow", "disallow", "parse"):
            raise ValueError(f"robots rules kind must be 'allow', 'disallow' or 'parse', got {kind!r}")
        self.kind, self.text, self.agent, self.reason = kind, text, agent, str(reason)
        self._rp: Any = None
        if kind == "parse":
            try:
                from protego import Protego
            except ImportError:  # pragma: no cover - protego comes with the web extra
                raise ImportError(f"robots.txt parsing needs protego: {install_command('web')}") from None
            self._rp = Protego.parse(text or "")

    def allows(self, url: str) -> bool:
        """Whether ``url`` (of this origin) may be fetched."""
        if self.kind != "parse":
            return self.kind == "allow"
        return bool(self._rp.can_fetch(url, self.agent))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "agent": self.agent, "reason": self.reason}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RobotsRules:
        return cls(str(d["kind"]), d.get("text"), str(d["agent"]), str(d.get("reason") or ""))


def origin_of(url: str, parts: SplitResult | None = None) -> str:
    """``scheme://netloc`` of a canonical URL."""
    parts = parts or urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
