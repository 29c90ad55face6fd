"""Inputs the fuzz harnesses (fuzz/) found, minimised: each must now fail with a typed QdfError.

Each test names the harness that found the input and the exception that escaped
before the fix; the fix is described where it was made.
"""

from __future__ import annotations

import struct
import sys
import zlib

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf
from qdf_columnar.io.layout import MAGIC, TRAILER_SIZE
from qdf_columnar.wire.values import dumps, loads


def _refooter(data: bytes, change) -> bytes:
    """``data`` (a .qdf file) with its footer map passed through ``change`` and the trailer resealed."""
    flen = struct.unpack_from("<Q", data, len(data) - TRAILER_SIZE)[0]
    at = len(data) - TRAILER_SIZE - flen
    meta = loads(data[at:at + flen])
    change(meta)
    footer = dumps(meta, mode="balanced")
    return data[:at] + footer + struct.pack("<QI4s", len(footer), zlib.crc32(footer), MAGIC)


@pytest.mark.parametrize("key", ["07", "c0"])  # the int 7, None
@pytest.mark.parametrize("decoder", ["decode", "read_all"])
def test_row_map_key_that_is_not_a_str(key: str, decoder: str) -> None:
    """fuzz_read_qdf: a row-major row group whose map key is an int escaped as a bare
    TypeError from pa.table() ("expected bytes, int found"); None became a column "None"."""
    buf = bytes.fromhex("5144460100" + "a1d501" + key + "01")  # [{<key>: 1}]
    assert loads(buf) in ([{7: 1}], [{None: 1}])
    with pytest.raises(qdf.DecodeError, match="is not a column name") as e:
        if decoder == "decode":
            qdf.decode(buf)
        else:  # the same rows through a stream
            qdf.StreamReader(buf[:5] + bytes([len(buf) - 5]) + buf[5:]).read_all()
    assert e.value.offset is not None


def test_footer_schema_with_a_field_name_that_is_not_utf8(tmp_path) -> None:
    """fuzz_read_qdf: Arrow reads a schema whose field name is not UTF-8 and fails only on
    ``schema.names``: a UnicodeDecodeError escaped from the footer parser."""
    path = tmp_path / "f.qdf"
    qdf.write_qdf(pd.DataFrame({"id": np.arange(5), "s\u0430": list("abcde")}), path)
    data = path.read_bytes()

    def break_name(meta: dict) -> None:
        assert "s\u0430".encode() in meta["schema"]
        meta["schema"] = meta["schema"].replace("s\u0430".encode(), b"s\xd0\x41")  # a lone lead byte

    path.write_bytes(_refooter(data, break_name))
    with pytest.raises(qdf.CorruptDataError, match="not an Arrow IPC schema") as e:
        qdf.read_qdf(path)
    assert e.value.offset is not None


def test_fixint_shape_key_in_a_one_shot_loads() -> None:
    """fuzz_loads: a map-shape declaration (EC 00 <n>) whose first key is the fixint 0x4F.
    The one-shot kernel (no validating pass) skipped the key without storing it, then read
    the shape's keys from heap bytes never written: garbage keys, or, with a heap left by an
    earlier call, a UnicodeDecodeError from pickle.loads."""
    buf = bytes.fromhex("5144460103" "ec0004" "4f" "8169" "66" "827534" "8100" "5555" "01")
    for _ in range(2):  # the second call reuses the pooled state of the first
        with pytest.raises(qdf.CorruptDataError, match="map shape key has tag 0x4f") as e:
            qdf.loads(buf)
        assert e.value.offset == 8


@pytest.fixture()
def default_recursion_limit():
    """The interpreter's default limit, as in a process that never called loads() (other
    tests raise it for the whole session)."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(max(before, sys.getrecursionlimit()))


@pytest.mark.parametrize("output", ["pandas", "records"])
def test_deeply_nested_row_values_through_decode(output: str, default_recursion_limit) -> None:
    """fuzz_decode: a few hundred nested lists in a row-major batch escaped as RecursionError:
    only loads() raised the interpreter's recursion limit for MAX_DEPTH levels."""
    nested = b"\xa1" * 400 + b"\x01"  # [[[...[1]...]]]
    with pytest.raises(qdf.DecodeError, match="not a table"):
        qdf.decode(b"QDF\x01\x00" + nested, output=output)
    row = b"\xa1\xd5\x01\x81a" + nested  # [{"a": [[...[1]...]]}]
    got = qdf.decode(b"QDF\x01\x00" + row, output="records")
    depth, v = 0, got[0]["a"]
    while isinstance(v, list):
        depth, v = depth + 1, v[0]
    assert (depth, v) == (400, 1)


def test_footer_schema_with_an_unknown_time_zone(tmp_path) -> None:
    """fuzz_read_qdf: a footer schema whose timestamp zone is not a zone name; Arrow reads it
    and the ArrowInvalid escaped from the pandas conversion at the end of read_qdf."""
    path = tmp_path / "f.qdf"
    qdf.write_qdf(pd.DataFrame({"ts": pd.date_range("2026-01-01", periods=3, tz="Europe/Paris")}), path)

    def break_zone(meta: dict) -> None:
        meta["schema"] = meta["schema"].replace(b"Europe/Paris", b"Europe/Pxris")

    path.write_bytes(_refooter(path.read_bytes(), break_zone))
    with pytest.raises(qdf.CorruptDataError, match="not an Arrow IPC schema") as e:
        qdf.read_qdf(path)
    assert e.value.offset is not None



#: fuzz_loads, crash-eea31120: nested hybrid containers whose residual int column holds ints
#: no one Arrow type can (a negative one next to one above 2**63).
RESIDUAL_INT_OVERFLOW = bytes.fromhex(
    "5144460103f7180001826964ff7400736c824000000000007300000051335144460103f7180001826964ff7400004000"
    "00004144462c3a0000005144460100b8c32fc3c3c3c3c3c3c3c3514646c3c3000000000000c3c3004446c301590103f7"
    "180001826964ff740073c56c8240000000000073f7180001826964ff740000400000004144462c3a0000000000000000"
    "00c6ff640044460103f7180001826964ff740073c56c8240000000000073000000f40073000000000000000000414446"
    "2c3a00000000"
)


def test_residual_ints_beyond_one_arrow_type() -> None:
    """fuzz_loads: pa.array() of such a residual column raised a bare OverflowError."""
    with pytest.raises(qdf.CorruptDataError, match="residual values do not form one Arrow type") as e:
        qdf.loads(RESIDUAL_INT_OVERFLOW)
    assert e.value.column == "id"
