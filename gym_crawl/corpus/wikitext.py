"""Wikitext → plain text + internal links, for the MediaWiki dump loader.

:func:`parse_wikitext` renders one page's wikitext to the plain text a reader
sees (approximately) and returns, for every internal link, its normalized
target title and the span of its anchor text *in that plain text*, so callers
can take the anchor and a surrounding-text window from the rendered text.

What is removed (text and any links inside): HTML comments, templates
``{{…}}`` (nested, incl. parser functions and ``{{{params}}}``), tables
``{|…|}`` (nested), ``<ref>…</ref>`` / ``<ref/>`` and other non-prose tags
(math, gallery, timeline, source code, …), ``<includeonly>`` blocks, file and
image links ``[[File:…|…[[nested]]…]]``, category links (returned as
categories), interlanguage links ``[[de:…]]``, behaviour switches
(``__NOTOC__``), bare URLs. What is kept as text: link anchors
(``[[Target|anchor]]`` → "anchor", ``[[Target]]`` → "Target", trailing
letters ``[[bus]]es`` → "buses"), anchors of links into other namespaces or
other wikis (``[[:Category:X|x]]``, ``[[wikt:word|word]]``) without a link,
the text of external links ``[http://x text]`` → "text", headings, list items,
the contents of ``<nowiki>`` (literally), ``<pre>``, ``<poem>``, formatting tags.
Bold/italic quotes are removed and HTML entities decoded.

Why a hand-written scanner and not ``mwparserfromhell``: see
:mod:`gym_crawl.corpus.mediawiki` (the scanner is several times faster and gives
the link spans in the rendered text, which ``strip_code()`` does not).

How it works: brace structures are removed by a stack scanner (one regex
search per token, so unbalanced or stray braces cannot derail it: an unclosed
``{{`` is dropped as literal text, an unclosed ``{|`` runs to the end of the
page as MediaWiki's table auto-closing does). Links are rendered by a second
stack scanner over ``[[``/``]]``; each kept link's anchor is wrapped in
private-use marker characters so that its span survives the later clean-up
passes; a final pass records the spans and removes the markers.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from urllib.parse import unquote

__all__ = [
    "WikiSite", "ParsedPage", "parse_wikitext", "normalize_title", "LANGUAGE_CODES", "INTERWIKI_PREFIXES",
    "DISAMBIGUATION_TEMPLATES",
]

# ----------------------------------------------------------------- site data

CANONICAL_NAMESPACES: dict[str, int] = {
    "media": -2, "special": -1, "talk": 1, "user": 2, "user talk": 3, "project": 4, "project talk": 5,
    "file": 6, "image": 6, "file talk": 7, "image talk": 7, "mediawiki": 8, "mediawiki talk": 9,
    "template": 10, "template talk": 11, "help": 12, "help talk": 13, "category": 14, "category talk": 15,
    "portal": 100, "portal talk": 101, "draft": 118, "draft talk": 119, "timedtext": 710,
    "timedtext talk": 711, "module": 828, "module talk": 829,
}
"""English canonical namespace names and aliases, valid on every wiki besides its localized names."""

LANGUAGE_CODES: frozenset[str] = frozenset("""
aa ab ace ady af ak als alt am ami an ang anp ar arc ary arz as ast atj av avk awa ay az azb ba ban bar bat-smg
bbc bcl bdr be be-tarask be-x-old bew bg bh bi bjn blk bm bn bo bpy br bs btm bug bxr ca cbk-zam cdo ce ceb ch cho
chr chy ckb co cr crh cs csb cu cv cy da dag de dga din diq dsb dtp dty dv dz ee el eml en eo es et eu ext fa fat
ff fi fiu-vro fj fo fon fr frp frr fur fy ga gag gan gcr gd gl glk gn gom gor got gpe gsw gu guc gur guw gv ha hak
haw he hi hif ho hr hsb ht hu hy hyw hz ia iba id ie ig igl ii ik ilo inh io is it iu ja jam jbo jv ka kaa kab kbd
kbp kcg kg kge ki kj kk kl km kn knc ko koi kr krc ks ksh ku kus kv kw ky la lad lb lbe lez lfn lg li lij lld lmo
ln lo lrc lt ltg lv lzh mad mai map-bms mdf mg mh mhr mi min mk ml mn mni mnw mo mos mr mrj ms mt mus mwl my myv
mzn na nah nan nap nb nds nds-nl ne new ng nia nl nn no nov nqo nr nrm nso nup nv ny oc olo om or os pa pag pam pap
pcd pcm pdc pfl pi pih pl pms pnb pnt ps pt pwn qu rki rm rmy rn ro roa-rup roa-tara rsk ru rue rup rw sa sah sat
sc scn sco sd se sg sgs sh shi shn si simple sk skr sl sm smn sn so sq sr srn ss st stq su sv sw syl szl szy ta tay
tcy tdd te tet tg th ti tig tk tl tly tn to tpi tr trv ts tt tum tw ty tyv udm ug uk ur uz ve vec vep vi vls vo
vro wa war wo wuu xal xh xmf yi yo yue za zea zgh zh zh-classical zh-cn zh-min-nan zh-tw zh-yue zu
""".split())
"""Wikipedia language codes: ``[[xx:Title]]`` with one of these is an interlanguage link."""

INTERWIKI_PREFIXES: frozenset[str] = frozenset("""
w wikipedia wikt wiktionary commons c meta m metawikimedia metawiki species wikispecies s wikisource q wikiquote
b wikibooks n wikinews v wikiversity voy wikivoyage d wikidata mw mediawikiwiki foundation wmf wikimedia
wikimediafoundation phab phabricator mediazilla bugzilla outreach incubator wikitech translatewiki testwiki
oldwikisource sulutil toollabs toolforge doi rfc arxiv google imdb wikia fandom wikiquote iarchive
""".split())
"""Common interwiki prefixes (non-language) of the Wikimedia interwiki map."""

DISAMBIGUATION_TEMPLATES: frozenset[str] = frozenset({
    "Disambiguation", "Disambig", "Dab", "Disamb", "Hndis", "Geodis", "Numberdis", "Letter disambiguation",
    "Disambiguation page", "Surname disambiguation",
})
"""Template names taken to mark a disambiguation page on any wiki (besides templates found to emit
``__DISAMBIG__``, which the loader detects in the dump's template namespace)."""


@dataclass
class WikiSite:
    """What parsing needs to know about a wiki: namespace names and title case rule.

    ``namespaces`` maps namespace key → localized name (``""`` for the main
    namespace), as in the dump's ``<siteinfo>``. ``case`` is the wiki-wide
    ``first-letter`` / ``case-sensitive`` rule.
    """

    namespaces: dict[int, str] = field(default_factory=lambda: {0: "", 6: "File", 10: "Template", 14: "Category"})
    case: str = "first-letter"
    link_namespaces: frozenset[int] = frozenset({0})
    """Namespaces whose links are kept as links (the loader's ``namespaces``)."""
    _lookup: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        lk = dict(CANONICAL_NAMESPACES)
        for key, name in self.namespaces.items():
            if name:
                lk[name.replace("_", " ").lower()] = key
        self._lookup = lk

    def namespace_of(self, prefix: str) -> int | None:
        """Namespace key of a title prefix (``"Category"``, ``"kategoreja"``), or ``None``."""
        return self._lookup.get(" ".join(prefix.replace("_", " ").split()).lower())

    def prefixed(self, ns: int, name: str) -> str:
        """Full title of ``name`` in namespace ``ns`` with the wiki's localized prefix."""
        return name if ns == 0 else f"{self.namespaces.get(ns, str(ns))}:{name}"

    def split_title(self, title: str) -> tuple[int, str]:
        """``(namespace, name)`` of a full title; unknown prefixes belong to the main namespace."""
        pfx, sep, rest = title.partition(":")
        if sep:
            ns = self.namespace_of(pfx)
            if ns is not None and ns != 0:
                return ns, rest
        return 0, title

    def normalize(self, title: str) -> str:
        """Canonical full title: namespace prefix localized, name normalized (see :func:`normalize_title`)."""
        ns, name = self.split_title(normalize_title(title, "case-sensitive"))
        name = _first_letter(name.strip()) if self.case == "first-letter" else name.strip()
        return self.prefixed(ns, name) if name else ""


def normalize_title(title: str, case: str = "first-letter") -> str:
    """MediaWiki title normalization: entities and %-escapes decoded, ``_`` → space,
    whitespace collapsed, ``#fragment`` dropped, first letter upper-cased on
    ``first-letter`` wikis (when upper-casing keeps it one character)."""
    if "&" in title:
        title = html.unescape(title)
    if "%" in title:
        title = unquote(title)
    title = title.split("#", 1)[0]
    title = " ".join(title.replace("_", " ").split())
    return _first_letter(title) if case == "first-letter" else title


def _first_letter(title: str) -> str:
    """Upper-case the first character (kept as is when upper-casing would change its length)."""
    if title:
        up = title[0].upper()
        if len(up) == 1:
            return up + title[1:]
    return title


# ------------------------------------------------------------- parse result

@dataclass
class ParsedPage:
    """The rendering of one page.

    ``links``: ``(target, start, end)`` per kept internal link, in text order;
    ``target`` is the normalized full title ("" for a link to a section of the
    page itself); ``text[start:end]`` is the anchor text. ``categories``:
    normalized category names (no prefix), in order, unique. ``templates``:
    normalized names of the top-level templates used. ``counts``: how many
    links of each dropped kind were seen (``category``, ``file``,
    ``interwiki``, ``other_namespace``, ``invalid``).
    """

    text: str
    links: list[tuple[str, int, int]]
    categories: list[str]
    templates: list[str]
    disambig_magic: bool
    counts: dict[str, int]


# ------------------------------------------------------------------ regexes

_MARK_OPEN, _MARK_CLOSE = "\ue000", "\ue001"
_MARK_BASE = 0xF0000  # link k is tagged by chr(_MARK_BASE + k) (supplementary private use area)
_MARKERS_RE = re.compile("[\ue000\ue001\U000f0000-\U000ffffd]")
_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_INCLUDEONLY_RE = re.compile(r"<includeonly\s*>.*?(?:</includeonly\s*>|\Z)", re.S | re.I)
_NOWIKI_RE = re.compile(r"<nowiki\s*>(.*?)</nowiki\s*>|<nowiki\s*/>", re.S | re.I)
_DROP_TAGS = ("ref|references|math|gallery|timeline|imagemap|score|syntaxhighlight|source|graph|templatedata|"
              "mapframe|maplink|hiero|chem|ce|inputbox|categorytree|charinsert|templatestyles|indicator")
_DROP_PAIRED_RE = re.compile(rf"<({_DROP_TAGS})(?:\s[^<>]*)?(?<!/)>.*?</\1\s*>", re.S | re.I)
_DROP_SELF_RE = re.compile(rf"<(?:{_DROP_TAGS})(?:\s[^<>]*)?/>", re.I)
_BRACE_TOKEN_RE = re.compile(r"\{\{\{|\}\}\}|\{\{|\}\}|^[ \t]*\{\||^[ \t]*\|\}", re.M)
_LINK_TOKEN_RE = re.compile(r"\[\[|\]\]")
_TRAIL_RE = re.compile(r"[^\W\d_]+")
_EXTLINK_RE = re.compile(r"\[(?:https?:|ftp:|//|mailto:|news:|irc:|ircs:)[^\s\]\[<>\"]*[ \t]*([^\]\n]*)\]", re.I)
_BAREURL_RE = re.compile(r"(?:https?|ftp)://[^\s<>\[\]\"]+", re.I)
_BR_RE = re.compile(r"<br\s*/?>", re.I)
_TAG_RE = re.compile(r"</?[a-zA-Z][\w:-]*(?:\s[^<>]*)?/?>")
_HEADING_RE = re.compile(r"^[ \t]*(=+)[ \t]*(.*?)[ \t]*\1[ \t]*$", re.M)
_QUOTES_RE = re.compile(r"'{2,}")
_LINEPREFIX_RE = re.compile(r"^[ \t]*(?:[*#:;]+[ \t]*|-{4,}[ \t]*)", re.M)
_MAGIC_RE = re.compile(r"__[A-Z]+__")
_SPACES_RE = re.compile(r"[ \t\u00a0\u2009\u200b]+")
_NEWLINES_RE = re.compile(r"[ \t]*\n[ \t\n]*")
_PAREN_RE = re.compile(r"\s*\([^()]*\)\s*$")
_DISAMBIG_MAGIC = "__DISAMBIG__"


# ------------------------------------------------------------ brace removal

def _nowiki(m: re.Match) -> str:
    """Keep ``<nowiki>`` content literally: escape what later passes would treat as markup."""
    s = m.group(1)
    if not s:
        return ""
    return (s.replace("&", "&amp;").replace("[", "&#91;").replace("]", "&#93;").replace("{", "&#123;")
            .replace("}", "&#125;").replace("|", "&#124;").replace("'", "&#39;").replace("<", "&lt;")
            .replace("_", "&#95;"))


def _template_name(body: str) -> str:
    """Normalized name of a template call from its inner text (before the first ``|``)."""
    name = body.split("|", 1)[0].strip()
    if not name or name[0] in "#!:":
        return ""
    pfx, sep, rest = name.partition(":")
    if sep and pfx.strip().lower() in ("template", "msg", "subst", "safesubst", "msgnw"):
        name = rest
    elif sep:
        return ""  # parser function or magic word with argument, or another namespace
    return normalize_title(name)


def strip_braces(text: str, templates: list[str] | None = None) -> str:
    """Remove templates ``{{…}}``, template parameters ``{{{…}}}`` and tables ``{|…|}`` (nested).

    Top-level template names are appended to ``templates`` when given. An
    unclosed ``{{`` is dropped as literal text; an unclosed ``{|`` removes
    everything to the end of the text (MediaWiki closes open tables at the end).
    """
    out: list[str] = []
    stack: list[tuple[str, int]] = []  # (opener kind, position after the opener)
    pos = 0  # start of pending literal text (only emitted at depth 0)
    search = _BRACE_TOKEN_RE.search
    i = 0
    while True:
        m = search(text, i)
        if m is None:
            if not stack:
                out.append(text[pos:])
                break
            kind, after = stack[0]
            if kind == "{|":
                break  # unclosed table: swallow the rest
            # unclosed template/parameter: treat the outermost opener as literal text (dropped) and rescan
            stack.clear()
            pos = i = after
            continue
        tok = m.group().strip(" \t")
        start, end = m.start() + (len(m.group()) - len(tok)), m.end()
        if tok in ("{{", "{{{", "{|"):
            if not stack:
                out.append(text[pos:start])
            stack.append((tok, end))
            i = end
            continue
        # a closer
        if not stack:
            pos = i = end  # stray closer: drop it
            continue
        top = stack[-1][0]
        if tok == "|}" and top != "{|":
            # inside a template '|}}' ends the template; otherwise a stray '|}' in a template: skip the '|'
            i = start + 1
            continue
        if tok == "}}}" and top == "{{":
            end = start + 2  # '}}' closes the template, the third brace is re-scanned
        elif tok == "}}" and top == "{{{":
            i = end  # mismatched: a parameter needs '}}}'; ignore
            continue
        elif tok == "}}" and top == "{|" or tok == "}}}" and top == "{|":
            i = end  # stray template closer inside a table
            continue
        kind, after = stack.pop()
        if not stack:
            if templates is not None and kind == "{{":
                nm = _template_name(text[after:start])
                if nm:
                    templates.append(nm)
            pos = end
        i = end
    return "".join(out)


# ------------------------------------------------------------- link render

class _LinkRenderer:
    """Renders ``[[…]]`` constructs of one page (a second stack scanner)."""

    def __init__(self, site: WikiSite):
        self.site = site
        self.links: list[str] = []  # target title of link k (its anchor is tagged with marker k)
        self.categories: list[str] = []
        self.counts = {"category": 0, "file": 0, "interwiki": 0, "other_namespace": 0, "invalid": 0}

    def run(self, text: str) -> str:
        pieces: list[str] = []
        stack: list[int] = []  # index into pieces where each open link's content starts
        i = 0
        search = _LINK_TOKEN_RE.search
        while True:
            m = search(text, i)
            if m is None:
                pieces.append(text[i:])
                break
            pieces.append(text[i:m.start()])
            i = m.end()
            if m.group() == "[[":
                stack.append(len(pieces))
                continue
            if not stack:
                continue  # stray ']]' dropped
            k = stack.pop()
            content = "".join(pieces[k:])
            del pieces[k:]
            trail = ""
            t = _TRAIL_RE.match(text, i)
            if t is not None:
                trail = t.group()
            rendered, used_trail = self.render(content, trail)
            if used_trail:
                i += len(trail)
            pieces.append(rendered)
        # unclosed '[[' openers are dropped (their text stays)
        return "".join(pieces)

    def render(self, content: str, trail: str) -> tuple[str, bool]:
        """Rendering of one link's inner text; returns (text, whether the link trail was absorbed)."""
        target, pipe, anchor = content.partition("|")
        if "\n" in target or _MARK_OPEN in target or "{" in target or "<" in target or "[" in target:
            self.counts["invalid"] += 1
            return _MARKERS_RE.sub("", content), False
        target = target.strip()
        visible = target.startswith(":")
        if visible:
            target = target[1:].strip()
        pfx, sep, rest = target.partition(":")
        ns = 0
        if sep:
            nsk = self.site.namespace_of(pfx)
            if nsk is not None:
                ns = nsk
            else:
                low = pfx.strip().lower()
                if low in LANGUAGE_CODES or low in INTERWIKI_PREFIXES:
                    self.counts["interwiki"] += 1
                    if low in LANGUAGE_CODES and not visible:
                        return "", False  # interlanguage link: not rendered in the text
                    return self._plain_anchor(anchor if pipe else target) + trail, True
        if ns == 14 and not visible:
            self.counts["category"] += 1
            name = normalize_title(rest, self.site.case)
            if name and name not in self.categories:
                self.categories.append(name)
            return "", False
        if ns in (6, -2) and not visible:
            self.counts["file"] += 1
            return "", False
        shown = target
        if pipe:
            shown = anchor if anchor.strip() else _PAREN_RE.sub("", rest if ns else target)  # pipe trick
        if ns not in self.site.link_namespaces:
            self.counts["other_namespace"] += 1
            return self._plain_anchor(shown) + trail, True
        full = self.site.normalize(target) if not target.startswith("#") else ""
        shown = _MARKERS_RE.sub("", shown) + trail  # nested links inside an anchor are dropped
        k = len(self.links)
        self.links.append(full)
        return f"{_MARK_OPEN}{chr(_MARK_BASE + k)}{shown}{_MARK_CLOSE}", True

    @staticmethod
    def _plain_anchor(s: str) -> str:
        return _MARKERS_RE.sub("", s)


# ------------------------------------------------------------------- public

def _cleanup(text: str) -> str:
    """Remove the remaining inline markup (external links, tags, quotes, list prefixes, entities)."""
    text = _EXTLINK_RE.sub(r"\1", text)
    text = _BAREURL_RE.sub("", text)
    text = _BR_RE.sub("\n", text)
    text = _TAG_RE.sub("", text)
    text = _HEADING_RE.sub(r"\2", text)
    text = _QUOTES_RE.sub("", text)
    text = _LINEPREFIX_RE.sub("", text)
    text = _MAGIC_RE.sub("", text)
    if "&" in text:
        text = html.unescape(text)
    text = _SPACES_RE.sub(" ", text)
    text = _NEWLINES_RE.sub(lambda m: "\n\n" if m.group().count("\n") > 1 else "\n", text)
    return text.strip()


def _extract_spans(text: str, targets: list[str]) -> tuple[str, list[tuple[str, int, int]]]:
    """Find the marker-wrapped anchors, record their spans, and remove the markers."""
    out: list[str] = []
    links: list[tuple[str, int, int]] = []
    length = 0
    pos = 0
    for m in re.finditer("\ue000([\U000f0000-\U000ffffd])([^\ue000\ue001]*)\ue001", text):
        before = text[pos:m.start()]
        out.append(before)
        length += len(before)
        anchor = m.group(2)
        k = ord(m.group(1)) - _MARK_BASE
        # whitespace inside an anchor was normalized with the rest; trim it from the span
        lead = len(anchor) - len(anchor.lstrip())
        core = anchor.strip()
        if core and 0 <= k < len(targets):
            links.append((targets[k], length + lead, length + lead + len(core)))
        out.append(anchor)
        length += len(anchor)
        pos = m.end()
    out.append(text[pos:])
    plain = "".join(out)
    if _MARK_OPEN in plain or _MARK_CLOSE in plain:  # unmatched leftovers (should not happen)
        plain = _MARKERS_RE.sub("", plain)
    return plain, links


def parse_wikitext(wikitext: str, site: WikiSite | None = None) -> ParsedPage:
    """Render ``wikitext`` to plain text and extract its links, categories and templates.

    See the module docstring for what is kept and removed. Link spans index
    into the returned ``text``.
    """
    site = site or WikiSite()
    text = _MARKERS_RE.sub("", wikitext) if _MARKERS_RE.search(wikitext) else wikitext
    disambig = _DISAMBIG_MAGIC in text
    text = _COMMENT_RE.sub("", text)
    text = _INCLUDEONLY_RE.sub("", text)
    text = _NOWIKI_RE.sub(_nowiki, text)
    text = _DROP_PAIRED_RE.sub("", text)
    text = _DROP_SELF_RE.sub("", text)
    templates: list[str] = []
    text = strip_braces(text, templates)
    renderer = _LinkRenderer(site)
    text = renderer.run(text)
    text = _cleanup(text)
    plain, links = _extract_spans(text, renderer.links)
    return ParsedPage(text=plain, links=links, categories=renderer.categories, templates=templates,
                      disambig_magic=disambig, counts=renderer.counts)

