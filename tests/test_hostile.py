"""Hostile input never crashes, hangs or over-allocates: it raises a DecodeError subclass.

Every strict prefix of every golden vector is TruncatedError; single-byte mutations of
valid buffers raise DecodeError or decode; absurd declared sizes fail without allocating.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf
from qdf_columnar.format.tags import ContainerTag

GOLDEN = {
    "speed_map": bytes.fromhex("514446010 0d50382747307856c6576656c834552528463 6f6465c4f401".replace(" ", "")),
    "qpack_arange": bytes.fromhex("5144460102e60700d00f020a"),
    "qpack_bools": bytes.fromhex("5144460102e3094b01"),
    "id_name_qpack": bytes.fromhex("5144460102d5028269642a846e616d6585616c696365"),
    "id_name_balanced": bytes.fromhex("5144460103ec000282696de0046e616d652ae005616c696365".replace("696de0", "6964e0")),
    "cols16": bytes.fromhex("5144460103ef10000282696400826f6b03e607000202 10e310aaaa".replace(" ", "")),
    "cols16_index": bytes.fromhex(
        "514446010bef10000282696400826f6b030600000004000000e607000202 10e310aaaa".replace(" ", "")
    ),
}


def _decoders():
    yield lambda b: qdf.loads(b)
    yield lambda b: qdf.decode(b, output="arrow")


def _sample_batches() -> list[bytes]:
    rng = np.random.default_rng(3)
    n = 40
    df = pd.DataFrame(
        {
            "id": np.arange(n),
            "code": rng.choice([200, 500], n),
            "lvl": rng.choice(["INFO", "ERROR", "WARN"], n),
            "t": [f"{x:016x}" for x in rng.integers(0, 2**60, n)],
            "u": pd.array([None if i % 3 else i for i in range(n)], dtype="Int64"),
            "f": rng.random(n),
            "ts": pd.date_range("2026-01-01", periods=n, freq="s", tz="UTC"),
        }
    )
    return [qdf.encode(df), qdf.encode(df, column_index=False)]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_prefixes_are_truncated(name: str) -> None:
    buf = GOLDEN[name]
    qdf.loads(buf)  # the whole vector is valid
    for k in range(len(buf)):
        with pytest.raises(qdf.TruncatedError):
            qdf.loads(buf[:k])


def test_batch_prefixes_are_truncated() -> None:
    for buf in _sample_batches():
        qdf.decode(buf)
        for k in range(len(buf)):
            with pytest.raises(qdf.TruncatedError):
                qdf.decode(buf[:k], output="arrow")


@pytest.mark.timeout(300)
def test_single_byte_mutations() -> None:
    bufs = list(GOLDEN.values()) + _sample_batches()
    for buf in bufs:
        for pos in range(len(buf)):
            for v in (0x00, 0xFF, 0x80, 0x7F, 0xE5, 0xF5, 0xF8, buf[pos] ^ 0x01, buf[pos] ^ 0x40):
                bad = bytearray(buf)
                bad[pos] = v
                for dec in _decoders():
                    try:
                        dec(bytes(bad))
                    except qdf.DecodeError:
                        pass
                    except qdf.QueryError:
                        pass


def test_absurd_row_count_fails_without_allocating() -> None:
    from qdf_columnar.format.varint import encode_uvarint

    # EF with 2**40 rows, one int column whose FOR body has zero bits (no bytes per row).
    body = bytes([ContainerTag.COL_STRUCT]) + encode_uvarint(2**40) + b"\x00\x01\x81a\x00"
    body += b"\xe5\x07\x00\x00" + encode_uvarint(2**40)
    with pytest.raises(qdf.CorruptDataError):
        qdf.decode(b"QDF\x01\x03" + body)
    # The same count inside a bare QPack payload.
    with pytest.raises(qdf.DecodeError):
        qdf.loads(b"QDF\x01\x02\xe5\x07\x00\x00" + encode_uvarint(2**40))
    # A map / array header declaring 2**40 entries.
    with pytest.raises(qdf.TruncatedError):
        qdf.loads(b"QDF\x01\x00\xd7\xff\xff\xff\xff")


def test_bad_headers() -> None:
    with pytest.raises(qdf.DecodeError):
        qdf.decode(b"PAR1xxxx")
    with pytest.raises(qdf.UnsupportedVersionError):
        qdf.decode(b"QDF\x02\x00\xc0")
    with pytest.raises(qdf.UnsupportedVersionError):
        qdf.decode(b"QDF\x01\x10\xc0")
    with pytest.raises(qdf.DecodeError):  # FlagRANS with an empty body: the root value is missing
        qdf.decode(b"QDF\x01\x04\x00")
    with pytest.raises(qdf.DecodeError):  # FlagRANS with an unknown blob tag
        qdf.decode(b"QDF\x01\x04\x05\x09")
