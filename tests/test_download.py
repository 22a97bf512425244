"""Tests for gym_crawl.corpus.download against a local HTTP server (never the internet)."""
from __future__ import annotations

import hashlib
import io
import socketserver
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.corpus import download as dl
from gym_crawl.corpus.download import ChecksumError, RemoteFile, content_fingerprint, fetch

SIZE = 3 * 1024 * 1024 + 12345
DATA = np.random.default_rng(0).integers(0, 256, SIZE, dtype=np.uint8).tobytes()
SHA = hashlib.sha256(DATA).hexdigest()
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikispeedia"


class _State:
    """Server behaviour switches and a log of requests, shared with the handler."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {"/data.bin": DATA}
        self.support_range = True
        self.cut_first_after: int | None = None  # close the 1st response after this many bytes
        self.requests: list[dict[str, str]] = []
        self.lock = threading.Lock()


def _make_handler(state: _State):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # keep pytest output clean
            pass

        def do_GET(self):
            with state.lock:
                state.requests.append(dict(self.headers.items()))
                first = len(state.requests) == 1
            body = state.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            start = 0
            rng = self.headers.get("Range")
            if rng and state.support_range:
                start = int(rng.split("=", 1)[1].split("-", 1)[0])
                if start >= len(body):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(body)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            payload = body[start:]
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            if first and state.cut_first_after is not None:
                self.wfile.write(payload[:state.cut_first_after])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(payload)

    return Handler


class _Server(ThreadingHTTPServer):
    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse lookup of the address (getfqdn): tests resolve nothing."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setattr(dl, "RETRY_BACKOFF", 0.0)
    state = _State()
    httpd = _Server(("127.0.0.1", 0), _make_handler(state))
    httpd.daemon_threads = True
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    t.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_full_download_with_checksum(server, tmp_path):
    dest = tmp_path / "sub" / "data.bin"
    out = fetch(server.url + "/data.bin", dest, SHA, progress=False)
    assert out == dest and dest.read_bytes() == DATA
    assert not dest.with_suffix(".bin.part").exists()
    # md5 + sha1 are checked too; an existing matching file is not downloaded again
    n = len(server.requests)
    fetch(server.url + "/data.bin", dest, SHA, md5=hashlib.md5(DATA).hexdigest(),
          sha1=hashlib.sha1(DATA).hexdigest(), progress=False)
    assert len(server.requests) == n


def test_interrupted_transfer_resumes_with_range(server, tmp_path):
    server.cut_first_after = 1_000_000
    dest = tmp_path / "data.bin"
    fetch(server.url + "/data.bin", dest, SHA, progress=False, retries=2)
    assert dest.read_bytes() == DATA
    assert len(server.requests) == 2
    assert "Range" not in server.requests[0]
    assert server.requests[1]["Range"] == "bytes=1000000-"


def test_existing_part_is_resumed(server, tmp_path):
    dest = tmp_path / "data.bin"
    dest.with_suffix(".bin.part").write_bytes(DATA[:777])
    fetch(server.url + "/data.bin", dest, SHA, progress=False)
    assert dest.read_bytes() == DATA
    assert server.requests[0]["Range"] == "bytes=777-"


def test_complete_part_gets_416_and_is_accepted(server, tmp_path):
    dest = tmp_path / "data.bin"
    dest.with_suffix(".bin.part").write_bytes(DATA)
    fetch(server.url + "/data.bin", dest, SHA, progress=False)
    assert dest.read_bytes() == DATA and len(server.requests) == 1


def test_corrupted_file_rejected_and_removed(server, tmp_path):
    dest = tmp_path / "data.bin"
    wrong = "0" * 64
    with pytest.raises(ChecksumError) as ei:
        fetch(server.url + "/data.bin", dest, wrong, progress=False)
    msg = str(ei.value)
    assert "data.bin" in msg and wrong in msg and SHA in msg
    assert isinstance(ei.value, ValueError)
    assert not dest.exists() and not dest.with_suffix(".bin.part").exists()


def test_server_ignoring_range_still_yields_correct_file(server, tmp_path):
    server.support_range = False
    server.cut_first_after = 500_000
    dest = tmp_path / "data.bin"
    fetch(server.url + "/data.bin", dest, SHA, progress=False)
    assert dest.read_bytes() == DATA
    assert server.requests[1].get("Range") == "bytes=500000-"  # asked, got 200, restarted


def test_gives_up_after_retries(server, tmp_path):
    server.files["/short.bin"] = DATA[:100]
    server.cut_first_after = 10
    # only the first request is cut; with retries=0 it must fail, leaving a .part to resume later
    with pytest.raises(OSError, match="failed after 0 retries"):
        fetch(server.url + "/short.bin", tmp_path / "short.bin", progress=False, retries=0)
    assert (tmp_path / "short.bin.part").stat().st_size == 10
    fetch(server.url + "/short.bin", tmp_path / "short.bin", progress=False)
    assert (tmp_path / "short.bin").read_bytes() == DATA[:100]


def test_http_404_is_not_retried(server, tmp_path):
    import urllib.error

    with pytest.raises(urllib.error.HTTPError):
        fetch(server.url + "/missing", tmp_path / "x", progress=False)
    assert len(server.requests) == 1


def test_registry_and_download(server, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="wikispeedia"):
        dl.download("no-such-dataset", tmp_path)
    monkeypatch.setattr(dl, "DATASETS", dict(dl.DATASETS))
    monkeypatch.setattr(dl, "_VERIFIERS", dict(dl._VERIFIERS))
    calls = []
    dl.register_dataset("fake", [RemoteFile(server.url + "/data.bin", "data.bin", SHA, SIZE)],
                        verify=lambda folder: calls.append(folder))
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "cache"))
    folder = dl.download("fake", progress=False)
    assert folder == tmp_path / "cache" / "fake"
    assert (folder / "data.bin").read_bytes() == DATA
    assert calls == [folder]
    dl.download("fake", progress=False)  # present + verified: no request, no re-verification
    assert len(server.requests) == 1 and len(calls) == 1
    assert dl.DATASETS["wikispeedia"][0].url.startswith("https://snap.stanford.edu/data/wikispeedia/")


def _tar_gz(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in sorted(members.items()):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))


def test_content_fingerprint_folder_equals_archive(tmp_path):
    files = {"top/b.txt": b"bee\n", "top/a.txt": b"ay\n", "top/sub/c.txt": b""}
    for n, d in files.items():
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_bytes(d)
    _tar_gz(tmp_path / "x.tar.gz", files)
    listing = "".join(f"{hashlib.sha256(files[n]).hexdigest()}  {n}\n" for n in sorted(files))
    want = hashlib.sha256(listing.encode()).hexdigest()
    assert content_fingerprint(tmp_path, "top") == want
    assert content_fingerprint(tmp_path / "x.tar.gz", "top") == want


def test_verify_wikispeedia_rejects_wrong_content(tmp_path):
    _tar_gz(tmp_path / "wikispeedia_articles_plaintext.tar.gz", {"plaintext_articles/A.txt": b"x"})
    _tar_gz(tmp_path / "wikispeedia_paths-and-graph.tar.gz", {"wikispeedia_paths-and-graph/articles.tsv": b"A\n"})
    with pytest.raises(ChecksumError, match="fingerprint"):
        dl.verify_wikispeedia(tmp_path)
    assert not (tmp_path / "wikispeedia_articles_plaintext.tar.gz").exists()


@pytest.mark.skipif(not (SHARED / "plaintext_articles.tar.xz").exists(),
                    reason=f"shared Wikispeedia copy not found at {SHARED}")
def test_wikispeedia_fingerprint_of_shared_copy():
    assert content_fingerprint(SHARED / "plaintext_articles.tar.xz", "plaintext_articles") == dl.WIKISPEEDIA_FINGERPRINT
    for name in ("articles.tsv", "links.tsv", "categories.tsv"):
        assert hashlib.sha256((SHARED / name).read_bytes()).hexdigest() == dl.WIKISPEEDIA_TSV_SHA256[name]
