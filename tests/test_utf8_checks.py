"""Every decoded string column is valid UTF-8, or the decode raises CorruptDataError.

The decoder skips Arrow's full UTF-8 validation when a column's bytes are all ASCII
(a word-wide check); a column with any byte >= 0x80 is validated in full. Damage
that puts an invalid byte into a string body must still be caught, whichever block
form carries the strings, and valid non-ASCII text must still decode.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

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
