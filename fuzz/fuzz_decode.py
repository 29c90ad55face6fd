"""Fuzz ``qdf.decode``: every output, with and without ``columns=`` / ``filter=``.

Input layout: ``byte 0`` options, ``byte 1`` projection and filter, the rest the buffer.

* byte 0 bits 0-1: output ``pandas`` / ``arrow`` / ``numpy`` / ``records``; bit 2:
  ``categories=True``; bit 3: ``no_copy=True``; bit 4: ``threads=2``; bit 5: pass a
  ``bytearray`` instead of ``bytes``.
* byte 1 low nibble: an entry of :data:`PROJECTIONS`; high nibble: of :data:`FILTERS`.

An Arrow result is also validated in full (offsets, UTF-8, dictionary indices): an
invalid array the decoder built from hostile bytes is a finding like an exception.
Run: ``python -m fuzz.fuzz_decode [libFuzzer flags] CORPUS_DIR [SEED_DIR]``.
"""

from __future__ import annotations

from fuzz.harness import fuzz, import_qdf

qdf = import_qdf()
col = qdf.col

OUTPUTS = ("pandas", "arrow", "numpy", "records")

#: Column names shared by the seed frames (fuzz/frames.py NAMES).
PROJECTIONS = (
    None,
    ["id"],
    ["f", "s_low"],
    ["s_high"],
    ["ts", "cat"],
    ["u"],
    ["lst"],
    ["st", "id"],
    ["mp"],
    ["cat", "s_low", "f", "id"],
    [],
    ["lst", "mp", "st"],
    ["ts"],
    ["s_high", "u", "f"],
    ["id", "f"],
    ["mp", "id"],
)

FILTERS = (
    None,
    col("id") > 5,
    col("f") < 0.5,
    col("s_low") == "WARN",
    col("s_high").isin(["x" * 40, "q"]),
    col("u").is_null(),
    (col("id") >= 3) & (col("s_low") != "INFO"),
    ~(col("f") >= 0.0) | col("u").is_not_null(),
    [("id", "<", 10)],
    col("cat") == "red",
    col("lst").is_not_null(),
    col("st").is_null(),
    [[("f", ">", 0.1)], [("s_low", "in", ["WARN", "ERROR"])]],
    col("id").isin([1, 3, 5, 7]),
    col("mp").is_null() | (col("id") < 4),
    col("ts").is_not_null() & (col("f") != 1.5),
)


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    opts, choice = data[0], data[1]
    buf = bytearray(data[2:]) if opts & 0x20 else data[2:]
    output = OUTPUTS[opts & 3]
    try:
        got = qdf.decode(
            buf,
            columns=PROJECTIONS[choice & 15],
            filter=FILTERS[choice >> 4],
            output=output,
            categories=bool(opts & 4) or None,
            no_copy=bool(opts & 8),
            threads=2 if opts & 0x10 else False,
        )
    except qdf.QdfError:
        return
    if output == "arrow":
        got.validate(full=True)


if __name__ == "__main__":
    fuzz(test_one_input)
