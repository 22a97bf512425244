# Local experiment: nothing is mapped up front (gym_crawl._memory.populate gets a zero budget by default).
import gym_crawl._memory as _m

_m.populate_budget = lambda: 0
