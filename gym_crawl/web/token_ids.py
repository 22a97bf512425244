"""Token ids of many texts in one compiled pass, for the WARC compiler's chunks (:mod:`gym_crawl.web.warc`).

:class:`ChunkVocabulary` gives the tokens of a batch of texts as ids in a growing vocabulary, a new token taking the
next id, exactly as ``[vocab.setdefault(t, len(vocab)) for t in tokenize(text)]`` over the texts in order would
(:func:`gym_crawl.tokenize.tokenize`: the lowercased runs of two letters or more, stop words dropped). A numba kernel
lowercases the code points (``str.lower``'s mapping of each character, read once per process; the two characters
whose lowercase ``str.lower`` makes longer or reads from their neighbours, U+0130 and the capital sigma, send their
texts through ``str.lower`` first), finds the letter runs, numbers them through an open-addressing table (the stop
words are its first entries, so a stop word is found, not skipped by a second look-up) and writes the ids, and the
first text's bag of words (distinct ids in first-seen order with their counts). A letter is what ``[^\\W\\d_]``
matches in a ``str`` pattern, read from the running Python's own ``re`` once per process (a bit per code point).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from gym_crawl.tokenize import STOPWORDS, TOKEN_RE
from gym_crawl.web.html_lex import kernel

__all__ = ["LOWER_LIMIT", "ChunkVocabulary", "letter_bits", "lower_table", "split_texts"]

_LETTER_BITS: np.ndarray | None = None
_STOP_WORDS = tuple(sorted(STOPWORDS))


def letter_bits() -> np.ndarray:
    """One bit per code point (``uint8``, little-endian bit order): whether :data:`~gym_crawl.tokenize.TOKEN_RE`
    matches the character (a letter, or a numeric character that is not a decimal digit) — read from ``re`` over
    every code point once per process (≈ 0.1 s)."""
    global _LETTER_BITS
    if _LETTER_BITS is None:
        everything = "".join(map(chr, range(0x110000)))
        mask = np.zeros(0x110000, np.bool_)
        for m in TOKEN_RE.finditer(everything):
            mask[m.start():m.end()] = True
        _LETTER_BITS = np.packbits(mask, bitorder="little")
    return _LETTER_BITS


_HASHED = np.int64(1) << np.int64(62)
"""Set in the key of a token that is not packed (keys of packed tokens are below it)."""


@kernel
def _slot(key, mask):
    """The first slot of ``key`` in a table of ``mask + 1`` slots."""
    h = key * np.int64(-7046029254386353131)
    return (h ^ (h >> 31)) & mask


LOWER_LIMIT = 0x20000
"""Code points from here on lowercase to themselves (no cased letter lies above the Supplementary Multilingual
Plane)."""
_LOWER: tuple[np.ndarray, np.ndarray] | None = None


def lower_table() -> tuple[np.ndarray, np.ndarray]:
    """``(blocks, deltas)``: the lowercase of a code point ``c < LOWER_LIMIT`` is ``c + deltas[blocks[c >> 8] * 256 +
    (c & 255)]``, as ``str.lower`` gives it for a character alone — except U+0130, which ``str.lower`` makes two
    characters, and the capital sigma, which it lowercases by its neighbours (given here as ``i`` and ``σ``; texts
    holding either are lowercased by Python). Read from ``str.lower`` once per process."""
    global _LOWER
    if _LOWER is None:
        alone = "".join("\x00" if c in (0x130, 0x3A3) else chr(c) for c in range(LOWER_LIMIT))
        low = np.frombuffer(alone.lower().encode("utf-32-le", "surrogatepass"), np.uint32).astype(np.int64)
        low[0x130], low[0x3A3] = 0x69, 0x3C3
        rows, blocks = np.unique((low - np.arange(LOWER_LIMIT)).reshape(-1, 256), axis=0, return_inverse=True)
        _LOWER = (blocks.reshape(-1).astype(np.int32), rows.reshape(-1).astype(np.int32))
    return _LOWER


@kernel
def _lower(c, blocks, deltas):
    if c < 128:
        return c + 32 if 65 <= c <= 90 else c
    if c >= LOWER_LIMIT:
        return c
    return c + deltas[(blocks[c >> 8] << 8) | (c & 255)]


@njit(cache=True, nogil=True)
def _rehashed(ekey, ne, slots):
    """A table of ``slots`` slots holding the entries ``0 … ne - 1`` (by their keys ``ekey``)."""
    table = np.full(2 * slots, -1, np.int64)
    for e in range(ne):
        s = _slot(ekey[e], slots - 1)
        while table[2 * s] >= 0:
            s = (s + 1) & (slots - 1)
        table[2 * s] = ekey[e]
        table[2 * s + 1] = e
    return table


@kernel
def _text_ids(cp, i, end, bits, table, mask, ekey, eoff, pool, ne, used, ids, k, nstop):
    """The ids of the tokens of ``cp[i:end]`` written from ``ids[k]`` on, new tokens added as entries ``ne, ne + 1,
    …`` (their code points from ``pool[used]`` on; the table has room for them). Returns ``(k, ne, used)`` after."""
    while i < end:
        c = cp[i]
        if not (bits[c >> 3] >> (c & 7)) & 1:
            i += 1
            continue
        j = i + 1
        h = np.int64(-3750763034362895579) ^ np.int64(c)
        packed = np.int64(c) - 96 if 97 <= c <= 122 else np.int64(-1)
        while j < end:
            c = cp[j]
            if not (bits[c >> 3] >> (c & 7)) & 1:
                break
            h = (h ^ np.int64(c)) * np.int64(1099511628211)
            if packed >= 0:
                packed = packed * 27 + (np.int64(c) - 96) if 97 <= c <= 122 and j - i < 13 else np.int64(-1)
            j += 1
        ln = j - i
        if ln >= 2:
            key = packed if packed >= 0 else (h & (_HASHED - 1)) | _HASHED
            s = _slot(key, mask)
            while True:
                e = table[2 * s + 1]
                kk = table[2 * s]
                if kk < 0:  # new: the next entry
                    e = ne
                    for q in range(ln):
                        pool[used + q] = cp[i + q]
                    used += ln
                    ekey[e] = key
                    eoff[e + 1] = used
                    table[2 * s] = key
                    table[2 * s + 1] = e
                    ne += 1
                    break
                if kk == key:
                    if packed >= 0:
                        break
                    a = eoff[e]
                    q = 0
                    if eoff[e + 1] - a == ln:
                        while q < ln and pool[a + q] == cp[i + q]:
                            q += 1
                    if q == ln:
                        break
                s = (s + 1) & mask
            if e >= nstop:
                ids[k] = e - nstop
                k += 1
        i = j
    return k, ne, used


@njit(cache=True, nogil=True)
def _token_ids(head, lens, chars, spans, owners, bits, blocks, deltas, table, ekey, eoff, pool, meta, nstop):
    """The ids of the tokens of texts given as pieces of ``raw``, the code points ``head`` followed by ``chars``
    (lowercased here by :func:`lower_table`'s tables): first the texts of ``head``, one after the other with one
    separator after each (``lens[t]`` code points for text ``t``), then the texts of ``spans`` into ``chars`` (span
    ``j`` belongs to text ``len(lens) + owners[j]``, ``owners`` non-decreasing; a text of two spans is read as if a
    separator stood between them). Returns ``(ids, counts per text, bag terms, bag counts,
    table, ekey, eoff, pool)``: the first text's bag of words, and the vocabulary's arrays (reallocated when they
    could fill up); ``meta[0]``: the entries so far (stop words first, ``nstop`` of them).

    The table's slot ``s`` is ``table[2s]`` (a key, -1 when empty) and ``table[2s + 1]`` (its entry); it is kept at
    most half full. A token of 2–13 letters ``a``–``z`` is its own key (base 27), so finding it reads one slot; any
    other token's key is a hash of its code points with bit 62 set, and its entry's code points
    (``pool[eoff[e]:eoff[e + 1]]``) confirm it."""
    nh = head.shape[0]
    n = nh + chars.shape[0]
    cp = np.empty(n, np.uint32)
    for i in range(nh):
        cp[i] = _lower(head[i], blocks, deltas)
    for i in range(chars.shape[0]):
        cp[nh + i] = _lower(chars[i], blocks, deltas)
    nt = lens.shape[0]
    pieces = np.empty((nt + spans.shape[0], 3), np.int64)
    a = 0
    for t in range(nt):
        pieces[t, 0], pieces[t, 1], pieces[t, 2] = a, a + lens[t], t
        a += lens[t] + 1
    for j in range(spans.shape[0]):
        pieces[nt + j, 0], pieces[nt + j, 1], pieces[nt + j, 2] = nh + spans[j, 0], nh + spans[j, 1], nt + owners[j]
    ntexts = nt + (owners[-1] + 1 if owners.shape[0] else 0)
    chars = 0
    most = 1  # tokens at most (two letters and a separator each)
    for p in range(pieces.shape[0]):
        chars += pieces[p, 1] - pieces[p, 0]
        most += (pieces[p, 1] - pieces[p, 0]) // 2 + 1
    ne = meta[0]
    used = eoff[ne]
    if used + chars > pool.shape[0]:  # room for every new token before the loop, so that it allocates nothing
        bigger = np.empty(max(2 * pool.shape[0], used + chars), np.uint32)
        bigger[:used] = pool[:used]
        pool = bigger
    if ne + most + 1 > ekey.shape[0]:
        size = max(2 * ekey.shape[0], ne + most + 1)
        ek = np.empty(size, np.int64)
        ek[:ne] = ekey[:ne]
        ekey = ek
        eo = np.empty(size + 1, np.int64)
        eo[:ne + 1] = eoff[:ne + 1]
        eoff = eo
    slots = table.shape[0] // 2
    ids = np.empty(most, np.int32)
    counts = np.zeros(ntexts, np.int64)
    k = 0
    for p in range(pieces.shape[0]):
        i = pieces[p, 0]
        end = pieces[p, 1]
        # room for every token of this piece (a long one in parts, so that a table is sized by its entries)
        while i < end:
            stop = min(end, i + 4096)
            while stop < end and (bits[cp[stop] >> 3] >> (cp[stop] & 7)) & 1:
                stop += 1  # not inside a token
            if 2 * (ne + (stop - i) // 2 + 1) > slots:
                while 2 * (ne + (stop - i) // 2 + 1) > slots:
                    slots *= 2
                table = _rehashed(ekey, ne, slots)
            k0 = k
            k, ne, used = _text_ids(cp, i, stop, bits, table, slots - 1, ekey, eoff, pool, ne, used, ids, k, nstop)
            counts[pieces[p, 2]] += k - k0
            i = stop
    meta[0] = ne
    nb = counts[0] if ntexts else 0
    terms = np.empty(nb, np.int32)
    tally = np.empty(nb, np.int32)
    d = 0
    # distinct ids of the first text in first-seen order: a linear-probe set over the (few hundred) ids
    cap = 16
    while cap < 2 * nb:
        cap *= 2
    where = np.full(cap, -1, np.int64)
    for q in range(nb):
        v = ids[q]
        s = (v * 40503) & (cap - 1)
        while where[s] >= 0 and terms[where[s]] != v:
            s = (s + 1) & (cap - 1)
        if where[s] < 0:
            where[s] = d
            terms[d] = v
            tally[d] = 1
            d += 1
        else:
            tally[where[s]] += 1
    # copies: the buffers are sized for the most tokens the texts could hold (≈ 3× what they hold), and a chunk
    # keeps every page's arrays until it is written
    return ids[:k].copy(), counts, terms[:d].copy(), tally[:d].copy(), table, ekey, eoff, pool


@njit(cache=True, nogil=True)
def split_texts(ids, counts, kinds, kind):
    """The ids of the texts of kind ``kind`` and their counts (a CSR pointer): ``ids`` holds the tokens of text
    after text, ``counts[t]`` of them for text ``t``, whose kind is ``kinds[t]``."""
    n = 0
    m = 0
    for t in range(counts.shape[0]):
        if kinds[t] == kind:
            n += counts[t]
            m += 1
    out = np.empty(n, np.int32)
    ptr = np.zeros(m + 1, np.int64)
    a = 0
    k = 0
    r = 0
    for t in range(counts.shape[0]):
        c = counts[t]
        if kinds[t] == kind:
            out[k:k + c] = ids[a:a + c]
            k += c
            r += 1
            ptr[r] = k
        a += c
    return ptr, out


_NO_CHARS = np.zeros(0, np.uint32)
_NO_SPANS = np.zeros((0, 2), np.int64)
_NO_OWNERS = np.zeros(0, np.int64)


class ChunkVocabulary:
    """A vocabulary that grows as texts are tokenized (ids from 0 in order of first appearance) — the chunk
    vocabulary of the WARC compiler.

    ``ids(texts)`` tokenizes the texts in order: the token ids (``int32``), how many each text has, and the first
    text's bag of words. The same as :func:`~gym_crawl.tokenize.tokenize` with its default stop words over each
    text, each new token taking the next id; :meth:`words` lists the tokens by id.
    """

    def __init__(self) -> None:
        self._bits = letter_bits()
        self._blocks, self._deltas = lower_table()
        self._table = np.full(2048, -1, np.int64)
        self._ekey = np.empty(512, np.int64)
        self._eoff = np.zeros(513, np.int64)
        self._pool = np.empty(4096, np.uint32)
        self._meta = np.zeros(1, np.int64)
        self._nstop = 0
        self.ids(["\x00".join(_STOP_WORDS)])
        self._nstop = int(self._meta[0])

    def _call(self, texts: Sequence[str], chars: np.ndarray, spans: np.ndarray,
              owners: np.ndarray) -> tuple[np.ndarray, ...]:
        if any("\u0130" in t or "\u03a3" in t for t in texts):
            # U+0130 lowers to two characters, a capital sigma by its neighbours: these texts lowercased by Python
            # (the tables then change nothing: they lowercase a lowercase character to itself)
            texts = [t.lower() for t in texts]
        head = np.frombuffer(("\x00".join(texts) + "\x00").encode("utf-32-le", "surrogatepass"), np.uint32)
        lens = np.fromiter(map(len, texts), np.int64, count=len(texts))
        ids, counts, terms, tally, self._table, self._ekey, self._eoff, self._pool = _token_ids(
            head, lens, chars, spans, owners, self._bits, self._blocks, self._deltas, self._table, self._ekey,
            self._eoff, self._pool, self._meta, self._nstop)
        return ids, counts, terms, tally

    def ids(self, texts: Sequence[str]) -> tuple[np.ndarray, ...]:
        """``(ids, counts, bag_terms, bag_counts)`` of ``texts``: the ids of every text's tokens in order
        (``int32``), ``counts[t]`` the number of tokens of ``texts[t]``, and the first text's distinct ids in order
        of first appearance with their counts (what ``Counter(ids of texts[0])`` holds, in its order)."""
        return self._call(texts, _NO_CHARS, _NO_SPANS, _NO_OWNERS)

    def span_ids(self, texts: Sequence[str], chars: np.ndarray, spans: np.ndarray,
                 owners: np.ndarray) -> tuple[np.ndarray, ...]:
        """:meth:`ids` of ``texts`` followed by more texts given as spans of the code points ``chars``: span ``j`` is
        ``chars[spans[j, 0]:spans[j, 1]]`` and belongs to text ``len(texts) + owners[j]`` (``owners``
        non-decreasing; a text of two spans reads as the two with a separator between them). ``chars`` must hold
        neither U+0130 nor a capital sigma (:meth:`ids` lowercases texts holding them with ``str.lower``)."""
        return self._call(texts, chars, spans, owners)

    def __len__(self) -> int:
        return int(self._meta[0]) - self._nstop

    def words(self) -> list[str]:
        """The tokens, by id."""
        n = int(self._meta[0])
        a = int(self._eoff[self._nstop])
        text = self._pool[a:int(self._eoff[n])].tobytes().decode("utf-32-le", "surrogatepass")
        off = (self._eoff[self._nstop:n + 1] - a).tolist()
        return [text[off[k]:off[k + 1]] for k in range(n - self._nstop)]
