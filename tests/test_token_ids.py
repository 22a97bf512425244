"""The compiled chunk vocabulary (gym_crawl.web.token_ids) against the Python tokenizer and a dict of first ids."""
from __future__ import annotations

import glob
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_crawl.tokenize import STOPWORDS, TOKEN_RE, tokenize
from gym_crawl.web.token_ids import ChunkVocabulary, letter_bits


def _reference(batches: list[list[str]]) -> tuple[list[tuple[list[int], list[int], list[int], list[int]]], list[str]]:
    """What :meth:`ChunkVocabulary.ids` should give for each batch, and the words by id: the Python tokenizer's
    tokens, each new one taking the next id."""
    vocab: dict[str, int] = {}
    out = []
    for texts in batches:
        per = [[vocab.setdefault(t, len(vocab)) for t in tokenize(x)] for x in texts]
        bag = Counter(per[0]) if per else Counter()
        out.append(([i for p in per for i in p], [len(p) for p in per], list(bag), list(bag.values())))
    return out, sorted(vocab, key=vocab.__getitem__)


def _check(batches: list[list[str]]) -> None:
    want, words = _reference(batches)
    v = ChunkVocabulary()
    for texts, (ids, counts, terms, tally) in zip(batches, want):
        got = v.ids(texts)
        assert got[0].tolist() == ids, texts
        assert got[1].tolist() == counts
        assert got[2].tolist() == terms and got[3].tolist() == tally
    assert v.words() == words and len(v) == len(words)


_PIECES = st.sampled_from([
    " ", "\x00", "\n", "a", "Ab", "the", "THE", "and", "x", "zz", "İ", "İstanbul", "ı", "Σ", "ΟΔΟΣ", "σ", "ς", "ΑΣ.",
    "Σ'Α", "ß", "ẞ", "é", "É", "e\u0301", "\u0345", "ǅ", "Ⅻ", "ⅻ", "²", "½", "1", "٣", "_", "-", "'", "日本語",
    "\u3000",
    "\ud800", "\U0001d400\U0001d401", "\U00010400", "ﬁ", "K", "Ω", "postgresql", "documentation", "a" * 13, "b" * 14,
    "z" * 40, "don't", "co-op", "\u00ad", "\u200b"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.lists(_PIECES, max_size=30).map("".join), max_size=6), max_size=5))
def test_ids_are_the_python_tokenizer_numbered_in_order(batches: list[list[str]]) -> None:
    _check(batches)


def test_every_code_point_is_read_as_the_tokenizer_reads_it() -> None:
    bits = letter_bits()
    rng = random.Random(7)
    sample = [chr(c) for c in range(0x110000) if rng.random() < 0.02]
    for c in sample:  # the bit is TOKEN_RE's class
        assert bool((bits[ord(c) >> 3] >> (ord(c) & 7)) & 1) == bool(TOKEN_RE.fullmatch(c)), hex(ord(c))
    texts = ["".join(rng.choice(sample) for _ in range(rng.randrange(200))) for _ in range(400)]
    _check([texts[k:k + 20] for k in range(0, len(texts), 20)])


def test_the_lowercase_tables_are_str_lower_of_each_character_alone() -> None:
    from gym_crawl.web.token_ids import LOWER_LIMIT, lower_table

    blocks, deltas = lower_table()
    for c in range(0x110000):
        want = chr(c).lower()
        if c >= LOWER_LIMIT:
            assert want == chr(c), hex(c)
        elif c not in (0x130, 0x3A3):
            assert want == chr(c + int(deltas[int(blocks[c >> 8]) * 256 + (c & 255)])), hex(c)


def test_empty_long_and_huge_tokens() -> None:
    huge = "Q" * 100_000  # one token longer than the piece a text is read in
    long_text = " ".join(f"w{chr(97 + k % 26)}{chr(97 + k // 26 % 26)}x{k}" for k in range(20_000))
    _check([[], [""], ["", "", ""], [huge, huge + "é", "é" + huge], [long_text], ["a" * 13 + " " + "a" * 14,
                                                                                 "A" * 14 + " " + "a" * 13]])
    v = ChunkVocabulary()
    ids, counts, terms, tally = v.ids([])
    assert ids.size == counts.size == terms.size == tally.size == 0 and len(v) == 0 and v.words() == []


def test_final_sigma_and_dotted_capital_i_as_each_text_lowercases_them() -> None:
    # str.lower gives a capital sigma at the end of a word the final form: texts joined must not change that
    _check([["ΟΔΟΣ", "ΣΑ", "ΑΣ\x00Α", "Σ"], ["İİ ΑΣΑ", "ΑΣ", "\x00Σ\x00"], ["ΑΣ'", "'Σ", "Σ\u0301"]])
    v = ChunkVocabulary()
    v.ids(["ΟΔΟΣ", "ΟΔΟΣΑ"])
    assert v.words() == ["οδος", "οδοσα"]


def test_stop_words_get_no_id() -> None:
    v = ChunkVocabulary()
    ids, counts, _, _ = v.ids([" ".join(sorted(STOPWORDS)).upper(), "the crawler"])
    assert counts.tolist() == [0, 1] and v.words() == ["crawler"] and ids.tolist() == [0]


def test_a_vocabulary_grows_over_many_batches() -> None:
    rng = random.Random(3)
    letters = "abcdefghijklmnopqrstuvwxyzäöüßñçøσ"
    words = ["".join(rng.choice(letters) for _ in range(rng.randrange(2, 18))) for _ in range(30_000)]
    batches = [[" ".join(rng.choice(words) for _ in range(rng.randrange(50))) for _ in range(rng.randrange(1, 8))]
               for _ in range(400)]
    _check(batches)


_DOCS = "/usr/share/doc/python-scipy-doc/html"


@pytest.mark.skipif(not Path(_DOCS).is_dir(), reason=f"{_DOCS} (Debian's python-scipy-doc package) is not installed")
def test_real_documentation_pages() -> None:
    from gym_crawl.web.html_extract import extract_page

    files = sorted(glob.glob(_DOCS + "/**/*.html", recursive=True))[:60]
    batches = []
    for f in files:
        page = extract_page(Path(f).read_bytes(), "http://docs.local" + f)
        batches.append([page.text, page.title] + [t for link in page.links for t in (link.anchor, link.context)])
    _check(batches)


def test_split_texts_takes_the_texts_of_one_kind() -> None:
    import numpy as np

    from gym_crawl.web.token_ids import split_texts

    counts = np.array([2, 0, 3, 1, 0, 2], np.int64)
    kinds = np.array([0, 1, 2, 3, 2, 3], np.int64)
    ids = np.arange(8, dtype=np.int32)
    ptr, out = split_texts(ids, counts, kinds, 3)
    assert ptr.tolist() == [0, 1, 3] and out.tolist() == [5, 6, 7]
    ptr, out = split_texts(ids, counts, kinds, 2)
    assert ptr.tolist() == [0, 3, 3] and out.tolist() == [2, 3, 4]
    ptr, out = split_texts(ids, counts, kinds, 4)
    assert ptr.tolist() == [0] and out.size == 0
