"""Canonical URLs, hosts and URL words of the web corpora (gym_crawl.web.urls)."""
from __future__ import annotations

import pytest

from gym_crawl.web.urls import canonical_url, url_host, url_text

CASES = [
    # (url, base, canonical)
    ("HTTP://Example.COM:80/a/./b/../c?b=2&a=1#frag", None, "http://example.com/a/c?a=1&b=2"),
    ("https://example.com:443", None, "https://example.com/"),
    ("https://example.com", None, "https://example.com/"),
    ("HTTPS://A.org:8443", None, "https://a.org:8443/"),
    ("http://a.org:443/x", None, "http://a.org:443/x"),  # 443 is not http's default
    ("http://bücher.de/ä ö?q=a b", None, "http://xn--bcher-kva.de/%C3%A4%20%C3%B6?q=a%20b"),
    ("http://example.com/%7ejoe/%7Efoo", None, "http://example.com/~joe/~foo"),
    ("http://example.com/%e4%b8%ad", None, "http://example.com/%E4%B8%AD"),
    ("http://example.com/a%2fb", None, "http://example.com/a%2Fb"),  # an encoded slash stays encoded
    ("http://example.com/a/../../b", None, "http://example.com/b"),
    ("http://example.com/?", None, "http://example.com/"),
    ("http://example.com/p?a=1&a=0&b", None, "http://example.com/p?a=0&a=1&b="),
    ("http://user:pw@Ex.com./x", None, "http://ex.com/x"),
    ("http://[::1]:80/x", None, "http://[::1]/x"),
    (" \thttp://a.org/p\n ", None, "http://a.org/p"),
    ("http://a.org/p\n/q", None, "http://a.org/p/q"),
    ("../x y.html#f", "http://h.org/a/b/c.html", "http://h.org/a/x%20y.html"),
    ("//cdn.org/x", "https://a.org/", "https://cdn.org/x"),
    ("?q=1", "http://a.org/p/", "http://a.org/p/?q=1"),
    ("#top", "http://a.org/p", "http://a.org/p"),
    ("", "http://a.org/p#x", "http://a.org/p"),
    ("/abs", "http://a.org/deep/er/", "http://a.org/abs"),
    ("http://other.org/", "http://a.org/", "http://other.org/"),
    # not http(s) / not absolute / not valid → None
    ("mailto:a@b.org", None, None),
    ("javascript:void(0)", "http://a.org/", None),
    ("data:text/html,hi", None, None),
    ("ftp://a.org/", None, None),
    ("tel:+123", "http://a.org/", None),
    ("x.html", None, None),
    ("http:///x", None, None),
    ("http://a.org:99999/", None, None),
    ("http://a.org:port/", None, None),
    ("http://[::1/", None, None),
]


@pytest.mark.parametrize("url,base,expected", CASES)
def test_canonical_url_table(url: str, base: str | None, expected: str | None) -> None:
    assert canonical_url(url, base) == expected
    if expected is not None:
        assert canonical_url(expected) == expected  # idempotent


def test_query_parameters_are_sorted_so_orders_meet() -> None:
    assert canonical_url("http://a.org/s?z=1&y=2&x=3") == canonical_url("http://a.org/s?x=3&z=1&y=2")


def test_canonical_url_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="url must be a str"):
        canonical_url(b"http://a.org/")  # type: ignore[arg-type]


@pytest.mark.parametrize("url,host", [
    ("http://example.com/a", "example.com"),
    ("https://Example.com:8443/a", "example.com:8443"),
    ("https://example.com:443/a", "example.com"),
    ("http://127.0.0.1:8000/", "127.0.0.1:8000"),
    ("http://[::1]:81/", "[::1]:81"),
])
def test_url_host(url: str, host: str) -> None:
    assert url_host(url) == host


def test_url_host_without_host_is_an_error_naming_the_url() -> None:
    with pytest.raises(ValueError, match="'/relative' has no host"):
        url_host("/relative")


@pytest.mark.parametrize("url,words", [
    ("https://www.example.org/wiki/Plate_tectonics.html", "example org wiki Plate tectonics"),
    ("http://a.org/docs/my-page/index.htm?x=secret#frag", "a org docs my page"),
    ("http://xn--bcher-kva.de/%C3%A4%20b", "bücher de ä b"),
    ("http://127.0.0.1:8000/", "127 0 0 1"),
])
def test_url_text(url: str, words: str) -> None:
    assert url_text(url) == words


_SEGMENTS = ["a", "b.html", "..", ".", "x y", "%7e", "q:r", "", "é"]


def _join(parts: list[str]) -> str:
    return "/".join(parts)


@pytest.mark.parametrize("seed", range(4))
def test_relative_links_cached_by_folder_resolve_as_against_the_page(seed: int) -> None:
    """canonical_url caches a relative path against its base's folder; the result is the uncached one's."""
    import random

    from gym_crawl.web.urls import canonicalize

    rng = random.Random(seed)
    pieces = ["?", "#", "/", "\\", ":", "\t", " ", "%", "&", "="]
    for _ in range(400):
        base = "http://Site.test/" + _join(rng.choices(_SEGMENTS, k=rng.randint(0, 3)))
        if rng.random() < 0.3:
            base += "?" + rng.choice(["k=v", "a/b", ""]) + rng.choice(["", "#frag/x"])
        href = _join(rng.choices(_SEGMENTS, k=rng.randint(1, 3)))
        if rng.random() < 0.5:
            i = rng.randint(0, len(href))
            href = href[:i] + rng.choice(pieces) + href[i:]
        assert canonical_url(href, base) == canonicalize(href, base), (href, base)


@pytest.mark.parametrize("seed", range(4))
def test_links_with_fragments_cached_without_them_resolve_as_written(seed: int) -> None:
    """canonical_url caches a URL without its fragment; the result is the uncached one's of the URL as written."""
    import random

    from gym_crawl.web.urls import canonicalize

    rng = random.Random(seed)
    pieces = ["?", "#", "/", "\\", ":", "\t", " ", "%", "&", "=", "..", ".", "\n", "#x y", "#", "%41"]
    for _ in range(400):
        base = "http://Site.test/" + _join(rng.choices(_SEGMENTS, k=rng.randint(0, 3)))
        if rng.random() < 0.3:
            base += "?" + rng.choice(["k=v", "a/b", ""]) + rng.choice(["", "#frag/x"])
        path = _join(rng.choices(_SEGMENTS, k=rng.randint(0, 3)))
        for _ in range(rng.randint(1, 3)):
            i = rng.randint(0, len(path))
            path = path[:i] + rng.choice(pieces) + path[i:]
        href = rng.choice(["", "http://Other.test/", "//cdn.test/", "/", "../"]) + path + \
            rng.choice(["#top", "#", "#a#b", "", " #s", "#s "])
        absolute = href.strip().lower().startswith(("http://", "https://"))  # cached without its base, too
        assert canonical_url(href, base) == canonicalize(href, None if absolute else base), (href, base)


@pytest.mark.parametrize("seed", range(4))
def test_plain_relative_paths_against_a_canonical_folder_resolve_as_canonicalised(seed: int) -> None:
    """A relative path of unreserved characters is appended to its canonical folder without the canonicaliser;
    the result is the canonicaliser's, for such paths and for their near misses (dots, escapes, reserved
    characters, case in the host, a non-canonical folder)."""
    import random

    from gym_crawl.web.urls import canonicalize

    rng = random.Random(seed)
    chars = "abcXYZ019_-~." + "/" * 3
    odd = ["..", ".", "%7e", "%41", "%2F", " ", "?", "&", "=", "+", "é", ":", "@", "!", "$", "'", "(", "*", ",", ";",
           "//", "A"]
    folders = ["http://site.test/", "http://site.test/a/b/", "https://Site.test/a/", "http://site.test:80/x/",
               "http://site.test/%7Ex/", "http://site.test/a%20b/", "http://site.test/é/", "http://site.test/a/./b/"]
    for _ in range(600):
        href = "".join(rng.choices(chars, k=rng.randint(1, 12)))
        if rng.random() < 0.3:
            i = rng.randint(0, len(href))
            href = href[:i] + rng.choice(odd) + href[i:]
        base = rng.choice(folders) + rng.choice(["", "page.html", "p?q=1"])
        assert canonical_url(href, base) == canonicalize(href, base), (href, base)


@pytest.mark.parametrize("seed", range(3))
def test_canonical_urls_is_canonical_url_per_link(seed: int) -> None:
    """The links of a page at once: each the same as :func:`canonical_url` of it, whatever the URLs and bases seen
    before it (the remembered forms and results are shared across pages and bases)."""
    import random

    from gym_crawl.web import urls
    from gym_crawl.web.urls import canonical_urls

    rng = random.Random(seed)
    pieces = ["a", "b.html", "/", "../", "./", "?q=1", "#top", "#", " ", "\t", "\n", "%7e", "é", "x y", ":", "//",
              "\\", "http://Other.test/", "HTTPS://a.test:443/", "mailto:x@y", "javascript:0", ".."]
    bases = ["http://site.test/", "http://site.test/a/b/page.html", "http://site.test/a/b/other.html?x=1",
             "https://Site.test/a/", "http://site.test/a\n/b.html", "http://site.test/p?q=/x/", "http://site.test",
             "http://site.test/%7Ex/y", "http://h.test/" + "d/" * 3000, None]
    hrefs = [""] + [case[0] for case in CASES]
    for _ in range(300):
        hrefs.append("".join(rng.choices(pieces, k=rng.randint(1, 6))))
    hrefs.append("a" * (urls.MAX_URL_CHARS + 1))
    hrefs.append("x#" + "f" * urls.MAX_URL_CHARS)
    for _ in range(40):
        base = rng.choice(bases)
        page = rng.sample(hrefs, k=60)
        assert canonical_urls(page, base) == [canonical_url(h, base) for h in page], base
    assert canonical_urls(["a"], "http://s.test/" + "x" * urls.MAX_URL_CHARS) == [None]
    with pytest.raises(TypeError, match="url must be a str"):
        canonical_urls([b"http://a.org/"], None)  # type: ignore[list-item]


@pytest.mark.parametrize("seed", range(4))
def test_plain_absolute_urls_are_their_own_canonical_form(seed: int) -> None:
    """An absolute URL of a lowercase host and a path of unreserved characters is returned as it is (with ``/`` for
    an empty path) without the canonicaliser: the same as the canonicaliser's result, for such URLs and their near
    misses (case, ports, dots, escapes, IDNA labels, queries, trailing dots)."""
    import random

    from gym_crawl.web.urls import canonicalize

    rng = random.Random(seed)
    hosts = ["a.org", "docs.local", "x-y.example.com", "127.0.0.1", "localhost", "A.org", "a.org.", "a..org", "-a.org",
             "a-.org", "xn--bcher-kva.de", "xn--zz.de", "a_b.org", "a.org:80", "a.org:8080", "a.org:443", "é.org",
             "a" * 63 + ".org", "a" * 64 + ".org", "1.2.3", "[::1]", "user@a.org"]
    chars = "abcXYZ019_-~." + "/" * 4
    odd = ["..", ".", "%7e", "%41", "%2F", " ", "?", "&", "=", "+", "é", ":", "@", "!", "$", "'", "(", "*", ",", ";",
           "//", "#", "\\\\"]
    for _ in range(800):
        path = "".join(rng.choices(chars, k=rng.randint(0, 14)))
        if path and rng.random() < 0.7:
            path = "/" + path
        if rng.random() < 0.3:
            i = rng.randint(0, len(path))
            path = path[:i] + rng.choice(odd) + path[i:]
        url = rng.choice(["http://", "https://", "HTTP://", "Https://"]) + rng.choice(hosts) + path
        assert canonical_url(url) == canonicalize(url, None), url
        assert canonical_url(url, "http://base.test/x/") == canonicalize(url, None), url
