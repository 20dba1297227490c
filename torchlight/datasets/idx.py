"""Module 4: the IDX file format of MNIST and FashionMNIST.

An IDX file is a 4-byte magic number, then one big-endian uint32 per dimension, then the values,
big-endian, in C order. The magic number is two zero bytes, a type code (table below) and the
number of dimensions: ``0x00000803`` is a 3-D array of unsigned bytes (MNIST's images),
``0x00000801`` a 1-D one (its labels). Files are often gzip-compressed (``.gz``).
"""

import gzip
import math
import os
import struct
import zlib
from typing import Union

import numpy as np

# type code -> numpy dtype (big-endian, as stored)
_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_GZIP_MAGIC = b"\x1f\x8b"


def read_idx(path: Union[str, "os.PathLike[str]"]) -> np.ndarray:
    """The array stored in an IDX file (gzip-compressed or not), in native byte order.

    :param path: the file.
    :raises ValueError: naming the file when it is not an IDX file (wrong magic number), is
        truncated or longer than its header says, or is a damaged gzip file.
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    # Recognise compression by content, not by name: a renamed file still reads.
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise ValueError(f"{path}: damaged gzip file ({e})") from None
    if len(raw) < 4:
        raise ValueError(f"{path}: truncated IDX file: {len(raw)} bytes, too short for the 4-byte magic number")
    code, ndim = raw[2], raw[3]
    if raw[:2] != b"\x00\x00" or code not in _TYPES:
        codes = ", ".join(f"{c:02x}" for c in _TYPES)
        raise ValueError(
            f"{path}: not an IDX file: magic number 0x{raw[:4].hex()}, expected 0x0000TTNN with type code TT "
            f"one of {codes} and NN the number of dimensions"
        )
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(
            f"{path}: truncated IDX file: its header needs {header} bytes for {ndim} dimensions, "
            f"the file has {len(raw)}"
        )
    shape = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = np.dtype(_TYPES[code])
    expected = math.prod(shape) * dtype.itemsize
    got = len(raw) - header
    if got != expected:
        what = "truncated IDX file" if got < expected else "IDX file longer than its header says"
        raise ValueError(
            f"{path}: {what}: shape {tuple(shape)} of {dtype.name} needs {expected} bytes of data, the file has {got}"
        )
    return np.frombuffer(raw, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))
