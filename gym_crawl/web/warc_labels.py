"""Labels of a WARC corpus' pages: URL → label maps and URL rules, read from files or given in Python.

Two sources, either or both (:func:`gym_crawl.web.warc.load_warc`'s ``labels=`` and ``label_rules=``;
``gym-crawl corpus compile --labels FILE --label-rules FILE``):

* a **label map**, URL → label(s): a dict, a JSON file ``{url: label | [labels]}``, a CSV file
  ``url,label[,label…]`` (a header row is skipped) or a TSV file (any other suffix) of ``URL<TAB>label[<TAB>label…]``
  lines;
* **label rules**, URL → one label: a list of ``(rule, label)`` pairs, ``{rule: label}``, a JSON file of either,
  or a TSV file (any suffix but ``.json``) of ``rule<TAB>label`` lines. A rule is a URL prefix
  (``https://docs.example.org/guide/``), or ``re:`` and a Python regular expression searched in the canonical URL
  (``re:/v[0-9]+/api/``). The longest matching prefix wins; a URL no prefix matches takes the label of the first
  regular expression (in file order) that matches it.

In TSV files, blank lines and lines starting with ``#`` are skipped, and a first line whose first field is
``url``, ``prefix`` or ``rule`` is a header. A line that is not what the format says is refused with the file,
the line number and why (``ValueError: labels.tsv:3: ...``). URLs and prefixes are canonicalised
(:func:`~gym_crawl.web.urls.canonical_url`), as the compiled corpus' URLs are; a page of the map keeps its
labels and gains its rule's label.
"""
from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gym_crawl.web.urls import canonical_url

__all__ = ["REGEX_PREFIX", "LabelRules", "read_label_map", "read_label_rules"]

REGEX_PREFIX = "re:"
"""A rule starting with this is a regular expression (searched in the canonical URL), not a URL prefix."""

_HEADERS = ("url", "prefix", "rule")


def _tsv_lines(p: Path) -> Iterable[tuple[int, list[str]]]:
    """``(line number, fields)`` of a TSV file's content lines: blank and ``#`` lines and a header skipped."""
    try:
        text = p.read_text(encoding="utf-8-sig")  # a byte-order mark (some editors write one) is not a URL
    except UnicodeDecodeError as e:
        raise ValueError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    first = True
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if first and fields[0].lower() in _HEADERS:
            first = False
            continue
        first = False
        yield n, fields


def _file(path: str | os.PathLike, what: str) -> Path:
    p = Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"{what} file {p}: no such file")
    return p


def read_label_map(labels: str | os.PathLike | Mapping[str, Any]) -> dict[str, list[str]]:
    """Canonical URL → labels (in the order given, each once) from a dict, a JSON, CSV or TSV file (see the module
    docstring). A bad entry is a ``ValueError`` naming the file and line (TSV) or the URL."""
    if isinstance(labels, Mapping):
        return _label_map(labels.items(), "labels")
    p = _file(labels, "labels")
    where = f"labels file {p}"
    suffix = p.suffix.lower()
    if suffix == ".json":
        try:
            obj = json.loads(p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{where}: not valid JSON ({e})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{where}: expected a JSON object {{url: label or [labels]}}, got {type(obj).__name__}")
        return _label_map(obj.items(), where)
    if suffix == ".csv":
        with open(p, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.reader(f) if r and r[0].strip()]
        if rows and canonical_url(rows[0][0]) is None:
            rows = rows[1:]  # a header row
        return _label_map([(r[0], [c for c in r[1:] if c.strip()]) for r in rows], where)
    out: dict[str, list[str]] = {}
    for n, fields in _tsv_lines(p):
        labs = [f for f in fields[1:] if f]
        if not labs:
            raise ValueError(f"{p}:{n}: expected URL<TAB>label, got {_shown(fields)} (no label after a tab)")
        _add(out, fields[0], labs, f"{p}:{n}")
    return out


def _shown(fields: list[str]) -> str:
    s = "\\t".join(fields)
    return repr(s if len(s) <= 80 else s[:77] + "...")


def _label_map(raw: Iterable[tuple[Any, Any]], where: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for url, labs in raw:
        labs = [labs] if isinstance(labs, str) else list(labs) if isinstance(labs, (list, tuple)) else [labs]
        if not labs or not all(isinstance(x, str) and x.strip() for x in labs):
            raise ValueError(f"{where}: labels of {url!r} must be non-empty strings, got {labs!r}")
        _add(out, str(url), labs, where)
    return out


def _add(out: dict[str, list[str]], url: str, labs: Sequence[str], where: str) -> None:
    c = canonical_url(url)
    if c is None:
        raise ValueError(f"{where}: {url!r} is not an absolute http(s) URL")
    have = out.setdefault(c, [])
    for lab in labs:
        if lab.strip() not in have:
            have.append(lab.strip())


class LabelRules:
    """URL rules → one label per URL: prefixes (longest wins), then regular expressions in order.

    :param rules: ``(rule, label)`` pairs as :func:`read_label_rules` returns them (a rule is a canonical prefix or
        ``"re:<pattern>"``).
    """

    def __init__(self, rules: Sequence[tuple[str, str]]):
        self.prefixes = sorted(((r, lab) for r, lab in rules if not r.startswith(REGEX_PREFIX)),
                               key=lambda t: -len(t[0]))
        self.regexes = [(re.compile(r[len(REGEX_PREFIX):]), lab) for r, lab in rules if r.startswith(REGEX_PREFIX)]

    def label(self, url: str) -> str | None:
        """The label of canonical ``url``, or ``None`` when no rule matches."""
        for prefix, lab in self.prefixes:
            if url.startswith(prefix):
                return lab
        for rx, lab in self.regexes:
            if rx.search(url):
                return lab
        return None


def read_label_rules(rules: str | os.PathLike | Sequence[Sequence[str]] | Mapping[str, str]
                     ) -> list[tuple[str, str]]:
    """``(rule, label)`` pairs from a list, a dict, a JSON or a TSV file (see the module docstring): prefixes
    canonicalised, longest first, then ``re:`` rules in the order given (each compiled once to check it). A bad
    rule is a ``ValueError`` naming the file and line (TSV) or the rule."""
    if isinstance(rules, (str, os.PathLike)):
        p = _file(rules, "label rules")
        if p.suffix.lower() != ".json":
            pairs = []
            for n, fields in _tsv_lines(p):
                if len(fields) != 2 or not fields[1]:
                    raise ValueError(f"{p}:{n}: expected URL-prefix<TAB>label or re:REGEX<TAB>label, got "
                                     f"{_shown(fields)}")
                pairs.append(_rule(fields[0], fields[1], f"{p}:{n}"))
            return _ordered(pairs)
        where = f"label rules file {p}"
        try:
            obj: Any = json.loads(p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{where}: not valid JSON ({e})") from None
    else:
        where, obj = "label_rules", rules
    items = list(obj.items()) if isinstance(obj, Mapping) else list(obj)
    pairs = []
    for item in items:
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and all(isinstance(x, str) for x in item)):
            raise ValueError(f"{where}: each rule must be a (prefix, label) pair of strings, got {item!r}")
        pairs.append(_rule(item[0], item[1], where))
    return _ordered(pairs)


def _ordered(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return LabelRules(pairs).prefixes + [(r, lab) for r, lab in pairs if r.startswith(REGEX_PREFIX)]


def _rule(rule: str, label: str, where: str) -> tuple[str, str]:
    rule, label = rule.strip(), label.strip()
    if not label:
        raise ValueError(f"{where}: empty label for rule {rule!r}")
    if rule.startswith(REGEX_PREFIX):
        pattern = rule[len(REGEX_PREFIX):]
        if not pattern:
            raise ValueError(f"{where}: empty regular expression in {rule!r}")
        try:
            re.compile(pattern)
        except re.error as e:
            raise ValueError(f"{where}: {rule!r} is not a valid regular expression ({e})") from None
        return rule, label
    c = canonical_url(rule)
    if c is None:
        raise ValueError(f"{where}: {rule!r} is neither an absolute http(s) URL prefix nor re:REGEX")
    if not rule.endswith("/") and c.endswith("/") and not rule.endswith(c.rstrip("/")):
        c = c[:-1]  # a "/" canonicalisation added to a prefix written differently is not part of the prefix
    return c, label
