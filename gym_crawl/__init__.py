"""gym_crawl: focused web crawling as a Gymnasium environment."""
__version__ = "0.1.0"
