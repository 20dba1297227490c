"""Module 4: ``save`` and ``load``, for state dicts (a model's or an optimizer's) on disk.

The file is numpy's ``.npz`` (a zip of ``.npy`` arrays) holding one array per tensor and a JSON
description of the structure around them (dicts, lists, numbers, strings). Nothing is pickled, so
loading a file runs no code from it, unlike ``torch.load`` of an untrusted file. What can be saved
is what state dicts hold: Tensors, Scalars, numpy arrays, numbers, strings, None, and dicts (with
string or integer keys), lists and tuples of them.

Saving respects the file it replaces. It writes a temporary file beside the target and renames it
over the target only once it is complete, so a crash leaves the old file or the new one, never half
of one; the new file keeps the old one's permission bits. A symbolic link is followed (its target
is replaced; the link stays); anything but a regular file (a directory, a FIFO, a device) is
refused with an error, never replaced. Where the folder cannot be written but the file can (as
``torch.save`` can), the new contents are written completely elsewhere first (a temporary file in
the system's temporary folder, else memory) and then copied over the file in place. A temporary
file left by a save that was killed (``kill -9``, a power cut) is removed by the next save into
that folder. A structure that contains itself is refused with an error naming where. Loading checks every
array's checksum before building anything: a truncated, corrupted or foreign file raises a
RuntimeError naming the file, and nothing half-loaded is returned.
"""

import errno
import io
import json
import numbers
import os
import shutil
import stat
import tempfile
import zipfile
from typing import Any, Dict, List, Optional, Set, Union

import numpy as np

from . import devices
from .backends import TensorBackend
from .scalar_variable import Scalar
from .tensor import Tensor
from .utils import scratch

__all__ = ["save", "load"]

PathLike = Union[str, "os.PathLike[str]"]

_HEADER = "__torchlight__"  # the entry holding the JSON description
_FORMAT = "torchlight.save"
_VERSION = 1


def save(obj: Any, f: PathLike) -> None:
    """Write ``obj`` to a file, replacing it atomically (see the module's docstring for what it promises).

    :param obj: a state dict: tensors, numbers, strings and dicts, lists and tuples of them.
    :param f: the file's path.
    """
    path = _path(f, "save")
    arrays: Dict[str, np.ndarray] = {}
    try:
        tree = _encode(obj, arrays, "obj", set())
        header = json.dumps({"format": _FORMAT, "version": _VERSION, "object": tree})
    except RecursionError:
        raise ValueError("torchlight.save: the object is nested too deeply to save") from None
    arrays[_HEADER] = np.frombuffer(header.encode("utf-8"), dtype=np.uint8)
    target = os.path.realpath(path)  # through every symbolic link: the link stays, its target changes
    old = _regular_or_missing(target, path)
    folder, name = os.path.split(target)
    scratch.remove_stale(folder, "save")
    try:
        fd, tmp = scratch.make_temporary(folder, name, "save")
    except OSError as err:
        if old is None or err.errno not in (errno.EACCES, errno.EPERM, errno.EROFS) or not os.access(target, os.W_OK):
            raise
        _overwrite_in_place(arrays, target)  # a writable file in a folder we cannot write
        return
    try:
        with os.fdopen(fd, "wb") as out:
            _write(arrays, out)
            out.flush()
            os.fsync(out.fileno())
        if old is None:
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; a new file gets the usual mode
        else:
            _keep_owner(tmp, old)
            os.chmod(tmp, stat.S_IMODE(old.st_mode))  # (after chown, which may clear set-id bits)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def _write(arrays: Dict[str, np.ndarray], out: Any) -> None:
    """What np.savez writes (a zip of .npy files, which np.load reads), refusing pickles."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _regular_or_missing(target: str, path: str) -> Optional[os.stat_result]:
    """The stat of the file that ``save`` replaces, None if there is none; anything that is not a
    regular file raises (replacing a FIFO or a device with a file would break what uses it)."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(st.st_mode):
        return st
    what = "a directory" if stat.S_ISDIR(st.st_mode) else _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
    shown = f"'{path}'" if target == path else f"'{path}' (that is, '{target}')"
    message = f"torchlight.save: {shown} is {what}; save writes regular files only, give a file's path"
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(message)
    raise OSError(message)


_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _keep_owner(tmp: str, old: os.stat_result) -> None:
    """The new file's owner and group as the old one's, where we may set them (as root, say)."""
    if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
        try:
            os.chown(tmp, old.st_uid, old.st_gid)
        except OSError:
            pass  # not ours to give away: the new file is ours


def _overwrite_in_place(arrays: Dict[str, np.ndarray], target: str) -> None:
    """Write the file's new contents completely elsewhere, then copy them over it in place."""
    try:
        staged: Any = tempfile.TemporaryFile()  # the system's temporary folder (no name: nothing to clean)
    except OSError:
        staged = io.BytesIO()
    with staged:
        _write(arrays, staged)
        size = staged.tell()
        staged.seek(0)
        with open(target, "r+b") as out:  # (no truncation before the new contents are all there)
            shutil.copyfileobj(staged, out)
            out.truncate(size)
            out.flush()
            os.fsync(out.fileno())


def load(
    f: PathLike,
    backend: Union[str, TensorBackend, None] = None,
    *,
    map_location: Any = None,
    weights_only: Optional[bool] = None,
) -> Any:
    """What ``save`` wrote to a file, with every tensor on ``backend``.

    :param f: the file's path.
    :param backend: the backend or its name for the tensors (default: the default backend).
    :param map_location: PyTorch's name for where the tensors go: a device (``"cpu"``,
        ``torchlight.device("cuda")``) or a backend name; not with backend.
    :param weights_only: accepted either way: a torchlight file only ever holds data (nothing in it
        runs when loaded).
    :raises FileNotFoundError: for a missing file.
    :raises RuntimeError: for a damaged or foreign file.
    """
    if weights_only is not None and not isinstance(weights_only, bool):
        raise TypeError(f"torchlight.load(weights_only): expected True or False, got {weights_only!r}")
    if map_location is not None:
        if backend is not None:
            raise ValueError("torchlight.load: pass map_location or backend, not both")
        if not isinstance(map_location, (str, TensorBackend, devices.device)):
            raise TypeError(
                "torchlight.load(map_location): expected a device ('cpu', 'cuda', torchlight.device) or a "
                f"backend name; a {type(map_location).__name__} (a dict or function) is not supported"
            )
        backend = devices.backend_for(map_location)
    path = _path(f, "load")
    if not os.path.exists(path):
        raise FileNotFoundError(f"torchlight.load: no such file: '{path}'")
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()  # reads every member and checks its CRC-32
            if bad is not None:
                raise ValueError(f"member {bad} fails its checksum")
            names = set(archive.namelist())
        with np.load(path, allow_pickle=False) as npz:
            if _HEADER + ".npy" not in names:
                raise ValueError("it has no torchlight header (not written by torchlight.save)")
            header = json.loads(npz[_HEADER].tobytes().decode("utf-8"))
            if not isinstance(header, dict) or header.get("format") != _FORMAT:
                raise ValueError("its header is not torchlight.save's")
            if header.get("version") != _VERSION:
                raise ValueError(f"it has format version {header.get('version')}; this torchlight reads {_VERSION}")
            arrays = {name: npz[name] for name in npz.files if name != _HEADER}
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception as err:  # whatever a damaged zip makes zipfile or numpy raise: the file is bad
        raise RuntimeError(
            f"torchlight.load: '{path}' is not a valid torchlight file (damaged, truncated, or not "
            f"written by torchlight.save): {type(err).__name__}: {err}"
        ) from err
    try:
        return _decode(header.get("object"), arrays, backend)
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise RuntimeError(f"torchlight.load: '{path}' has an invalid structure: {err}") from err


def _path(f: Any, fn: str) -> str:
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    raise TypeError(f"torchlight.{fn}: f must be a file path (str or pathlib.Path), got {type(f).__name__}")


def _umask() -> int:
    mask = os.umask(0o022)  # (the only way to read it is to set it: put it back at once)
    os.umask(mask)
    return mask


def _encode(obj: Any, arrays: Dict[str, np.ndarray], where: str, open_: Set[int]) -> Any:
    """``obj`` as JSON-able data; tensors and arrays go into ``arrays``, referred to by name.
    ``open_`` holds the ids of the containers being encoded around ``obj``: meeting one again
    means the structure contains itself."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        return {"float": repr(float(obj))}  # repr: exact, and nan/inf survive (JSON has neither)
    if isinstance(obj, Tensor):
        name = f"t{len(arrays)}"
        arrays[name] = obj.detach().to_numpy()
        return {"tensor": name}
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"torchlight.save cannot store a numpy array of dtype {obj.dtype} (at {where})")
        name = f"t{len(arrays)}"
        arrays[name] = obj
        return {"ndarray": name}
    if isinstance(obj, Scalar):
        return {"scalar": repr(float(obj.data))}
    if isinstance(obj, (dict, list, tuple)):
        if id(obj) in open_:
            raise ValueError(
                f"torchlight.save cannot store a structure that contains itself: {where} is one of "
                "the dicts/lists/tuples it is inside"
            )
        open_.add(id(obj))
        try:
            if isinstance(obj, dict):
                items = []
                for key, value in obj.items():
                    if isinstance(key, bool) or not isinstance(key, (str, int)):
                        raise TypeError(f"torchlight.save needs str or int dict keys, got {key!r} (at {where})")
                    items.append([key, _encode(value, arrays, f"{where}[{key!r}]", open_)])
                return {"dict": items}
            values = [_encode(v, arrays, f"{where}[{i}]", open_) for i, v in enumerate(obj)]
            return {"tuple" if isinstance(obj, tuple) else "list": values}
        finally:
            open_.discard(id(obj))
    raise TypeError(
        f"torchlight.save can store Tensors, Scalars, numpy arrays, numbers, strings, None and "
        f"dicts/lists/tuples of them; got {type(obj).__name__} at {where}"
    )


def _decode(tree: Any, arrays: Dict[str, np.ndarray], backend: Union[str, TensorBackend, None]) -> Any:
    """The object ``_encode`` described."""
    if tree is None or isinstance(tree, (bool, int, str)):
        return tree
    if not isinstance(tree, dict) or len(tree) != 1:
        raise ValueError(f"unexpected entry {tree!r}")
    ((kind, body),) = tree.items()
    if kind == "float":
        return float(body)
    if kind == "scalar":
        return Scalar(float(body), history=None)
    if kind == "tensor":
        return Tensor.from_numpy(np.array(arrays[body], dtype=np.float64), backend)  # a copy: its own storage
    if kind == "ndarray":
        return arrays[body]
    if kind == "dict":
        return {_key(k): _decode(v, arrays, backend) for k, v in body}
    if kind in ("list", "tuple"):
        values: List[Any] = [_decode(v, arrays, backend) for v in body]
        return tuple(values) if kind == "tuple" else values
    raise ValueError(f"unknown entry kind {kind!r}")


def _key(key: Any) -> Any:
    if isinstance(key, bool) or not isinstance(key, (str, int)):
        raise ValueError(f"bad dict key {key!r}")
    return key
