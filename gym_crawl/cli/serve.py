"""``gym-crawl serve``: a corpus, folders of HTML or the misbehaving demo site as hosts on loopback until Ctrl-C
(its flags and its loop live with the test server, :mod:`gym_crawl.web.serve.server`)."""
from __future__ import annotations

from gym_crawl.web.serve.server import add_serve_arguments as add_arguments
from gym_crawl.web.serve.server import serve_command as run

__all__ = ["add_arguments", "run"]
