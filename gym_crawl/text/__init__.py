"""Text models over a corpus: tf-idf (IDF from a held-out page sample) and word vectors.

:class:`TextModel` bundles both and offers the vectorized relevance primitives
the layers above use: cosine of page / link-text vectors against query vectors,
computed only for the pages or links asked for (fetched pages, discovered links). A live web and a web
(WARC) corpus default to the general English model (:mod:`gym_crawl.text.general`).
"""
from gym_crawl.text.model import TextModel, general_text_model, get_text_model
from gym_crawl.text.vectors import load_word_vectors, train_word_vectors

__all__ = ["TextModel", "general_text_model", "get_text_model", "load_word_vectors", "train_word_vectors"]
