"""Every decoded string column is valid UTF-8, or the decode raises CorruptDataError.

The decoder skips Arrow's full UTF-8 validation when a column's bytes are all ASCII
(a word-wide check); a column with any byte >= 0x80 is validated in full. Damage
that puts an invalid byte into a string body must still be caught, whichever block
form carries the strings, and valid non-ASCII text must still decode.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.errors import CorruptDataError

MARK = b"QZQZ"


def _tables() -> dict[str, pa.Table]:
    unique = [f"row {i} QZQZ {i * 7919 % 1000}" for i in range(40)]  # a raw slab or FSST
    repeated = ["QZQZ alpha", "beta", "gamma"] * 30  # a dictionary block
    return {
        "unique": pa.table({"s": unique}),
        "repeated": pa.table({"s": repeated}),
        "nullable": pa.table({"s": pa.array([None if i % 3 == 0 else v for i, v in enumerate(unique)])}),
    }


@pytest.mark.parametrize("mode", ["speed", "balanced", "compression"])
@pytest.mark.parametrize("name", ["unique", "repeated", "nullable"])
def test_an_invalid_byte_in_a_string_body_is_corrupt(name: str, mode: str) -> None:
    t = _tables()[name]
    buf = qdf.encode(t, mode=mode, column_index=False)
    at = buf.find(MARK)
    if at < 0:
        pytest.skip(f"{mode} mode codes these strings (the marker is not verbatim)")
    bad = buf[: at + 1] + b"\xff" + buf[at + 2:]
    with pytest.raises(CorruptDataError, match="UTF-8"):
        qdf.decode(bad, output="arrow")


@pytest.mark.parametrize("mode", ["speed", "balanced", "compression"])
def test_non_ascii_text_decodes(mode: str) -> None:
    values = ["naïve", "café", "日本語", "plain", "emoji 🎉", "plain"] * 20
    t = pa.table({"s": values, "u": [f"{v} {i}" for i, v in enumerate(values)]})
    assert qdf.decode(qdf.encode(t, mode=mode), output="arrow").equals(t)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=6) | st.text(max_size=4).map(str.encode), max_size=12), st.booleans())
@example([b"\xc3", b"\xa9"], False)  # "é" cut in two: each half alone is invalid
@example([b"a\xe2\x82", b"", b"\xac!"], True)  # "€" cut around an empty value
def test_utf8_is_checked_as_a_whole_exactly_as_value_by_value(values: list[bytes], large: bool) -> None:
    """The whole-buffer check (valid bytes, no value starting inside a character) refuses
    exactly the columns in which some value is not valid UTF-8 on its own."""
    from qdf_columnar.wire.strcol_arrow import _check_utf8

    data = np.frombuffer(b"".join(values), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int64 if large else np.int32)
    arr = pa.Array.from_buffers(pa.large_string() if large else pa.string(), len(values),
                                [None, pa.py_buffer(offsets), pa.py_buffer(data.tobytes())])

    def valid(v: bytes) -> bool:
        try:
            v.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    if all(valid(v) for v in values):
        _check_utf8(arr, data, "bad")
    else:
        with pytest.raises(qdf.CorruptDataError):
            _check_utf8(arr, data, "bad")
