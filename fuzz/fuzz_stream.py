"""Fuzz ``qdf.StreamReader`` on mutated streams of several messages written by ``qdf.StreamWriter``.

Input layout: ``byte 0`` options, the rest the stream.

* bits 0-1: iterate every message (values as ``qdf.loads`` gives them) / ``batches("arrow")``
  / ``read_all("pandas")`` / one message by iteration, then ``batches("records")``;
* bits 2-3: the source is ``bytes`` / a ``bytearray`` / a file-like read 7 bytes at a
  time (frames split across reads) / a file-like with the default chunk size;
* bit 4: ``max_frame=4096``.

Run: ``python -m fuzz.fuzz_stream [libFuzzer flags] CORPUS_DIR [SEED_DIR]``.
"""

from __future__ import annotations

import io

from fuzz.harness import fuzz, import_qdf

qdf = import_qdf()


def _reader(body: bytes, opts: int):
    source = (opts >> 2) & 3
    kwargs = {"max_frame": 4096} if opts & 0x10 else {}
    if source == 0:
        return qdf.StreamReader(body, **kwargs)
    if source == 1:
        return qdf.StreamReader(bytearray(body), **kwargs)
    return qdf.StreamReader(io.BytesIO(body), chunk_size=7 if source == 2 else 1 << 16, **kwargs)


def _consume(reader, how: int) -> None:
    if how == 0:
        for _ in reader:
            pass
    elif how == 1:
        for table in reader.batches("arrow"):
            table.validate(full=True)
    elif how == 2:
        reader.read_all("pandas")
    else:
        next(reader, None)
        for _ in reader.batches("records"):
            pass


def test_one_input(data: bytes) -> None:
    if not data:
        return
    opts, body = data[0], data[1:]
    try:
        with _reader(body, opts) as reader:
            _consume(reader, opts & 3)
    except qdf.QdfError:
        return


if __name__ == "__main__":
    fuzz(test_one_input)
