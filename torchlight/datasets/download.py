"""Module 4: fetching a data file: try mirrors in turn, check the SHA-256, write atomically.

A file is written to a temporary name in the destination folder and renamed into place only once
its SHA-256 matches, so an interrupted or damaged download never leaves a file that looks
complete. A download whose hash is wrong is deleted and refused.

Nothing hangs and nothing grows without bound: the whole download (every mirror together) has a
deadline, after which it fails with an error saying so, however slowly a server trickles bytes;
each wait for the network is bounded by ``timeout`` too. When the expected size is known (the data
sets know their files'), a server that sends more than that size plus a small margin is cut off
before more is written, and one that announces more (``Content-Length``) is not read at all.
A partial file left by a download that was killed is removed by the next download into that folder.
"""

import hashlib
import http.client
import os
import time
import urllib.request
from typing import List, Optional, Sequence

from tqdm import tqdm

from ..utils import scratch

_CHUNK = 1 << 16
MARGIN = 1 << 20  # bytes a server may send beyond the expected size before it is cut off
DEADLINE = 1800.0  # seconds, for a whole download: every mirror together


class ChecksumError(RuntimeError):
    """A downloaded file's SHA-256 differs from the expected one (the file was deleted)."""


class DownloadError(OSError):
    """A download that cannot succeed from this mirror: past its deadline, or larger than the file."""


def sha256_of(path: str) -> str:
    """The SHA-256 of the file at ``path``, as lowercase hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(
    urls: Sequence[str],
    path: str,
    sha256: str,
    progress: bool = True,
    timeout: float = 60.0,
    size: Optional[int] = None,
    deadline: float = DEADLINE,
) -> None:
    """Fetch the file at ``path`` from the first of ``urls`` that serves it with SHA-256 ``sha256``.

    ``size`` is the file's expected size in bytes, if known: a server sending more than ``size +
    MARGIN`` bytes is cut off. ``deadline`` (seconds) bounds the whole download, all mirrors
    together; ``timeout`` bounds each wait for the network. Shows a progress bar (tqdm) unless
    ``progress`` is false. Raises ``RuntimeError`` (listing every URL tried and why it failed)
    when none does; nothing is left at ``path`` then, and no partial file beside it.
    """
    errors: List[str] = []
    end = time.monotonic() + deadline
    scratch.remove_stale(os.path.dirname(os.path.abspath(path)), "dl")
    for url in urls:
        if time.monotonic() >= end:
            errors.append(f"{url}: not tried, the deadline of {deadline:g} s has passed")
            continue
        try:
            _fetch(url, path, sha256.lower(), progress, timeout, size, end, deadline)
            return
        except (OSError, http.client.HTTPException, ChecksumError) as e:
            # OSError covers urllib's URLError and HTTPError, refused connections and timeouts.
            errors.append(f"{url}: {e}")
    tried = "\n  ".join(errors) if errors else "(no URLs given)"
    raise RuntimeError(f"could not download {os.path.basename(path)} to {path}:\n  {tried}")


def _fetch(
    url: str, path: str, sha256: str, progress: bool, timeout: float, size: Optional[int], end: float, deadline: float
) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = scratch.make_temporary(folder, os.path.basename(path), "dl")
    limit = None if size is None else size + MARGIN
    try:
        digest = hashlib.sha256()
        wait = max(0.001, min(timeout, end - time.monotonic()))
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=wait) as response:
            total = response.headers.get("Content-Length")
            announced = int(total) if total and total.isdigit() else None
            if limit is not None and announced is not None and announced > limit:
                raise DownloadError(
                    f"the server announces {announced} bytes, the file is {size}: not the file expected "
                    "(nothing was downloaded)"
                )
            received = 0
            with tqdm(
                total=announced,
                desc=os.path.basename(path),
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                disable=not progress,
            ) as bar:
                while True:
                    if time.monotonic() > end:
                        raise DownloadError(
                            f"no complete download within the deadline of {deadline:g} s ({received} bytes "
                            "received): the server is too slow or stalled; the partial file was deleted"
                        )
                    chunk = response.read1(_CHUNK)  # what has arrived: a trickling server cannot stall the check
                    if not chunk:
                        break
                    received += len(chunk)
                    if limit is not None and received > limit:
                        raise DownloadError(
                            f"the server sent more than the file's {size} bytes (stopped after {received}): "
                            "not the file expected; the partial file was deleted"
                        )
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
        got = digest.hexdigest()
        if got != sha256:
            raise ChecksumError(
                f"SHA-256 mismatch: got {got}, expected {sha256}; the download was deleted "
                "(a damaged mirror, or not the file expected)"
            )
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
