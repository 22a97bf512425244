"""Label maps and URL rules of a WARC corpus (TSV, JSON, CSV, ``re:`` rules), ``corpus compile --labels /
--label-rules`` with bad lines refused by file and line, ``corpus info`` listing the labels, and the seeds a
recorded crawl names."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gym_crawl.cli import main
from gym_crawl.corpus import load_corpus
from gym_crawl.web.warc_labels import LabelRules, read_label_map, read_label_rules

pytest.importorskip("warcio")
pytest.importorskip("fastwarc")

from gym_crawl.webgen.examples import write_example_warc  # noqa: E402

GEO = "https://geo.example.org/wiki/"


def test_tsv_label_map_with_comments_header_and_several_labels(tmp_path: Path) -> None:
    f = tmp_path / "labels.tsv"
    f.write_text("url\tlabel\n# a comment\n\nHTTPS://geo.example.org:443/wiki/Rock#top\tgeology\tstone\n"
                 f"{GEO}Rock\tgeology\n")
    assert read_label_map(f) == {f"{GEO}Rock": ["geology", "stone"]}  # canonical URL, each label once
    f.write_bytes(b"\xef\xbb\xbf" + f"{GEO}Rock\tgeology\r\n".encode())  # a byte-order mark, CRLF lines
    assert read_label_map(f) == {f"{GEO}Rock": ["geology"]}


@pytest.mark.parametrize("text, line, why", [
    ("https://a.org/x\tok\nhttps://a.org/y\n", 2, "expected URL<TAB>label"),
    ("# c\nnot a url\tlab\n", 2, "'not a url' is not an absolute http"),
    ("https://a.org/x\t\t\n", 1, "no label after a tab"),
])
def test_bad_label_map_lines_name_file_and_line(tmp_path: Path, text: str, line: int, why: str) -> None:
    f = tmp_path / "labels.tsv"
    f.write_text(text)
    with pytest.raises(ValueError, match=f"labels.tsv:{line}: .*{why}"):
        read_label_map(f)


def test_tsv_rules_prefix_and_regex(tmp_path: Path) -> None:
    f = tmp_path / "rules.tsv"
    f.write_text(f"{GEO}\tgeology\n{GEO}Volcano\tgeology.volcano\nre:/wiki/(Cancer|Tumor)$\tmedicine\n"
                 "re:example\\.org\tother\n")
    rules = read_label_rules(f)
    assert rules[:2] == [(f"{GEO}Volcano", "geology.volcano"), (GEO, "geology")]  # longest prefix first
    m = LabelRules(rules)
    assert m.label(f"{GEO}Volcano") == "geology.volcano"
    assert m.label(f"{GEO}Rock") == "geology"
    assert m.label("https://med.example.org/wiki/Tumor") == "medicine"  # no prefix matched: first regex
    assert m.label("https://art.example.org/wiki/Poem") == "other"
    assert m.label("https://elsewhere.net/") is None
    json_rules = tmp_path / "rules.json"
    json_rules.write_text(json.dumps([list(r) for r in rules]))
    assert read_label_rules(json_rules) == rules


@pytest.mark.parametrize("text, line, why", [
    ("https://a.org/\tx\nre:(\ty\n", 2, "not a valid regular expression"),
    ("https://a.org/\tx\n\nhttps://a.org/b\n", 3, "expected URL-prefix<TAB>label"),
    ("https://a.org/\tx\ty\n", 1, "expected URL-prefix<TAB>label"),
    ("a.org/\tx\n", 1, "neither an absolute http\\(s\\) URL prefix nor re:REGEX"),
    ("re:\tx\n", 1, "empty regular expression"),
])
def test_bad_rule_lines_name_file_and_line(tmp_path: Path, text: str, line: int, why: str) -> None:
    f = tmp_path / "rules.tsv"
    f.write_text(text)
    with pytest.raises(ValueError, match=f"rules.tsv:{line}: .*{why}"):
        read_label_rules(f)


def test_corpus_compile_with_label_files_then_info(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warc = write_example_warc(tmp_path)
    (tmp_path / "rules.tsv").write_text(f"{GEO}\tgeology\nre:/wiki/(Cancer|Tumor)\tmedicine\n")
    (tmp_path / "labels.tsv").write_text("https://art.example.org/wiki/Poetry\tpoetry\n"
                                         "https://art.example.org/wiki/Nowhere\tpoetry\n")
    out = tmp_path / "mycorpus"
    rc = main(["corpus", "compile", str(warc), str(out), "--label-rules", str(tmp_path / "rules.tsv"),
               "--labels", str(tmp_path / "labels.tsv")])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert cap.out.strip() == str(out)
    assert "labelled 8 of 12 pages with 3 label(s)" in cap.err
    assert "1 URL(s) of --labels are not pages of this archive" in cap.err
    c = load_corpus(out)
    assert c.page_labels(c.page_id(f"{GEO}Volcano")) == ["geology"]
    assert c.page_labels(c.page_id("https://med.example.org/wiki/Tumor")) == ["medicine"]
    assert c.page_labels(c.page_id("https://gen.example.org/wiki/City")) == []
    assert main(["corpus", "info", str(out)]) == 0
    info = capsys.readouterr().out
    listed = {line.split()[0]: int(line.split()[1]) for line in info.split("most frequent labels")[1].splitlines()[1:]
              if line.strip()}
    assert listed == {"geology": 5, "medicine": 2, "poetry": 1}
    assert main(["corpus", "info", str(out), "--labels", "1"]) == 0
    assert "most frequent labels (of 3; --labels 3 lists them all)" in capsys.readouterr().out


def test_corpus_compile_refuses_a_bad_line_before_compiling(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    warc = write_example_warc(tmp_path)
    rules = tmp_path / "rules.tsv"
    rules.write_text(f"{GEO}\tgeology\n{GEO}Rock geology\n")  # a space, not a tab
    rc = main(["corpus", "compile", str(warc), str(tmp_path / "out"), "--label-rules", str(rules)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip().splitlines() == [f"gym-crawl: error: {rules}:2: expected URL-prefix<TAB>label or "
                                        f"re:REGEX<TAB>label, got '{GEO}Rock geology'"]
    assert not (tmp_path / "out").exists()


def test_label_files_need_a_warc_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    compiled = load_corpus(write_example_warc(tmp_path)).save(tmp_path / "c")
    (tmp_path / "r.tsv").write_text(f"{GEO}\tgeology\n")
    rc = main(["corpus", "compile", str(compiled), str(tmp_path / "d"), "--label-rules", str(tmp_path / "r.tsv")])
    assert rc == 2
    assert "--label-rules labels the pages of a WARC source by URL" in capsys.readouterr().err


def test_recorded_seeds_become_the_corpus_seeds(tmp_path: Path) -> None:
    from gym_crawl.web.warc_io import WarcRecorder

    src = write_example_warc(tmp_path / "a")
    # a recorder's warcinfo names the crawl's seeds; copy the example's records after it
    rec_path = tmp_path / "crawl.warc.gz"
    with WarcRecorder(rec_path, seeds=[f"{GEO}Volcano", "https://nowhere.example.org/"]):
        pass
    rec_path.write_bytes(rec_path.read_bytes() + src.read_bytes())
    c = load_corpus(rec_path)
    assert c.meta["default_seeds"] == [f"{GEO}Volcano"]  # a seed that is no page of the archive is dropped
    assert "default_seeds" not in load_corpus(src).meta
