"""Module 4: downloads that cannot hang or fill the disk (torchlight/datasets/download.py).

A local HTTP server on 127.0.0.1 (in a thread; each response bounded, so it stops by itself)
plays the bad mirrors: one that trickles bytes (the download fails at its deadline, with an error
saying so), one that sends far more than the expected file (cut off just past the expected size),
one that announces too much (not read at all). A partial file left by a killed download is removed
by the next one.
"""

import contextlib
import hashlib
import http.server
import os
import subprocess
import sys
import threading
import time

import pytest

from torchlight.datasets import download as dl
from torchlight.datasets import mnist
from torchlight.utils import scratch

pytestmark = pytest.mark.module4

BODY = b"x" * 1000
SHA = hashlib.sha256(BODY).hexdigest()


@contextlib.contextmanager
def serving(routes):
    """A server answering GET /<name> with ``routes[name](handler)``; yields its base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            try:
                routes[self.path.lstrip("/")](self)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client hung up: what a cut-off download does

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def whole(handler):
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(BODY)))
    handler.end_headers()
    handler.wfile.write(BODY)


def trickle(handler):  # the right length announced, then a byte every 20 ms (at most 10 s)
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(BODY)))
    handler.end_headers()
    for byte in BODY[:500]:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.02)


def flood(handler):  # no length, then 20 MiB (a wrong file), until the client hangs up
    handler.send_response(200)
    handler.end_headers()
    block = b"y" * (1 << 16)
    for _ in range(320):
        handler.wfile.write(block)


def announce(handler):  # announces 187 MiB
    handler.send_response(200)
    handler.send_header("Content-Length", str(187 << 20))
    handler.end_headers()
    handler.wfile.write(b"z" * (1 << 16))


ROUTES = {"whole": whole, "trickle": trickle, "flood": flood, "announce": announce}


def test_a_trickling_server_fails_at_the_deadline(tmp_path):
    with serving(ROUTES) as url:
        start = time.monotonic()
        with pytest.raises(
            RuntimeError, match=r"(?s)could not download f\.bin.*deadline of 0\.5 s.*too slow or stalled"
        ):
            dl.download([url + "trickle"], str(tmp_path / "f.bin"), SHA, progress=False, deadline=0.5, timeout=5)
        assert time.monotonic() - start < 4  # the trickle would take 10 s; each byte resets the socket timeout
    assert os.listdir(tmp_path) == []


def test_the_deadline_covers_every_mirror(tmp_path):
    with serving(ROUTES) as url:
        with pytest.raises(RuntimeError, match=r"(?s)deadline of 0\.3 s.*whole: not tried, the deadline"):
            dl.download([url + "trickle", url + "whole"], str(tmp_path / "f.bin"), SHA, progress=False, deadline=0.3)
    assert os.listdir(tmp_path) == []


def test_a_server_sending_too_much_is_cut_off_past_the_expected_size(tmp_path):
    with serving(ROUTES) as url:
        with pytest.raises(RuntimeError, match=r"sent more than the file's 1000 bytes \(stopped after (\d+)\)") as err:
            dl.download([url + "flood"], str(tmp_path / "f.bin"), SHA, progress=False, size=len(BODY))
    stopped = int(str(err.value).split("stopped after ")[1].split(")")[0])
    assert stopped <= len(BODY) + dl.MARGIN + (1 << 16)  # at most one read past the bound
    assert os.listdir(tmp_path) == []


def test_a_server_announcing_too_much_is_not_read(tmp_path):
    with serving(ROUTES) as url:
        with pytest.raises(RuntimeError, match=r"announces 196083712 bytes, the file is 1000"):
            dl.download([url + "announce"], str(tmp_path / "f.bin"), SHA, progress=False, size=len(BODY))
    assert os.listdir(tmp_path) == []


def test_a_good_mirror_after_bad_ones_serves_the_file(tmp_path):
    with serving(ROUTES) as url:
        urls = [url + "announce", url + "flood", url + "whole"]
        dl.download(urls, str(tmp_path / "f.bin"), SHA, progress=False, size=len(BODY))
    assert (tmp_path / "f.bin").read_bytes() == BODY and os.listdir(tmp_path) == ["f.bin"]


def test_the_data_sets_know_their_files_sizes():
    for cls in (mnist.MNIST, mnist.FashionMNIST):
        assert sorted(cls.sizes) == sorted(name for name, _ in cls.resources)
        assert all(1000 < size < 30_000_000 for size in cls.sizes.values())


def test_mnist_passes_the_size_on(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(mnist, "_download", lambda urls, path, sha, size=None: seen.append(size))
    with pytest.raises(FileNotFoundError):
        mnist.MNIST(tmp_path, download=True)
    assert seen == [mnist.MNIST.sizes[name] for name, _ in mnist.MNIST.resources]


def test_a_killed_downloads_partial_file_is_removed_by_the_next(tmp_path):
    # a download killed with SIGKILL mid-way (here: a process that has ended) left its partial file
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = tmp_path / f".f.bin.{scratch._host()}.{gone.pid}.dl-abcd1234.tmp"
    stale.write_bytes(b"half a file")
    live = tmp_path / f".g.bin.{scratch._host()}.{os.getppid()}.dl-abcd1234.tmp"  # a live process's: kept
    live.write_bytes(b"being written")
    with serving(ROUTES) as url:
        dl.download([url + "whole"], str(tmp_path / "f.bin"), SHA, progress=False, size=len(BODY))
    assert sorted(os.listdir(tmp_path)) == sorted(["f.bin", live.name])
