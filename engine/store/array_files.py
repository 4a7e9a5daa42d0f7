"""One-dimensional ``.npy`` files read and written a chunk at a time.

A checkpoint rewrites a store of any size while the server runs, so it must
never hold a whole array: it reads ranges of the mapped store's files with
``pread`` (a read through the server's own mapping would make every page it
touches part of the process's resident memory, and evict nothing) and appends
to new files as it goes. A ``.npy`` header states the array's length, which a
writer learns only at the end: the header is written for length 0 and
rewritten on close (NumPy pads the shape field for exactly this, so the
header's size does not change).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

#: bytes copied by the kernel per call when a file's data is copied whole
COPY_STEP = 1 << 26


def _header(dtype: np.dtype, length: int) -> bytes:
    import io

    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": np.lib.format.dtype_to_descr(dtype),
                                               "fortran_order": False, "shape": (length,)})
    return out.getvalue()


class FileArray:
    """A 1-d ``.npy`` file read by ranges: ``array[a:b]`` reads those elements only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            fmt = np.lib.format
            read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            shape, fortran, dtype = read(f)
            self.offset = f.tell()
        if len(shape) != 1 or fortran:
            raise ValueError(f"{path} is not a one-dimensional array")
        self.dtype = dtype
        self.length = shape[0]

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, where: slice) -> np.ndarray:
        start, stop, step = where.indices(self.length)
        if step != 1:
            raise IndexError("a FileArray is read by contiguous ranges")
        count = max(stop - start, 0)
        if not count:
            return np.zeros(0, dtype=self.dtype)
        size = self.dtype.itemsize
        fd = os.open(self.path, os.O_RDONLY)
        try:
            data = bytearray(count * size)
            view, done = memoryview(data), 0
            while done < len(data):
                got = os.preadv(fd, [view[done:]], self.offset + start * size + done)
                if not got:
                    raise EOFError(f"{self.path}: shorter than its header says")
                done += got
        finally:
            os.close(fd)
        return np.frombuffer(data, dtype=self.dtype)


class NpyWriter:
    """Appends chunks to a new 1-d ``.npy`` file of ``dtype``; :meth:`close` states its length."""

    def __init__(self, path: Path, dtype: np.dtype) -> None:
        self.path = path
        self.dtype = np.dtype(dtype)
        self.length = 0
        self._file = open(path, "wb")
        self._header_size = len(_header(self.dtype, 0))
        self._file.write(_header(self.dtype, 0))

    def append(self, values: np.ndarray) -> None:
        if len(values):
            self._file.write(memoryview(np.ascontiguousarray(values, dtype=self.dtype)).cast("B"))
            self.length += len(values)

    def append_file(self, source: FileArray, start: int = 0, stop: int | None = None) -> None:
        """Append ``source[start:stop]`` (same dtype), copied by the kernel:
        no byte passes through this process."""
        stop = len(source) if stop is None else stop
        if source.dtype != self.dtype:
            raise ValueError(f"{source.path}: {source.dtype}, not {self.dtype}")
        self._file.flush()
        size = self.dtype.itemsize
        with open(source.path, "rb") as src:
            _copy_range(src.fileno(), self._file.fileno(), source.offset + start * size,
                        (stop - start) * size)
        self._file.seek(0, os.SEEK_END)
        self.length += stop - start

    def close(self) -> int:
        """Write the final header, flush to disk; returns the length."""
        header = _header(self.dtype, self.length)
        if len(header) != self._header_size:
            raise RuntimeError(f"{self.path}: the .npy header changed size")
        self._file.seek(0)
        self._file.write(header)
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        return self.length


def _copy_range(src: int, dst: int, offset: int, count: int) -> None:
    """Copy ``count`` bytes of ``src`` from ``offset`` to ``dst``'s position,
    in the kernel where it can (else through a bounded buffer)."""
    while count > 0:
        try:
            done = os.copy_file_range(src, dst, min(count, COPY_STEP), offset)
        except OSError:  # a file system or kernel without it
            data = os.pread(src, min(count, 1 << 20), offset)
            done = len(data)
            view = memoryview(data)
            while view:
                view = view[os.write(dst, view):]
        if not done:
            raise EOFError("the source file is shorter than expected")
        offset += done
        count -= done


def append_bytes(target, source: Path) -> None:
    """Append the whole file ``source`` to the open binary file ``target`` (kernel copy)."""
    target.flush()
    with open(source, "rb") as src:
        _copy_range(src.fileno(), target.fileno(), 0, os.fstat(src.fileno()).st_size)
    target.seek(0, os.SEEK_END)


def link_or_copy(source: Path, target: Path) -> None:
    """``target`` becomes ``source``'s content: a hard link (no bytes written;
    store files are never changed once written), or a copy where the file
    system has none."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def save_array(path: Path, array: np.ndarray) -> None:
    """``np.save`` of an array already in memory, flushed to disk."""
    with open(path, "wb") as f:
        np.save(f, array)
        f.flush()
        os.fsync(f.fileno())
