"""Fuzz ``qdf.read_qdf`` on corrupted ``.qdf`` files, from a local path and a ``memory://`` URL.

Input layout: ``byte 0`` options, the rest the file.

* bit 0: reseal the footer (recompute the trailer's footer length and CRC-32);
* bit 1: reseal the row groups too (decode the footer, recompute every group's CRC-32,
  write the footer back). Without resealing almost every mutation stops at a checksum
  mismatch; with it the fuzzer reaches the footer parser and the row-group decoders;
* bits 2-3: read ``all`` / ``columns=`` with ``categories=True`` / ``filter=``
  (statistics pruning and pushed down filters) / ``filter=`` + ``columns=`` +
  ``on_error="skip"``;
* bit 4: read from ``memory://`` (ranged reads through fsspec) instead of a local
  file (memory-mapped);
* bits 5-6: output ``pandas`` / ``arrow`` / ``numpy`` / ``records``; bit 7: ``threads=2``
  (row groups decoded on a thread pool; otherwise on the calling thread, which is
  several times faster per input).

Run: ``python -m fuzz.fuzz_read_qdf [libFuzzer flags] CORPUS_DIR [SEED_DIR]``.
"""

from __future__ import annotations

import atexit
import shutil
import struct
import tempfile
import zlib
from pathlib import Path

import fsspec
import numpy as np

from fuzz.harness import fuzz, import_qdf

qdf = import_qdf()
col = qdf.col

from qdf_columnar.io.layout import HEADER_SIZE, TRAILER_SIZE  # noqa: E402 - after the instrumented import
from qdf_columnar.io.reader import clear_footer_cache  # noqa: E402

OUTPUTS = ("pandas", "arrow", "numpy", "records")
_TRAILER = struct.Struct("<QI4s")

_DIR = Path(tempfile.mkdtemp(prefix="qdf-fuzz-"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
LOCAL = _DIR / "input.qdf"
MEMORY_URL = "memory://qdf-fuzz/input.qdf"
_MEMORY = fsspec.filesystem("memory")


def _reseal_groups(data: bytes, footer: bytes) -> bytes:
    """The footer with every row group's CRC-32 recomputed (unchanged when it does not decode)."""
    try:
        meta = qdf.loads(footer)
    except qdf.QdfError:
        return footer
    rg = meta.get("row_groups") if isinstance(meta, dict) else None
    offs = rg.get("offset") if isinstance(rg, dict) else None
    lens = rg.get("length") if isinstance(rg, dict) else None
    if not (isinstance(offs, np.ndarray) and isinstance(lens, np.ndarray) and offs.shape == lens.shape):
        return footer
    rg["crc32"] = np.array([zlib.crc32(data[int(o):int(o) + int(n)]) for o, n in zip(offs, lens)], dtype=np.uint64)
    try:
        return qdf.dumps(meta, mode="balanced")
    except qdf.QdfError:
        return footer


def reseal(data: bytes, groups: bool) -> bytes:
    """``data`` with a trailer whose footer length and CRC match its footer (and groups' CRCs with ``groups``)."""
    if len(data) < HEADER_SIZE + TRAILER_SIZE:
        return data
    flen, _, magic = _TRAILER.unpack_from(data, len(data) - TRAILER_SIZE)
    at = len(data) - TRAILER_SIZE - flen
    if not HEADER_SIZE <= at:
        return data
    footer = data[at:len(data) - TRAILER_SIZE]
    if groups:
        footer = _reseal_groups(data, footer)
    return data[:at] + footer + _TRAILER.pack(len(footer), zlib.crc32(footer), magic)


PROJECTION = ["s_low", "id", "lst"]
FILTER = (col("id") > 4) & (col("s_low") != "INFO") | col("f").is_null()


def test_one_input(data: bytes) -> None:
    if not data:
        return
    opts, body = data[0], data[1:]
    # The same path is rewritten for every input, possibly within one mtime tick and with
    # the same size: a footer cached from the previous input must not be reused.
    clear_footer_cache()
    if opts & 3:
        body = reseal(body, groups=bool(opts & 2))
    if opts & 0x10:
        _MEMORY.pipe_file(MEMORY_URL, body)
        path = MEMORY_URL
    else:
        LOCAL.write_bytes(body)
        path = LOCAL
    variant = (opts >> 2) & 3
    kwargs = {
        0: {},
        1: {"columns": PROJECTION, "categories": True},
        2: {"filter": FILTER},
        3: {"filter": FILTER, "columns": ["f", "ts"], "on_error": "skip"},
    }[variant]
    output = OUTPUTS[(opts >> 5) & 3]
    try:
        got = qdf.read_qdf(path, output=output, threads=2 if opts & 0x80 else False, **kwargs)
    except qdf.QdfError:
        return
    if output == "arrow":
        got.validate(full=True)


if __name__ == "__main__":
    fuzz(test_one_input)
