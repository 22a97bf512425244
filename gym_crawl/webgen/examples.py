"""One small example web written in the format of every built-in corpus kind.

Each writer puts the same 12-page web (topics geology, cancer and poetry; a ``Geology`` page to seed
a crawl; every page with text, links and a ``subject.*`` label where the format has labels) into a
folder in one format, and returns the path :func:`gym_crawl.corpus.load_corpus` takes. They document
the formats by example and let tests iterate over every registered kind
(:meth:`gym_crawl.corpus.sources.CorpusKindRegistry.example`): a kind registered with an ``example``
writer is covered automatically.
"""
from __future__ import annotations

import bz2
import html
import os
from pathlib import Path
from urllib.parse import quote

from gym_crawl.corpus.core import Corpus, CorpusBuilder

__all__ = ["EXAMPLE_LINKS", "EXAMPLE_PAGES", "example_corpus", "write_compiled", "write_example_warc",
           "write_html_folder", "write_mediawiki_dump", "write_thesis_layout_example", "write_wikispeedia"]

EXAMPLE_PAGES: dict[str, tuple[str, str]] = {
    "Geology": ("geo", "Geology is the science of the solid earth, the rock it is made of and the mineral grains of "
                       "every rock. A volcano brings molten rock to the surface of the earth."),
    "Rock": ("geo", "A rock is made of one mineral or many. Geology studies how rock forms, from a volcano or "
                    "from sediment of a river."),
    "Mineral": ("geo", "A mineral is a natural solid with a crystal structure. Rock contains mineral grains; "
                       "geology names them."),
    "Volcano": ("geo", "A volcano erupts lava, ash and gas. Volcanic rock cools into basalt; geology maps every "
                       "volcano of the earth."),
    "Earth": ("geo", "The earth has a crust of rock over a mantle. Geology, the river and the volcano shape it."),
    "Cancer": ("med", "Cancer is a disease in which cells grow into a tumor. Medicine treats cancer with "
                      "therapy and surgery."),
    "Tumor": ("med", "A tumor is a mass of cells; a cancer tumor can spread. Doctors study each tumor."),
    "Poetry": ("art", "Poetry is literature in verse. A poem has rhyme and rhythm; poetry is read aloud."),
    "Poem": ("art", "A poem is a work of poetry, a verse with a stanza or a sonnet form."),
    "City": ("gen", "A city is a large town with people, a market and a river bridge."),
    "River": ("gen", "A river flows through a city to the sea and carries sediment that becomes rock."),
    "Music": ("gen", "Music is sound in time; a song can set a poem to music in a city hall."),
}
"""Title → (subject, text) of the example web."""

EXAMPLE_LINKS: list[tuple[str, str]] = [
    ("Geology", "Rock"), ("Geology", "Mineral"), ("Geology", "Volcano"), ("Geology", "Earth"),
    ("Rock", "Mineral"), ("Rock", "Volcano"), ("Rock", "River"), ("Rock", "Geology"),
    ("Mineral", "Rock"), ("Mineral", "Geology"), ("Volcano", "Rock"), ("Volcano", "Earth"),
    ("Earth", "Rock"), ("Earth", "River"), ("Earth", "Volcano"),
    ("Cancer", "Tumor"), ("Tumor", "Cancer"), ("Poetry", "Poem"), ("Poem", "Poetry"), ("Poem", "Music"),
    ("City", "River"), ("City", "Music"), ("River", "City"), ("River", "Rock"), ("Music", "Poem"),
    ("Music", "City"), ("Geology", "City"), ("Cancer", "City"), ("Poetry", "City"),
]
"""Directed links of the example web (each target is mentioned in its source's text or added as a link)."""

_TOPICS = {"geology": {"seeds": ["Geology"], "label": "subject.geo", "words": ["geology"]},
           "cancer": {"seeds": ["Cancer"], "label": "subject.med", "words": ["cancer"]},
           "poetry": {"seeds": ["Poetry"], "label": "subject.art", "words": ["poetry"]}}


def _targets(title: str) -> list[str]:
    return [d for s, d in EXAMPLE_LINKS if s == title]


def example_corpus(name: str = "example") -> Corpus:
    """The example web as an in-memory :class:`Corpus` (with ``meta["topics"]``)."""
    b = CorpusBuilder(name=name, keep_text=True, meta={"topics": _TOPICS})
    ids = {t: b.add_page(t, text, domain=f"{subj}.example.org", labels=[f"subject.{subj}"])
           for t, (subj, text) in EXAMPLE_PAGES.items()}
    for s, d in EXAMPLE_LINKS:
        b.add_link(ids[s], ids[d], anchor=d, context=EXAMPLE_PAGES[s][1][:150])
    return b.build()


def write_compiled(folder: str | os.PathLike) -> Path:
    """A compiled corpus directory (``manifest.json`` + ``.npy`` files)."""
    return example_corpus().save(folder)


def write_thesis_layout_example(folder: str | os.PathLike) -> Path:
    """The thesis' ``xml/ + index.txt + links.txt`` layout."""
    from gym_crawl.corpus.thesis_layout import write_thesis_layout

    return write_thesis_layout(example_corpus(), folder)


def write_html_folder(folder: str | os.PathLike) -> Path:
    """A folder of ``<Title>.html`` files linking each other with ``<a href>``."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    for t, (_subj, text) in EXAMPLE_PAGES.items():
        links = " ".join(f'See <a href="{quote(d)}.html">{html.escape(d)}</a>.' for d in _targets(t))
        (root / f"{t}.html").write_text(f"<html><head><title>{html.escape(t)}</title></head><body>"
                                        f"<h1>{html.escape(t)}</h1><p>{html.escape(text)}</p><p>{links}</p>"
                                        f"</body></html>", encoding="utf-8")
    return root


def write_mediawiki_dump(folder: str | os.PathLike) -> Path:
    """A bz2 MediaWiki XML dump (``examplewiki-pages-articles.xml.bz2``) with ``[[links]]`` and categories."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    pages = []
    for i, (t, (subj, text)) in enumerate(EXAMPLE_PAGES.items(), 1):
        wikitext = text + " " + " ".join(f"See [[{d}]]." for d in _targets(t)) + f" [[Category:{subj}]]"
        pages.append(f"<page><title>{html.escape(t)}</title><ns>0</ns><id>{i}</id><revision><id>{100 + i}</id>"
                     f"<text>{html.escape(wikitext)}</text></revision></page>")
    xml = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><siteinfo><sitename>Example</sitename>'
           "<dbname>examplewiki</dbname><base>https://example.org/wiki/Geology</base><case>first-letter</case>"
           '<namespaces><namespace key="0" /><namespace key="14">Category</namespace></namespaces></siteinfo>'
           + "".join(pages) + "</mediawiki>")
    out = root / "examplewiki-pages-articles.xml.bz2"
    out.write_bytes(bz2.compress(xml.encode("utf-8")))
    return out


def write_wikispeedia(folder: str | os.PathLike) -> Path:
    """Wikispeedia's extracted layout: ``articles.tsv``, ``links.tsv``, ``categories.tsv`` and
    ``plaintext_articles/<Title>.txt`` in the Wikipedia-for-Schools format."""
    root = Path(folder)
    (root / "plaintext_articles").mkdir(parents=True, exist_ok=True)
    head = "# example Wikispeedia data\n\n"
    (root / "articles.tsv").write_text(head + "".join(quote(t) + "\n" for t in EXAMPLE_PAGES), encoding="utf-8")
    (root / "links.tsv").write_text(head + "".join(f"{quote(s)}\t{quote(d)}\n" for s, d in EXAMPLE_LINKS),
                                    encoding="utf-8")
    (root / "categories.tsv").write_text(head + "".join(f"{quote(t)}\tsubject.{subj}\n"
                                                        for t, (subj, _) in EXAMPLE_PAGES.items()), encoding="utf-8")
    for t, (subj, text) in EXAMPLE_PAGES.items():
        body = text + " " + " ".join(f"See {d}." for d in _targets(t))
        (root / "plaintext_articles" / f"{quote(t)}.txt").write_text(
            f"   #copyright\n\n{t}\n\n2007 Schools Wikipedia Selection. Related subjects: {subj}\n\n   {body}\n\n"
            f"   Retrieved from \" http://en.wikipedia.org/wiki/{t}\"\n", encoding="utf-8")
    return root


def write_example_warc(folder: str | os.PathLike) -> Path:
    """A gzipped WARC of a crawl of the example web (``example.warc.gz``): each page a ``request`` +
    ``response`` pair rendered by :func:`~gym_crawl.web.html_extract.render_page` at
    ``https://<subject>.example.org/wiki/<Title>``, plus a ``warcinfo`` record. Needs the ``web`` extra
    (warcio)."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from gym_crawl.web.html_extract import render_page

    def url(t: str) -> str:
        return f"https://{EXAMPLE_PAGES[t][0]}.example.org/wiki/{t}"

    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    out = root / "example.warc.gz"
    with open(out, "wb") as f:
        w = WARCWriter(f, gzip=True)
        w.write_record(w.create_warcinfo_record(out.name, {"software": "gym_crawl example"}))
        for t, (_subj, text) in EXAMPLE_PAGES.items():
            body = render_page(t, text, [(url(d), d) for d in _targets(t)])
            req = StatusAndHeaders(f"GET /wiki/{t} HTTP/1.1", [("Host", f"{EXAMPLE_PAGES[t][0]}.example.org")],
                                   is_http_request=True)
            w.write_record(w.create_warc_record(url(t), "request", http_headers=req))
            resp = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                               ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url(t), "response", payload=io.BytesIO(body), http_headers=resp))
    return out
