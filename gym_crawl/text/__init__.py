"""Text models over a corpus: tf-idf (IDF from a held-out page sample) and word vectors.

:class:`TextModel` bundles both and offers the vectorized relevance primitives
the layers above use: cosine of page / link-text vectors against query vectors,
computed only for the pages or links asked for (fetched pages, discovered links).
"""
from gym_crawl.text.model import TextModel, get_text_model
from gym_crawl.text.vectors import load_word_vectors, train_word_vectors

__all__ = ["TextModel", "get_text_model", "load_word_vectors", "train_word_vectors"]
