"""The Dense state machine (intern table, E8/E1/EA/E9 choice, MRU ring, pair predictor, shapes).

Expected bytes are derived by hand from the Go reference's ``emitStateRef`` /
``WriteString`` / ``readStringBytes`` rules (see qdf_columnar/wire/dense.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qdf_columnar.errors import CorruptDataError, DecodeError, TruncatedError
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.varint import encode_uvarint
from qdf_columnar.options import Options
from qdf_columnar.wire.dense import MAX_STATE_ENTRIES, DenseReader, DenseWriter
from qdf_columnar.wire.values import dumps, loads

BAL = Options.BALANCED


def _name(i: int) -> bytes:
    return b"s%04d" % i


def _primed(opts: Options, n: int) -> tuple[DenseWriter, bytearray]:
    w = DenseWriter(opts)
    out = bytearray()
    for i in range(n):
        w.write_str(out, _name(i))
    return w, out


def _read_all(buf: bytes) -> list[bytes]:
    r = ByteReader(buf)
    d = DenseReader()
    got = []
    while r.remaining:
        got.append(d.read_str(r, r.u8()))
    return got


def test_intern_then_repeat_and_short_inline() -> None:
    w = DenseWriter(BAL)
    out = bytearray()
    for s in (b"abcd", b"abcd", b"ab", b"abcd", b"wxyz", b"abcd"):
        w.write_str(out, s)
    # E0 (id 0), E8, inline fixstr (resets lastID), E1 00 (not E8: lastID was reset),
    # E0 (id 1), E1 00 (id < 128 always takes the 2-byte raw ref).
    assert bytes(out) == bytes.fromhex("e0 04 61626364 e8 82 6162 e1 00 e0 04 7778797a e1 00")
    assert _read_all(bytes(out)) == [b"abcd", b"abcd", b"ab", b"abcd", b"wxyz", b"abcd"]


def test_binary_uses_e2_with_ids_from_the_shared_counter() -> None:
    w = DenseWriter(BAL)
    out = bytearray()
    w.write_str(out, b"\x00\x01\x02\x03", binary=True)
    w.write_str(out, b"xy", binary=True)
    w.write_str(out, b"\x00\x01\x02\x03")  # same bytes as a str: an id of its own (keeps the type)
    w.write_str(out, b"\x00\x01\x02\x03", binary=True)
    assert bytes(out) == bytes.fromhex("e2 04 00010203 d0 02 7879 e0 04 00010203 e1 00")
    d = DenseReader()
    r = ByteReader(bytes(out))
    assert d.read_str(r, r.u8()) == b"\x00\x01\x02\x03" and d.last_bin
    assert d.read_str(r, r.u8()) == b"xy" and d.last_bin
    assert d.read_str(r, r.u8()) == b"\x00\x01\x02\x03" and not d.last_bin
    assert d.read_str(r, r.u8()) == b"\x00\x01\x02\x03" and d.last_bin


def test_mtf_pair_and_repeat_for_large_ids() -> None:
    w, out = _primed(BAL, 200)  # ids 0..199; ring holds 72..199, newest 199
    mark = len(out)
    w.write_str(out, _name(150))  # ring rank 49 -> E9 31
    w.write_str(out, _name(160))  # ring: 150,199,...,160 at 40 -> E9 28
    w.write_str(out, _name(150))  # ring: 160,150 -> E9 01
    w.write_str(out, _name(160))  # predictor: after 150 came 160 -> EA 00
    w.write_str(out, _name(160))  # same as lastID -> E8
    w.write_str(out, b"ab")  # inline, lastID invalid
    w.write_str(out, _name(160))  # no prev: ring rank 0 -> E9 00
    w.write_str(out, _name(5))  # id < 128 -> E1 05
    assert bytes(out[mark:]) == bytes.fromhex("e9 31 e9 28 e9 01 ea 00 e8 82 6162 e9 00 e1 05")
    assert _read_all(bytes(out))[200:] == [_name(i) for i in (150, 160, 150, 160, 160)] + [
        b"ab",
        _name(160),
        _name(5),
    ]


def test_ring_miss_falls_back_to_raw_ref() -> None:
    w, out = _primed(BAL, 300)  # ring holds 172..299
    mark = len(out)
    w.write_str(out, _name(130))
    assert bytes(out[mark:]) == b"\xe1" + encode_uvarint(130)
    assert _read_all(bytes(out))[-1] == _name(130)


def test_options_gate_mtf_and_pair() -> None:
    for opts, expected in (
        (Options.DENSE, "e1 9601 e1 a001 e1 9601 e1 a001"),  # neither MTF nor pair
        (Options.DENSE | Options.PAIR_PRED, "e1 9601 e1 a001 e1 9601 ea 00"),
        (Options.DENSE | Options.MTF, "e9 31 e9 28 e9 01 e9 01"),
    ):
        w, out = _primed(opts, 200)
        mark = len(out)
        for i in (150, 160, 150, 160):
            w.write_str(out, _name(i))
        assert bytes(out[mark:]) == bytes.fromhex(expected), opts
        assert _read_all(bytes(out))[200:] == [_name(i) for i in (150, 160, 150, 160)]


def test_not_dense_is_always_inline() -> None:
    w = DenseWriter(Options.QPACK)
    out = bytearray()
    w.write_str(out, b"abcd")
    w.write_str(out, b"abcd")
    w.write_str(out, b"abcd", binary=True)
    assert bytes(out) == bytes.fromhex("84 61626364 84 61626364 d0 04 61626364")


def test_inline_length_forms() -> None:
    w = DenseWriter(Options.SPEED)
    for n, head in ((31, "9f"), (32, "cd 20"), (255, "cd ff"), (256, "ce 0001"), (70000, "cf 70110100")):
        out = bytearray()
        w.write_str(out, b"x" * n)
        assert bytes(out[: len(bytes.fromhex(head))]) == bytes.fromhex(head)
        assert len(out) == len(bytes.fromhex(head)) + n
        assert _read_all(bytes(out)) == [b"x" * n]
    for n, head in ((0, "d0 00"), (255, "d0 ff"), (256, "d1 0001"), (70000, "d2 70110100")):
        out = bytearray()
        w.write_str(out, b"x" * n, binary=True)
        assert bytes(out[: len(bytes.fromhex(head))]) == bytes.fromhex(head)


def test_table_full_goes_inline_and_resets_last_id() -> None:
    w, out = _primed(BAL, MAX_STATE_ENTRIES)
    mark = len(out)
    w.write_str(out, b"fresh")  # table full: inline, lastID reset
    w.write_str(out, _name(MAX_STATE_ENTRIES - 1))  # would have been E8 without the reset
    w.write_str(out, b"fresh")  # still inline: it was never interned
    tail = bytes(out[mark:])
    assert tail.startswith(bytes.fromhex("85 6672657368"))
    assert tail[6] != 0xE8
    assert tail.endswith(bytes.fromhex("85 6672657368"))
    got = _read_all(bytes(out))
    assert got[-3:] == [b"fresh", _name(MAX_STATE_ENTRIES - 1), b"fresh"]


def test_shape_ids() -> None:
    w = DenseWriter(BAL)
    assert w.shape_id(("a", "b")) == (1, True)
    assert w.shape_id(("b", "a")) == (2, True)  # order matters: it is the field order
    assert w.shape_id(("a", "b")) == (1, False)
    buf = dumps([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], "balanced")
    assert buf == bytes.fromhex("51444601 03 a2 ec 00 02 826964 e0 04 6e616d65 01 8161 ec 01 02 8162")
    assert loads(buf) == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]


def test_nested_shape_ids_follow_declaration_order() -> None:
    obj = [{"k": {"x": 1}}, {"k": {"x": 2}}, {"x": 3}]
    buf = dumps(obj, "balanced")
    # outer shape 1 declared before its value declares inner shape 2
    assert buf == bytes.fromhex("51444601 03 a3 ec 00 01 816b ec 00 01 8178 01 ec 01 ec 02 02 ec 02 03")
    assert loads(buf) == obj


# ----------------------------------------------------------------- decoder errors
@pytest.mark.parametrize(
    "body",
    [
        "e8",  # repeat with no previous id
        "e1 00",  # unknown id
        "e0 04 61626364 e1 01",  # id 1 not interned
        "ea 00",  # pair with no previous id
        "e0 04 61626364 ea 00",  # no successor recorded for id 0
        "e0 04 61626364 e0 04 62626364 e1 00 ea 01",  # pair rank must be 0
        "e9 00",  # empty ring
        "e0 04 61626364 e9 01",  # ring slot 1 empty
        "e0 04 61626364 e9 c801",  # rank 200: ring miss and LRU too short
        "e1 ffffffffffffffffff01",  # huge id
    ],
)
def test_bad_state_references(body: str) -> None:
    with pytest.raises(CorruptDataError):
        _read_all(bytes.fromhex(body))


def test_state_ref_truncations() -> None:
    for body in ("e1", "e9", "ea", "e0", "e0 05 6162", "e0 80"):
        with pytest.raises(TruncatedError):
            _read_all(bytes.fromhex(body))


def test_mtf_rank_past_the_ring_walks_the_lru() -> None:
    # Go's decoder falls back to its LRU chain for ranks >= 128 (our encoder never writes them).
    _, out = _primed(BAL, 200)
    out += b"\xe9" + encode_uvarint(150)
    assert _read_all(bytes(out))[-1] == _name(199 - 150)


def test_decoder_rejects_too_many_interns() -> None:
    d = DenseReader()
    d.values = [b"x"] * 0xFFFF
    d.kinds = bytearray(0xFFFF)
    d.strs = [None] * 0xFFFF
    r = ByteReader(bytes.fromhex("04 61626364"))
    with pytest.raises(CorruptDataError):
        d.read_str(r, 0xE0)


def test_read_str_returns_none_for_other_tags() -> None:
    r = ByteReader(b"\x01")
    assert DenseReader().read_str(r, 0xC0) is None
    assert r.pos == 0


# ----------------------------------------------------------------- property
_POOL = [b"v%03d" % i for i in range(260)] + [b"ab", b"", b"xyz"]


@settings(max_examples=200, deadline=None)
@given(
    seq=st.lists(st.tuples(st.integers(0, len(_POOL) - 1), st.booleans()), max_size=600),
    opts=st.sampled_from([Options.DENSE, BAL, Options.DENSE | Options.MTF, Options.DENSE | Options.PAIR_PRED]),
)
def test_writer_reader_mirror(seq: list[tuple[int, bool]], opts: Options) -> None:
    w = DenseWriter(opts)
    out = bytearray()
    for i, binary in seq:
        before = len(out)
        w.write_str(out, _POOL[i], binary=binary)
        # Never larger than the plain E1 reference (or the inline form for fresh values).
        assert len(out) - before <= max(3, len(_POOL[i]) + 2)
    assert _read_all(bytes(out)) == [_POOL[i] for i, _ in seq]


def test_mutated_state_streams_fail_cleanly() -> None:
    w, out = _primed(BAL, 140)
    for i in (130, 135, 130, 135, 135, 2, 139):
        w.write_str(out, _name(i))
    buf = bytes(out)
    for pos in range(len(buf) - 40, len(buf)):
        for b in (0x00, 0xFF, 0x80, 0xE1, 0xE8, 0xE9, 0xEA, 0xE0):
            bad = buf[:pos] + bytes((b,)) + buf[pos + 1 :]
            try:
                _read_all(bad)
            except DecodeError:
                pass
