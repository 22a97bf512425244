"""Helpers several test modules share (imported as ``tests.helpers``)."""
from __future__ import annotations

from typing import Any


def fetch_now(web: Any, page: int) -> str:
    """Fetch ``page`` of a live web now, as the env does (request it, take arrivals until it is among them);
    returns its fetch error (``""`` for a page)."""
    if web.is_fetched(page):
        return web.fetch_error(page)
    web.request(page)
    while page not in web.arrived(True).pages:
        pass
    return web.fetch_error(page)
