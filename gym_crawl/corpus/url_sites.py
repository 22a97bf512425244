"""Split a single-site corpus into sites decided by the URL alone: :func:`url_hash_domains`."""
from __future__ import annotations

import dataclasses
import math
import zlib

import numpy as np

from gym_crawl.corpus.core import Corpus, StringTable

__all__ = ["url_hash_domains"]


def url_hash_domains(corpus: Corpus, pages_per_domain: int = 5) -> Corpus:
    """A copy of a single-site corpus split into URL-hash sites: ``crc32(title) mod n_sites``.

    Fair by construction (the URL alone decides the site). Arrays are shared with ``corpus``.

    :param corpus: the corpus to split (its first domain names the sites: ``h<k>.<domain>``).
    :param pages_per_domain: mean pages per site; ``n_sites = ceil(n_pages / pages_per_domain)``.
    """
    if isinstance(pages_per_domain, bool) or not isinstance(pages_per_domain, int) or pages_per_domain < 1:
        raise ValueError(f"pages_per_domain must be an int >= 1, got {pages_per_domain!r}")
    n = corpus.n_pages
    n_dom = max(1, math.ceil(n / pages_per_domain))
    base = corpus.domains[0] if len(corpus.domains) else "site"
    dom = np.fromiter((zlib.crc32(t.encode("utf-8")) % n_dom for t in corpus.titles), np.int32, count=n)
    meta = dict(corpus.meta)
    meta["name"] = f"{corpus.name}-urlhash{pages_per_domain}"
    meta["domain_definition"] = (f"URL-hash sites: page domain = crc32(title) mod {n_dom} (~{pages_per_domain} pages "
                                 f"per site, named h<k>.{base}); depends on the URL only")
    return dataclasses.replace(corpus, page_domain=dom, domains=StringTable.from_strings(
        [f"h{k:05d}.{base}" for k in range(n_dom)]), meta=meta, path=None)
