"""Damaged, truncated, foreign and hostile .qdf files raise typed errors (docs/FORMAT.md §4.5).

Contract: a damaged row group raises CorruptDataError naming the row group and its byte
offset, and ``on_error="skip"`` reads every other group (with a warning); a damaged,
truncated or hostile footer raises a DecodeError subclass, never another exception,
a hang or an unbounded allocation.
"""

from __future__ import annotations

import random
import struct
import warnings
import zlib

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf
from qdf_columnar.io.layout import HEADER, MAGIC, TRAILER_SIZE
from qdf_columnar.wire.values import dumps, loads


@pytest.fixture(params=[2, 1], ids=["v2", "v1"])
def written(tmp_path, request):
    df = pd.DataFrame({"x": np.arange(100), "s": [f"s{i % 13}" for i in range(100)], "f": np.linspace(0, 1, 100)})
    path = tmp_path / "f.qdf"
    qdf.write_qdf(df, path, row_group_size=20, format_version=request.param)
    return path, df


def _damaged_span(g, at: int) -> int:
    """Where a read reports damage at byte ``at`` of group ``g``: the group (v1) or the chunk holding it (v2)."""
    return next((c.offset for c in g.chunks if c.offset <= at < c.offset + c.length), g.offset)


def _footer(data: bytes) -> tuple[int, bytes]:
    flen = struct.unpack_from("<Q", data, len(data) - TRAILER_SIZE)[0]
    at = len(data) - TRAILER_SIZE - flen
    return at, data[at:at + flen]


def _with_footer(data: bytes, footer: bytes) -> bytes:
    at, _ = _footer(data)
    return data[:at] + footer + struct.pack("<QI4s", len(footer), zlib.crc32(footer), MAGIC)


def test_corrupted_row_group_is_named_and_skippable(written):
    path, df = written
    f = qdf.QdfFile(path)
    g = f.row_groups[2]
    f.close()
    data = bytearray(path.read_bytes())
    data[g.offset + g.length // 2] ^= 0x5A
    path.write_bytes(bytes(data))
    with pytest.raises(qdf.CorruptDataError, match="checksum mismatch") as e:
        qdf.read_qdf(path)
    where = _damaged_span(g, g.offset + g.length // 2)
    assert e.value.row_group == 2 and e.value.offset == where
    assert f"byte {where}" in str(e.value) and "row group 2" in str(e.value)
    with pytest.warns(qdf.QdfWarning, match="row group 2"):
        got = qdf.read_qdf(path, on_error="skip")
    want = df.drop(index=range(40, 60)).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    # Row groups a filter prunes are never even checked.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(qdf.read_qdf(path, filter=qdf.col("x") < 40)) == 40


def test_bad_bytes_behind_a_valid_checksum_are_located(written):
    """A writer bug or a hostile file: the group's CRC matches but its v1 body is garbage."""
    path, df = written
    data = path.read_bytes()
    at, footer = _footer(data)
    meta = loads(footer)
    table = meta["chunks"] if "chunks" in meta else meta["row_groups"]
    k = 1 * 3 if "chunks" in meta else 1  # v2: chunk 0 (column x) of group 1; v1: group 1
    off, length = int(table["offset"][k]), int(table["length"][k])
    bad = bytearray(data)
    bad[off + 5:off + length] = b"\xff" * (length - 5)
    table["crc32"][k] = zlib.crc32(bytes(bad[off:off + length]))
    path.write_bytes(_with_footer(bytes(bad), dumps(meta, mode="balanced")))
    with pytest.raises(qdf.DecodeError) as e:
        qdf.read_qdf(path)
    assert e.value.row_group == 1 and e.value.offset >= off
    with pytest.warns(qdf.QdfWarning, match="row group 1"):
        got = qdf.read_qdf(path, on_error="skip", columns=["x"])
    assert got["x"].tolist() == [*range(20), *range(40, 100)]


def test_truncated_files(written):
    path, _ = written
    data = path.read_bytes()
    for cut in [0, 1, 4, 8, 20, len(data) // 2, len(data) - TRAILER_SIZE, len(data) - 1]:
        path.write_bytes(data[:cut])
        with pytest.raises(qdf.DecodeError) as e:
            qdf.QdfFile(path)
        if cut >= len(HEADER):
            assert isinstance(e.value, qdf.TruncatedError), (cut, e.value)


@pytest.mark.parametrize("content,error,match", [
    (b"", qdf.TruncatedError, "shorter"),
    (b"PAR1" + b"\0" * 100, qdf.CorruptDataError, "not a .qdf file"),
    (bytes(range(256)) * 4, qdf.CorruptDataError, "not a .qdf file"),
    (HEADER + b"\0" * 40, qdf.TruncatedError, "trailing magic"),
    (b"QDFC\x03\x00\x00\x00" + b"\0" * 40, qdf.UnsupportedVersionError, "version 3"),
])
def test_foreign_and_garbage_files(tmp_path, content, error, match):
    path = tmp_path / "g.qdf"
    path.write_bytes(content)
    with pytest.raises(error, match=match):
        qdf.read_qdf(path)


def test_plain_v1_buffer_is_pointed_at_decode(tmp_path):
    path = tmp_path / "v1.qdf"
    path.write_bytes(qdf.encode({"x": list(range(30))}))
    with pytest.raises(qdf.DecodeError, match=r"qdf.decode\(\)"):
        qdf.read_qdf(path)


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        qdf.read_qdf("/nonexistent/dir/x.qdf")


def test_damaged_footer_fails_its_checksum(written):
    path, _ = written
    data = bytearray(path.read_bytes())
    at, footer = _footer(bytes(data))
    data[at + len(footer) // 2] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(qdf.CorruptDataError, match="footer checksum"):
        qdf.QdfFile(path)


def _hostile(meta: dict) -> list[dict]:
    """Footers with a valid checksum and a lie inside."""
    import copy

    out = []

    def variant(fn):
        m = copy.deepcopy(meta)
        fn(m)
        out.append(m)

    g, st = "row_groups", "stats"

    def put(m, key, field, i, value):  # set element i of a directory / statistics array
        arr = m[key][field] if isinstance(field, str) else m[key][field[0]][field[1]]
        arr = arr.astype(object) if isinstance(value, (str, float)) or value < 0 else arr.copy()
        arr[i] = value
        if isinstance(field, str):
            m[key][field] = list(arr) if arr.dtype == object else arr
        else:
            m[key][field[0]][field[1]] = list(arr) if arr.dtype == object else arr

    variant(lambda m: put(m, g, "offset", 0, 0))
    variant(lambda m: put(m, g, "offset", 1, int(m[g]["offset"][0])))
    variant(lambda m: put(m, g, "length", -1, 10**12))
    variant(lambda m: put(m, g, "rows", 0, 2**40))
    variant(lambda m: put(m, g, "rows", 0, -1))
    variant(lambda m: put(m, g, "crc32", 0, "x"))
    variant(lambda m: m[g].update(rows=m[g]["rows"][:-1]))  # arrays of different lengths
    variant(lambda m: m.update(num_rows=m["num_rows"] + 1))
    variant(lambda m: m.update(schema=b"\xff" * 64))
    variant(lambda m: m.update(schema="not bytes"))
    variant(lambda m: m.update(row_groups={"a": 1}))
    variant(lambda m: m.update(row_groups=[1, 2]))
    variant(lambda m: m.update(version=[9, 0]))
    variant(lambda m: m.update(checksum="md5"))
    variant(lambda m: m.pop("format"))
    variant(lambda m: m.update(stats=[]))
    variant(lambda m: m[st].__setitem__(0, "not a buffer"))

    def stats_variant(fn):  # a lie inside one column's statistics buffer
        def change(m):
            cols = [loads(b) for b in m[st]]
            fn(cols)
            m[st] = [dumps(c, mode="balanced") for c in cols]
        variant(change)

    def put_stat(cols, col, key, i, value):
        put({"s": cols[col]}, "s", key, i, value)

    stats_variant(lambda c: c[0].update(lo=["a"] * len(c[0]["lo"])))
    stats_variant(lambda c: put_stat(c, 0, "lo", 0, 10**6))  # min > max
    stats_variant(lambda c: put_stat(c, 0, "n", 0, 10**9))
    stats_variant(lambda c: put_stat(c, 2, "lo", 0, float("nan")))
    stats_variant(lambda c: put_stat(c, 1, "nan", 0, 3))  # NaNs in a string column
    stats_variant(lambda c: c[0].pop("exact"))
    stats_variant(lambda c: c.__setitem__(1, [1, 2]))
    variant(lambda m: m.update(dictionaries={"x": b"junk"}))
    variant(lambda m: m.update(dictionaries={"nope": b""}))
    return out


def test_hostile_footers_raise_corrupt_data(written):
    path, _ = written
    data = path.read_bytes()
    _, footer = _footer(data)
    meta = loads(footer)
    for i, bad in enumerate(_hostile(meta)):
        path.write_bytes(_with_footer(data, dumps(bad, mode="balanced")))
        with pytest.raises(qdf.DecodeError):  # at open, or when a column's statistics are first used
            f = qdf.QdfFile(path)
            for g in f.row_groups:
                list(g.statistics.values())
        assert i >= 0
    path.write_bytes(_with_footer(data, dumps([1, 2, 3])))
    with pytest.raises(qdf.CorruptDataError):
        qdf.QdfFile(path)
    path.write_bytes(_with_footer(data, b"QDF\x01\xc0\xc0"))  # trailing bytes after the root value
    with pytest.raises(qdf.CorruptDataError):
        qdf.QdfFile(path)


def test_footer_mutations_never_escape_as_other_exceptions(written):
    """Bit flips inside the footer with a recomputed checksum: a DecodeError or a valid file."""
    path, _ = written
    data = path.read_bytes()
    _, footer = _footer(data)
    rng = random.Random(5)
    for _ in range(250):
        mutated = bytearray(footer)
        pos = rng.randrange(5, len(mutated))
        mutated[pos] = rng.choice([mutated[pos] ^ (1 << rng.randrange(8)), 0x00, 0xFF])
        path.write_bytes(_with_footer(data, bytes(mutated)))
        try:
            f = qdf.QdfFile(path)
        except qdf.DecodeError:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", qdf.QdfWarning)
                f.read(on_error="skip", output="arrow")
        except (qdf.DecodeError, qdf.QueryError):
            pass
        f.close()
