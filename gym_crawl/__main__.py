"""``python -m gym_crawl`` = the ``gym-crawl`` command."""
import sys

from gym_crawl.cli import main

sys.exit(main())
