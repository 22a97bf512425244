"""Example pages a user gives a live crawl (``--examples`` / ``--counter-examples``): read from files, folders or
WARC archives, or named by URL for the crawl to fetch.

A spec is one of:

* an ``http(s)://`` URL — not read here: :func:`read_example_pages` returns it in
  :attr:`ExampleSpecs.urls`, and the crawl fetches it with its own polite fetcher
  (:meth:`gym_crawl.web.LiveWeb.fetch_example`), counted in its budget;
* a WARC file (``.warc``, ``.warc.gz``): every HTML ``response`` record with status 200 is one example (its
  main text, by the package's HTML extractor, as a crawled page's);
* an HTML file (``.html``, ``.htm``, ``.xhtml``, or any file whose first bytes are an HTML tag): its main text;
* any other file: UTF-8 plain text, one example;
* a folder: every file directly inside it with one of the extensions above or ``.txt``, in name order.

Every refusal is one :class:`ExampleError` line naming the flag, the spec and what is wrong: a missing file, a
file or page with no words, a file that is not UTF-8 text, a WARC that cannot be read or holds no HTML page.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ExampleError", "ExamplePage", "ExampleSpecs", "example_from_fetch", "read_example_pages"]

_HTML_SUFFIXES = (".html", ".htm", ".xhtml")
_WARC_SUFFIXES = (".warc", ".warc.gz")
_FOLDER_SUFFIXES = _HTML_SUFFIXES + _WARC_SUFFIXES + (".txt",)
_HTML_START = re.compile(rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body|title|meta|div|p|main|article)\b",
                         re.IGNORECASE | re.DOTALL)
#: the largest example file read (bytes): the fetcher's page cap is 2 MiB, an example is a page
MAX_EXAMPLE_BYTES = 8 << 20


class ExampleError(ValueError):
    """An example spec that cannot give a page (the message is one line naming the flag and the spec)."""


@dataclass(frozen=True)
class ExamplePage:
    """One example page: where it came from (a path, ``path#record-url`` for a WARC record, or a URL), its title
    and its main text."""

    source: str
    title: str
    text: str


@dataclass
class ExampleSpecs:
    """What :func:`read_example_pages` found: the pages read from files, and the URLs left for the crawl to fetch
    (canonical, in the order given)."""

    pages: list[ExamplePage] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)


def _has_words(text: str) -> bool:
    from gym_crawl.tokenize import tokenize

    return bool(tokenize(text))


def _page_from_html(body: bytes, source: str, url: str, content_type: str | None = None) -> ExamplePage:
    from gym_crawl.web.html_extract import extract_page

    page = extract_page(body, url, content_type)
    text = page.text if _has_words(page.text) else ""
    return ExamplePage(source, page.title, text)


def _file_url(path: Path) -> str:
    """An ``http`` URL standing for a local file (the extractor resolves links against an absolute http(s) URL;
    an example's links are not used)."""
    return "http://example-file.invalid/" + path.name


def _read_warc(path: Path, flag: str) -> list[ExamplePage]:
    try:
        from warcio.archiveiterator import ArchiveIterator
        from warcio.exceptions import ArchiveLoadFailed
    except ImportError:  # pragma: no cover - warcio comes with the web extra
        raise ExampleError(f"{flag} {path}: reading WARC files needs warcio: pip install 'gym-crawl[web]'") from None
    out: list[ExamplePage] = []
    try:
        with open(path, "rb") as f:
            head = f.read(2)
            f.seek(0)
            if head == b"\x1f\x8b":
                import gzip

                with gzip.open(f) as g:
                    head = g.read(5)
                f.seek(0)
            if not head.startswith(b"WARC/"[:len(head)]) or len(head) < 5:
                raise ValueError("it does not start with a WARC record")
            for rec in ArchiveIterator(f):
                if rec.rec_type != "response" or rec.http_headers is None:
                    continue
                status = rec.http_headers.get_statuscode()
                ctype = rec.http_headers.get_header("Content-Type") or ""
                if status != "200" or ctype.split(";")[0].strip().lower() not in ("text/html",
                                                                                  "application/xhtml+xml"):
                    continue
                url = rec.rec_headers.get_header("WARC-Target-URI") or _file_url(path)
                body = rec.content_stream().read(MAX_EXAMPLE_BYTES + 1)
                if not url.startswith(("http://", "https://")):
                    url = _file_url(path)
                page = _page_from_html(body[:MAX_EXAMPLE_BYTES], f"{path}#{url}", url, ctype)
                if page.text:
                    out.append(page)
    except (ArchiveLoadFailed, OSError, EOFError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ExampleError(f"{flag} {path}: not a readable WARC file ({first})") from None
    if not out:
        raise ExampleError(f"{flag} {path}: the WARC file holds no HTML page with text (status 200, text/html)")
    return out


def _read_file(path: Path, flag: str) -> list[ExamplePage]:
    name = path.name.lower()
    if name.endswith(_WARC_SUFFIXES):
        return _read_warc(path, flag)
    try:
        with open(path, "rb") as f:
            body = f.read(MAX_EXAMPLE_BYTES + 1)
    except OSError as e:
        raise ExampleError(f"{flag} {path}: cannot be read ({e.strerror or e})") from None
    if len(body) > MAX_EXAMPLE_BYTES:
        raise ExampleError(f"{flag} {path}: larger than {MAX_EXAMPLE_BYTES >> 20} MiB; an example is one page")
    if name.endswith(_HTML_SUFFIXES) or _HTML_START.match(body[:4096]):
        page = _page_from_html(body, str(path), _file_url(path))
    else:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ExampleError(f"{flag} {path}: not UTF-8 text or HTML (byte {e.start}); give an HTML, text or WARC "
                               f"file") from None
        page = ExamplePage(str(path), path.stem, text if _has_words(text) else "")
    if not page.text:
        raise ExampleError(f"{flag} {path}: no words in it (an example needs the text of a page)")
    return [page]


def read_example_pages(specs: Sequence[str | os.PathLike], flag: str = "--examples") -> ExampleSpecs:
    """Read the example pages of ``specs`` (see the module docstring); URLs are returned, not fetched.

    :param specs: paths (files, folders, WARC archives) and ``http(s)`` URLs.
    :param flag: the option named in error messages (``--examples``, ``--counter-examples``, or a keyword).
    :raises ExampleError: one line naming ``flag`` and the spec at fault.
    """
    from gym_crawl.web.urls import canonical_url

    out = ExampleSpecs()
    for spec in specs:
        s = os.fspath(spec)
        if not isinstance(s, str) or not s.strip():
            raise ExampleError(f"{flag}: an empty example (give a file, folder, WARC or http(s) URL)")
        if s.startswith(("http://", "https://")):
            u = canonical_url(s)
            if u is None:
                raise ExampleError(f"{flag} {s}: not a URL the crawler can fetch (an http(s) URL with a host)")
            if u not in out.urls:
                out.urls.append(u)
            continue
        p = Path(s)
        if p.is_dir():
            files = sorted(q for q in p.iterdir() if q.is_file() and q.name.lower().endswith(_FOLDER_SUFFIXES))
            if not files:
                raise ExampleError(f"{flag} {p}: the folder holds no example file ({', '.join(_FOLDER_SUFFIXES)})")
            for q in files:
                out.pages.extend(_read_file(q, flag))
        elif p.is_file():
            out.pages.extend(_read_file(p, flag))
        elif "://" in s:
            raise ExampleError(f"{flag} {s}: only http(s) URLs are fetched; give a file, folder, WARC or http(s) URL")
        else:
            raise ExampleError(f"{flag} {s}: no such file or folder")
    return out


def example_from_fetch(result: object, flag: str = "--examples") -> ExamplePage:
    """The example page of a fetch ``result`` (a :class:`~gym_crawl.web.result.FetchResult`): its main text;
    :class:`ExampleError` naming the URL when the fetch failed or the page has no words."""
    url = str(getattr(result, "url", ""))
    err = getattr(result, "error", None)
    if err:
        raise ExampleError(f"{flag} {url}: the fetch failed ({err})")
    ctype = next((v for k, v in (getattr(result, "headers", None) or ()) if k.lower() == "content-type"),
                 getattr(result, "content_type", None))
    final = getattr(result, "final_url", None) or url
    page = _page_from_html(getattr(result, "body", b"") or b"", url, final, ctype)
    if not page.text:
        raise ExampleError(f"{flag} {url}: the fetched page has no words")
    return page
