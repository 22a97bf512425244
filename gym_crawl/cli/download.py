"""``gym-crawl download``: a real corpus into the cache (``$GYM_CRAWL_DATA``), or a local copy registered."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from gym_crawl.corpus import load_corpus
from gym_crawl.corpus.download import download, register_local_copy
from gym_crawl.corpus.mediawiki import download_simplewiki
from gym_crawl.corpus.wikispeedia import load_wikispeedia

__all__ = ["add_arguments", "run"]

log = logging.getLogger("gym_crawl")


def add_arguments(d: argparse.ArgumentParser) -> None:
    """The arguments of ``gym-crawl download``."""
    d.add_argument("name", help="wikispeedia (also the source of the general English text model of live and WARC "
                                "webs) | simplewiki")
    d.add_argument("--dest", default=None, help="folder (default: the cache)")
    d.add_argument("--date", default="latest", help="dump date for simplewiki (YYYYMMDD or latest)")
    d.add_argument("--from", dest="from_path", default=None, metavar="PATH",
                   help="no download: register this local folder or archive (checked by loading it) as the "
                        "dataset, so --corpus NAME and `corpus info NAME` use it (env var: GYM_CRAWL_<NAME>)")


def run(args: argparse.Namespace) -> int:
    """``gym-crawl download``: fetch a dataset into the cache, or register a local copy (``--from``)."""
    if args.from_path:
        def check(p: Path) -> Any:  # load (and compile into the cache) with the dataset's own loader
            if args.name == "wikispeedia":
                return load_wikispeedia(p)
            return load_corpus(p)

        path = register_local_copy(args.name, args.from_path, check=check)
        print(path)
        log.info("%s: using the local copy %s (--corpus %s, `corpus info %s`)", args.name, path, args.name,
                 args.name)
        return 0
    dest = Path(args.dest) if args.dest else None
    if args.name == "simplewiki":
        print(download_simplewiki(args.date, dest))
        return 0
    print(download(args.name, dest))
    return 0
