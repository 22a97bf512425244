"""The ``docs-web`` builder (Debian documentation sites → live crawl → WARC → corpus → tasks): its section
label rules on fake documentation trees, the fixed site split, the task set, the skip message when the
packages are absent, and a bounded loopback end-to-end run on two tiny fake sites."""
from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.benchmarks import docs_web as dw
from gym_crawl.benchmarks import suite
from gym_crawl.corpus import CorpusBuilder


def _tree(root: Path, files: list[str]) -> None:
    for rel in files:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"<html><head><title>{rel}</title></head><body><p>{rel}</p></body></html>")


PYTHON_FILES = ["index.html", "genindex.html", "library/os.html", "library/index.html", "c-api/list.html",
                "tutorial/index.html", "howto/logging.html", "whatsnew/3.11.html"]
DJANGO_FILES = ["index.html", "ref/models/fields.html", "ref/contrib/admin/index.html", "ref/contrib/gis/db-api.html",
                "topics/db/queries.html", "topics/http/urls.html", "releases/3.2.html", "_modules/django/db.html",
                "ref/settings.html"]


@pytest.mark.parametrize("site,files,expected", [
    ("python", PYTHON_FILES, {"index.html": "python", "genindex.html": "python", "library/os.html": "python.library",
                              "library/index.html": "python.library", "c-api/list.html": "python.c_api",
                              "tutorial/index.html": "python.tutorial", "howto/logging.html": "python.howto",
                              "whatsnew/3.11.html": "python.whatsnew"}),
    ("django", DJANGO_FILES, {"index.html": "django", "ref/models/fields.html": "django.ref",
                              "ref/contrib/admin/index.html": "django.ref.contrib",
                              "ref/contrib/gis/db-api.html": "django.ref.contrib.gis",
                              "topics/db/queries.html": "django.topics", "topics/http/urls.html": "django.topics",
                              "releases/3.2.html": "django.releases", "_modules/django/db.html": "django.module_code",
                              "ref/settings.html": "django.ref"}),
])
def test_label_rules_on_a_fake_doc_tree(tmp_path, site, files, expected):
    """Every file of a tree laid out as the site's package lays it out gets its section label by the
    longest URL prefix, whatever host and port the site is served at."""
    _tree(tmp_path, files)
    for base in ("http://127.0.0.2:8080/", "http://127.0.0.9:41234/"):
        rules = dw.label_rules(dw.site_of(site), base)
        got = {p.relative_to(tmp_path).as_posix(): dw.label_of(rules, base + p.relative_to(tmp_path).as_posix())
               for p in tmp_path.rglob("*.html")}
        assert got == expected
        assert dw.label_of(rules, "http://127.0.0.3:8080/index.html") is None  # another host: no rule


def test_label_rules_of_flat_sites():
    """Sites without section folders label by file-name prefix (PostgreSQL chapters, git commands/guides,
    SciPy subpackages) with the longest prefix winning."""
    b = "http://h/"
    pg = dw.label_rules(dw.site_of("postgresql"), b)
    assert dw.label_of(pg, b + "sql-select.html") == "postgresql.sql_commands"
    assert dw.label_of(pg, b + "infoschema-tables.html") == "postgresql.information_schema"
    assert dw.label_of(pg, b + "index.html") == "postgresql"
    git = dw.label_rules(dw.site_of("git"), b)
    assert dw.label_of(git, b + "git-commit.html") == "git.commands"
    assert dw.label_of(git, b + "gitglossary.html") == "git.guides"
    assert dw.label_of(git, b + "user-manual.html") == "git"
    sp = dw.label_rules(dw.site_of("scipy"), b)
    assert dw.label_of(sp, b + "reference/generated/scipy.stats.norm.html") == "scipy.stats"
    assert dw.label_of(sp, b + "reference/generated/scipy.stats.mstats.gmean.html") == "scipy.stats.mstats"
    assert dw.label_of(sp, b + "reference/stats.mstats.html") == "scipy.stats.mstats"
    assert dw.label_of(sp, b + "reference/generated/scipy.fftpack.fft.html") == "scipy.legacy_fftpack"
    assert dw.label_of(sp, b + "reference/index.html") == "scipy"  # not scipy.io
    rust = dw.label_rules(dw.site_of("rust"), b)
    assert dw.label_of(rust, b + "std/collections/struct.HashMap.html") == "rust.std.collections"
    assert dw.label_of(rust, b + "std/primitive.i32.html") == "rust.std"
    assert dw.label_of(rust, b + "rust-by-example/index.html") == "rust.by_example"
    with pytest.raises(ValueError, match="end with '/'"):
        dw.label_rules(dw.site_of("git"), "http://h")


def test_no_label_is_a_bare_string_prefix_of_another():
    """A label topic covers every label that starts with it, so a label may prefix another only at a
    component boundary (``scipy.fft`` must not cover ``scipy.fftpack``)."""
    labels = {lab for s in dw.SITES for _, lab in dw.label_rules(s, "http://h/")}
    assert len(labels) > 100
    for a, b in itertools.permutations(labels, 2):
        if b.startswith(a):
            assert b.startswith(a + "."), (a, b)
    for s in dw.SITES:
        for _, lab in dw.label_rules(s, "http://h/"):
            assert dw.site_label(lab) == s.name and all(part for part in lab.split("."))


def test_site_split_is_fixed_and_disjoint():
    """The split holds whole sites out, by a hash of the site name: fixed, and no site on both sides."""
    labels = [lab for s in dw.SITES for _, lab in dw.label_rules(s, "http://h/")]
    a = {lab: dw.split_of(lab) for lab in labels}
    assert a == {lab: dw.split_of(lab) for lab in reversed(labels)}
    by_site: dict[str, set[str]] = {}
    for lab, side in a.items():
        by_site.setdefault(dw.site_label(lab), set()).add(side)
    assert all(len(v) == 1 for v in by_site.values())
    test_sites = {s for s, v in by_site.items() if v == {"test"}}
    assert test_sites == {s.name for s in dw.SITES if suite.is_test_topic(s.name)}
    assert {"python", "django", "scipy"} <= test_sites and {"rust", "postgresql"}.isdisjoint(test_sites)


def _fake_docs_corpus():
    """Two sites, two sections each (30 pages), a home page per site linking into every section."""
    rng = np.random.default_rng(0)
    words = {"library": "library module function import", "tutorial": "tutorial lesson example learn",
             "ref": "ref reference field model", "topics": "topics guide overview concept"}
    b = CorpusBuilder(name="fake-docs")
    pages: dict[str, list[int]] = {}
    for site, secs in (("python", ("library", "tutorial")), ("rust", ("ref", "topics"))):
        home = b.add_page(f"{site} home", f"{site} documentation index", domain=site, labels=[site])
        pages[site] = [home]
        for sec in secs:
            ids = [b.add_page(f"{site} {sec} {i}", f"{words[sec]} page {i}", domain=site, labels=[f"{site}.{sec}"])
                   for i in range(30)]
            pages[f"{site}.{sec}"] = ids
            b.add_link(home, ids[0], anchor=sec)
            for i in ids:
                for j in rng.choice(ids, 4, replace=False).tolist():
                    if i != j:
                        b.add_link(i, j, anchor=words[sec].split()[0])
                b.add_link(i, home, anchor="home")
    return b.build(), pages


def test_tasks_near_and_far_within_the_site():
    corpus, pages = _fake_docs_corpus()
    tasks = dw.docs_web_tasks(corpus, min_pages=25, near_budget=40, far_budget=60)
    assert {t.label for t in tasks} == {"python.library", "python.tutorial", "rust.ref", "rust.topics"}
    assert len(tasks) == 8
    for t in tasks:
        seed = corpus.page_id(t.seeds[0])
        members = pages[t.label]
        assert t.n_members == 30 and t.split == dw.split_of(t.label)
        if t.budget == 40:
            assert seed in members
        else:
            assert t.budget == 60 and seed == pages[dw.site_label(t.label)][0]  # the site's home page
    assert {t.split for t in tasks if t.label.startswith("python.")} == {"test"}
    assert {t.split for t in tasks if t.label.startswith("rust.")} == {"train"}


def test_suite_skips_docs_web_when_not_built(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path))
    sets, _ = suite.build_task_sets(["docs-web"], wikispeedia="unused")
    assert sets[0].tasks == [] and "gym-crawl bench docs-web" in sets[0].note and "skipped" in sets[0].note


def test_suite_builds_docs_web_from_the_compiled_corpus(tmp_path, monkeypatch):
    corpus, _ = _fake_docs_corpus()
    corpus.save(tmp_path / dw.CORPUS_DIRNAME)
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path))
    sets, corpora = suite.build_task_sets(["docs-web"], wikispeedia="unused")
    assert len(sets[0].tasks) == 8 and "docs-web" in corpora
    assert sets[0].note == "split by site: test sites python"


def test_builder_skips_with_the_missing_packages(tmp_path, capsys):
    """Without --install, absent packages are named and the build stops with what to install."""
    fake = dw.Site("nosuch", ("gym-crawl-no-such-doc-package",), r"^/nowhere/index\.html$")
    found, missing = dw.find_sites([fake])
    assert found == [] and "gym-crawl-no-such-doc-package" in missing["nosuch"] or "dpkg-query" in missing["nosuch"]
    with pytest.raises(SystemExit, match="--install.*gym-crawl-no-such-doc-package"):
        dw.build(data=tmp_path, sites=[fake], progress=False)
    assert "skipping site nosuch" in capsys.readouterr().err
    assert not (tmp_path / dw.WARC_NAME).exists()


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian-based system")
def test_find_sites_names_the_package_and_root():
    """On this machine: every SITES entry is either found (an existing root holding its start page) or
    missing with a reason naming its package."""
    found, missing = dw.find_sites()
    assert {r.site.name for r in found} | set(missing) == {s.name for s in dw.SITES}
    for r in found:
        assert (r.root / r.start).is_file()
    for name, why in missing.items():
        assert dw.site_of(name).packages[0] in why


def _site_files(root: Path, name: str, sections: dict[str, int], extra: dict[str, str] | None = None) -> None:
    """A tiny documentation site: a home page linking to each section's index, which links to its pages."""
    root.mkdir(parents=True)
    home = [f'<li><a href="{sec}/index.html">{sec} section</a></li>' for sec in sections]
    (root / "index.html").write_text(f"<html><head><title>{name} docs</title></head><body><nav><ul>{''.join(home)}"
                                     f'<li><a href="private/secret.html">secret</a></li></ul></nav>'
                                     f"<main><p>Welcome to the {name} documentation.</p></main></body></html>")
    for sec, n in sections.items():
        d = root / sec
        d.mkdir()
        items = "".join(f'<li><a href="page{i}.html">{sec} page {i}</a></li>' for i in range(n))
        (d / "index.html").write_text(f"<html><head><title>{name} {sec}</title></head><body><ul>{items}</ul>"
                                      f'<a href="../index.html">home</a></body></html>')
        for i in range(n):
            (d / f"page{i}.html").write_text(
                f"<html><head><title>{name} {sec} {i}</title></head><body><main><p>About {sec} number {i}: "
                f'{sec} {sec} details.</p><a href="page{(i + 1) % n}.html">next {sec}</a> '
                f'<a href="../index.html">home</a></main></body></html>')
    (root / "private").mkdir()
    (root / "private" / "secret.html").write_text("<html><head><title>secret</title></head><body>x</body></html>")
    for rel, text in (extra or {}).items():
        (root / rel).write_text(text)



def test_end_to_end_two_fake_sites(tmp_path):
    """Two fake doc sites → served on loopback → crawled politely into a WARC → compiled with the label
    rules → tasks. robots.txt and the site's excluded folder are obeyed; the WARC reads back with warcio."""
    alpha = dw.Site("alpha", ("fake-alpha-doc",), "", (("guide/", "guide"), ("api/", "api")), exclude=("private/",))
    beta = dw.Site("beta", ("fake-beta-doc",), "", (("tutorial/", "tutorial"),))
    _site_files(tmp_path / "a", "alpha", {"guide": 6, "api": 5})
    _site_files(tmp_path / "b", "beta", {"tutorial": 7}, {"robots.txt": "User-agent: *\nDisallow: /private/\n"})
    roots = [dw.SiteRoot(alpha, "fake-alpha-doc", tmp_path / "a", "index.html"),
             dw.SiteRoot(beta, "fake-beta-doc", tmp_path / "b", "index.html")]
    warc = tmp_path / "out" / dw.WARC_NAME
    warc.parent.mkdir()
    manifest = dw.record_crawl(roots, warc, progress=False)
    assert manifest["pages"] == {"alpha": 1 + 1 + 6 + 1 + 5, "beta": 1 + 1 + 7}
    corpus = dw.compile_corpus(warc, manifest, tmp_path / "out" / dw.CORPUS_DIRNAME)
    info = dw.describe(corpus, min_pages=5)
    assert info["pages"] == 23
    assert info["labels"] == {"alpha": 1, "alpha.guide": 7, "alpha.api": 6, "beta": 1, "beta.tutorial": 8}
    assert not any("secret" in t for t in corpus.titles.tolist())
    tasks = dw.docs_web_tasks(corpus, min_pages=5, near_budget=5, far_budget=8)
    assert {t.label for t in tasks} == {"alpha.guide", "alpha.api", "beta.tutorial"}
    assert corpus.meta["docs_web"]["home_pages"] == {"alpha": "alpha docs", "beta": "beta docs"}
    homes = {t.seeds[0] for t in tasks if t.budget == 8}
    assert homes == {"alpha docs", "beta docs"}
    from warcio.archiveiterator import ArchiveIterator

    with open(warc, "rb") as f:
        uris = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f) if r.rec_type == "response"]
    assert not any("/private/" in u for u in uris) and any(u.endswith("/robots.txt") for u in uris)


def test_report_separates_far_and_near_and_counts_wins(tmp_path):
    """The RESULTS table: IQM on far-seed and near-seed test tasks separately, and per-task wins/ties/losses
    of each agent against best-first, from a suite.json."""
    import dataclasses
    import json

    corpus, _ = _fake_docs_corpus()
    tasks = dw.docs_web_tasks(corpus, min_pages=25, near_budget=40, far_budget=60)
    test = [t for t in tasks if t.split == "test"]
    assert {dw.task_kind(corpus, t) for t in test} == {"near", "far"}
    found = {"random": 0, "oracle": 30, "best-first": 10}
    runs = []
    for t in test:
        near = dw.task_kind(corpus, t) == "near"
        for s in (0, 1):
            for a, f in found.items():
                runs.append({"set": "docs-web", "agent": a, "task": t.name, "label": t.label, "split": "test",
                             "seed": s, "found": f})
            # x: equal to oracle on near tasks, 5 below best-first on far tasks
            runs.append({"set": "docs-web", "agent": "x", "task": t.name, "label": t.label, "split": "test",
                         "seed": s, "found": 30 if near else 5})
    js = {"meta": {"agents": ["random", "oracle", "best-first", "x"], "seeds": 2},
          "tasks": {"docs-web": [dataclasses.asdict(t) for t in tasks]}, "runs": runs}
    (tmp_path / "suite.json").write_text(json.dumps(js))
    md = dw.report(tmp_path / "suite.json", corpus, reps=50)
    row = next(line for line in md.splitlines() if line.startswith("| x |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2].startswith("0.167") and cells[3].startswith("1.000")  # far: (5-0)/30, near: 1
    assert cells[4] == "0/0/2" and cells[5] == "2/0/0"
    assert "python (tasks)" in md and "2 far-seed, 2 near-seed" in md
