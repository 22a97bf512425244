"""Topics, relevance scoring and reward schemes."""
from gym_crawl.relevance.rewards import REWARD_SCHEMES, REWARDS, RewardScheme, get_reward_scheme
from gym_crawl.relevance.scorer import LinkScores, PageScores, TopicScorer
from gym_crawl.relevance.topic import Topic, resolve_topic

__all__ = ["Topic", "resolve_topic", "TopicScorer", "PageScores", "LinkScores",
           "RewardScheme", "REWARD_SCHEMES", "REWARDS", "get_reward_scheme"]
