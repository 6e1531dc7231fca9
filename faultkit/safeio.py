"""Reading a file faultkit was handed, safely: regular files only, never more than a limit.

Kept free of parsers so that a lint answered from its cache (which digests each entry's bytes)
imports nothing it does not use.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from faultkit.errors import InputError

MAX_BYTES = 1024 * 1024


def read_bytes(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes, or an InputError naming what is wrong with it.

    The file is stat'ed before it is opened: a FIFO would block the open forever and a device
    such as /dev/zero never ends, so only regular files are read, and never more than the limit.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read it ({e.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path}: is a folder, expected a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path}: is not a regular file (a FIFO, socket or device); expected a text file")
    if info.st_size > max_bytes:
        raise InputError(f"{path}: {info.st_size} bytes is too large (limit {max_bytes}); is this the right file?")
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO since the stat, the open does not hang
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise InputError(f"{path}: cannot read it ({e.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise InputError(f"{path}: is not a regular file; expected a text file")
        raw = f.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise InputError(f"{path}: more than {max_bytes} bytes is too large; is this the right file?")
    return raw


def read_regular(path: Path, max_bytes: int = 64 * MAX_BYTES) -> bytes | None:
    """read_bytes for callers that only digest or sniff a file: None when it is absent, not a
    regular file (a FIFO would block), too large or unreadable; the loader that reads it for real
    reports why."""
    try:
        return read_bytes(path, max_bytes)
    except InputError:
        return None
