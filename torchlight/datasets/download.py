"""Module 4: fetching a data file: try mirrors in turn, check the SHA-256, write atomically.

A file is written to a temporary name in the destination folder and renamed into place only once
its SHA-256 matches, so an interrupted or damaged download never leaves a file that looks
complete. A download whose hash is wrong is deleted and refused.
"""

import hashlib
import http.client
import os
import tempfile
import urllib.request
from typing import List, Sequence

from tqdm import tqdm

_CHUNK = 1 << 16


class ChecksumError(RuntimeError):
    """A downloaded file's SHA-256 differs from the expected one (the file was deleted)."""


def sha256_of(path: str) -> str:
    """The SHA-256 of the file at ``path``, as lowercase hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(urls: Sequence[str], path: str, sha256: str, progress: bool = True, timeout: float = 60.0) -> None:
    """Fetch the file at ``path`` from the first of ``urls`` that serves it with SHA-256 ``sha256``.

    Shows a progress bar (tqdm) unless ``progress`` is false. Raises ``RuntimeError`` (listing
    every URL tried and why it failed) when none does; nothing is left at ``path`` then.
    """
    errors: List[str] = []
    for url in urls:
        try:
            _fetch(url, path, sha256.lower(), progress, timeout)
            return
        except (OSError, http.client.HTTPException, ChecksumError) as e:
            # OSError covers urllib's URLError and HTTPError, refused connections and timeouts.
            errors.append(f"{url}: {e}")
    tried = "\n  ".join(errors) if errors else "(no URLs given)"
    raise RuntimeError(f"could not download {os.path.basename(path)} to {path}:\n  {tried}")


def _fetch(url: str, path: str, sha256: str, progress: bool, timeout: float) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".part", dir=folder)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            total = response.headers.get("Content-Length")
            with tqdm(
                total=int(total) if total and total.isdigit() else None,
                desc=os.path.basename(path),
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                disable=not progress,
            ) as bar:
                for chunk in iter(lambda: response.read(_CHUNK), b""):
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
