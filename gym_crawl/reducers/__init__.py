"""Action-set reducers (see :mod:`gym_crawl.reducers.base`)."""
from gym_crawl.reducers.base import (
                                     REDUCERS,
                                     FullFrontier,
                                     Outlinks,
                                     RandomSubset,
                                     Reducer,
                                     TopK,
                                     get_reducer,
                                     register_reducer,
)

__all__ = ["Reducer", "FullFrontier", "TopK", "Outlinks", "RandomSubset", "get_reducer", "register_reducer", "REDUCERS"]
