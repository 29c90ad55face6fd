"""F6 ColStrFSST blocks: round trips, the reference's gate, and hostile input.

Blocks are also decoded by ``_go_decode``, a line-by-line port of the reference's
``UnmarshalSymbolTable`` + ``readStringColumnFSST`` + ``DecompressN``, so the layout we
write is checked against the Go reader's reading of it, not only against our kernels.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from qdf_columnar.codecs import fsst as fsst_codec
from qdf_columnar.codecs.fsst import read_fsst, scan_fsst, skip_fsst, try_write_fsst
from qdf_columnar.errors import CorruptDataError, DecodeError, TruncatedError
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import StrColTag
from qdf_columnar.format.varint import encode_uvarint


def _cols(strs: list[str | bytes]) -> tuple[np.ndarray, np.ndarray]:
    bs = [s.encode() if isinstance(s, str) else s for s in strs]
    off = np.zeros(len(bs) + 1, np.int64)
    np.cumsum([len(b) for b in bs], out=off[1:])
    return off, np.frombuffer(b"".join(bs), np.uint8).copy()


def _urls(rng: np.random.Generator, n: int) -> list[str]:
    hosts = ["www.example.com", "api.github.com", "cdn.jsdelivr.net", "docs.python.org", "en.wikipedia.org"]
    paths = ["users", "repos", "issues", "wiki", "static/js", "api/v1/items", "search"]
    return [f"https://{hosts[rng.integers(5)]}/{paths[rng.integers(7)]}/{rng.integers(100000)}"
            f"?id={rng.integers(10**6)}&ref={['home', 'mail', 'tw'][rng.integers(3)]}" for _ in range(n)]


def _logs(rng: np.random.Generator, n: int) -> list[str]:
    lv = ["INFO", "WARN", "ERROR", "DEBUG"]
    msgs = ["connection established to 10.0.{a}.{b}:{p}", "request GET /api/v1/orders/{i} completed in {t}ms",
            "user user{i} logged in from 10.0.{a}.{b}", "cache miss for key order:{i}",
            "retrying job {i} after timeout ({t}ms)"]
    return [f"2024-05-{rng.integers(1, 29):02d}T12:{rng.integers(60):02d}:{rng.integers(60):02d}Z "
            f"{lv[rng.integers(4)]} "
            + msgs[rng.integers(5)].format(a=rng.integers(256), b=rng.integers(256), p=rng.integers(1024, 65535),
                                           i=rng.integers(10**7), t=rng.integers(1000)) for _ in range(n)]


def _paths(rng: np.random.Generator, n: int) -> list[str]:
    parts = ["usr", "lib", "python3.12", "site-packages", "numpy", "core", "tests", "home", "alice", "src"]
    return ["/" + "/".join(parts[k] for k in rng.integers(10, size=rng.integers(2, 7)))
            + f"/file_{rng.integers(999)}.py" for _ in range(n)]


def _hex(rng: np.random.Generator, n: int) -> list[str]:
    return [rng.bytes(16).hex() for _ in range(n)]


def _utf8(rng: np.random.Generator, n: int) -> list[str]:
    words = ["привет", "мир", "数据", "压缩", "Straße", "über", "naïve", "😀", "κόσμε", "日本語テキスト"]
    return [" ".join(words[k] for k in rng.integers(10, size=rng.integers(0, 8))) for _ in range(n)]


def _go_decode(block: bytes, n: int) -> list[bytes]:
    """The reference reader (colstr_fsst.go readStringColumnFSST, fsst.go) in Python."""
    r = ByteReader(block, 1)
    cnt = r.uvarint()
    assert cnt <= 255
    syms = []
    for _ in range(cnt):
        ln = r.u8()
        assert 1 <= ln <= 8
        syms.append(r.take_bytes(ln))
    assert r.uvarint() == n
    total = r.uvarint()
    assert total <= 8 * r.remaining
    rows, size = [], 0
    for _ in range(n):
        codes = r.take_bytes(r.uvarint())
        out, i = bytearray(), 0
        while i < len(codes):
            c = codes[i]
            i += 1
            if c == 255:
                if i >= len(codes):
                    break
                out.append(codes[i])
                i += 1
            elif c < len(syms):
                out += syms[c]
        size += len(out)
        assert size <= total
        rows.append(bytes(out))
    assert r.remaining == 0
    return rows


def _check(strs: list[str | bytes], *, written: bool | None = True) -> bytes:
    """Write, gate-check, decode with both readers and skip; return the block ('' if declined)."""
    off, data = _cols(strs)
    n = len(strs)
    out = bytearray(b"\x99")  # the writer appends after existing bytes
    ok = try_write_fsst(out, off, data, n)
    if written is not None:
        assert ok == written
    if not ok:
        assert out == b"\x99"
        return b""
    block = bytes(out[1:])
    assert block[0] == StrColTag.FSST
    assert len(block) < int(off[-1]) + n  # the reference's never-larger gate
    want = [s.encode() if isinstance(s, str) else s for s in strs]
    assert _go_decode(block, n) == want
    buf = b"\x01\x02" + block + b"\x77tail"
    r = ByteReader(buf, 3)
    got_off, got_data = read_fsst(r, n)
    assert r.pos == 2 + len(block)
    assert got_off.dtype == np.int64 and got_data.dtype == np.uint8
    np.testing.assert_array_equal(got_off, off - off[0])
    assert got_data.tobytes() == data.tobytes()
    r = ByteReader(buf, 3)
    skip_fsst(r, n)
    assert r.pos == 2 + len(block)
    r = ByteReader(buf, 3)
    body = scan_fsst(r, n)  # framed, decoded later: whole, or only some rows
    assert r.pos == 2 + len(block)
    all_off, all_data = body.decode()
    np.testing.assert_array_equal(all_off, off - off[0])
    assert all_data.tobytes() == data.tobytes()
    rows = np.flatnonzero(np.random.default_rng(n).random(n) < 0.3)
    for pick in (rows, np.arange(n), np.array([n - 1]), np.array([], np.int64)):
        got_off, got_data = body.decode_rows(pick)
        assert [got_data[a:b].tobytes() for a, b in zip(got_off[:-1], got_off[1:])] == [want[i] for i in pick]
    return block


@pytest.mark.parametrize("gen", [_urls, _logs, _paths, _hex, _utf8])
@pytest.mark.parametrize("n", [16, 300])
def test_roundtrip_corpora(gen, n: int) -> None:
    _check(gen(np.random.default_rng(n), n), written=None if gen is _hex else True)


def test_roundtrip_100k_and_ratio() -> None:
    rng = np.random.default_rng(3)
    for gen, limit in ((_urls, 0.35), (_logs, 0.4)):
        strs = gen(rng, 100_000)
        block = _check(strs)
        assert len(block) < limit * sum(len(s) for s in strs)


def test_with_empty_strings_and_binary() -> None:
    rng = np.random.default_rng(5)
    strs: list[str | bytes] = [s if rng.random() < 0.6 else "" for s in _urls(rng, 500)]
    _check(strs)
    blobs: list[str | bytes] = [bytes([0, 255, 255, 1, 128]) * int(k) for k in rng.integers(0, 9, size=200)]
    _check(blobs)


def test_gate_declines() -> None:
    rng = np.random.default_rng(9)
    _check([], written=False)
    _check(["https://www.example.com/a"], written=False)  # 1 row
    _check([""] * 100, written=False)  # all empty
    _check(["https://www.example.com/users/1?ref=home"] * 15, written=False)  # n < 16
    _check(["https://www.example.com/users/1?ref=home"] * 16, written=True)  # gate boundary
    _check([rng.bytes(40) for _ in range(2000)], written=False)  # incompressible
    _check(["a"] * 16, written=False)  # one code byte + its length byte cannot beat 1 + 1
    _check(["ab"] * 16, written=True)


def test_sliced_offsets_and_determinism() -> None:
    strs = _logs(np.random.default_rng(2), 400)
    off, data = _cols(strs)
    a, b = bytearray(), bytearray()
    assert try_write_fsst(a, off[100:], data, 300)  # offsets not starting at 0
    assert try_write_fsst(b, off[100:], data, 300)
    assert a == b
    got_off, got_data = read_fsst(ByteReader(bytes(a), 1), 300)
    assert got_data.tobytes() == data[off[100]:].tobytes()
    np.testing.assert_array_equal(got_off, off[100:] - off[100])


@given(st.lists(st.sampled_from(["", "a", "ab", "abc", "http://", "héllo", "\x00\xff", "xyzxyzxyz", "/api/v1"]),
                min_size=16, max_size=120).flatmap(
    lambda toks: st.lists(st.lists(st.sampled_from(toks), max_size=12).map("".join), min_size=16, max_size=200)))
def test_property_roundtrip(strs: list[str]) -> None:
    _check(strs, written=None)


def _small_block() -> tuple[bytes, int]:
    strs = _urls(np.random.default_rng(11), 40)
    return _check(strs), 40


def test_every_prefix_raises() -> None:
    block, n = _small_block()
    for k in range(1, len(block)):
        for fn in (read_fsst, skip_fsst):
            with pytest.raises((TruncatedError, CorruptDataError)):
                fn(ByteReader(block[:k], 1), n)


def test_random_mutations_never_crash() -> None:
    block, n = _small_block()
    rng = np.random.default_rng(12)
    for _ in range(3000):
        b = bytearray(block)
        for p in rng.integers(1, len(b), size=rng.integers(1, 4)):
            b[p] = rng.integers(256)
        for fn in (read_fsst, skip_fsst):
            try:
                fn(ByteReader(bytes(b), 1), n)
            except DecodeError:
                pass


def _block(table: bytes, n: int, total: int, rows: bytes) -> bytes:
    return bytes([StrColTag.FSST]) + table + encode_uvarint(n) + encode_uvarint(total) + rows


def test_a_damaged_row_is_found_where_its_rows_are_decoded() -> None:
    """A late FSST block checks its framing at once and a row's codes when that row is
    decoded: a filtered read that keeps other rows succeeds, the damaged row fails."""
    import pyarrow as pa

    import qdf_columnar as qdf

    strs = _urls(np.random.default_rng(3), 400)
    t = pa.table({"k": np.arange(400), "s": strs})
    buf = bytearray(qdf.encode(t, mode="balanced"))
    assert qdf.explain(bytes(buf)).set_index("column").loc["s", "codec"] == "ColStrFSST"
    # Row 200's first code becomes an unknown symbol code (the table has fewer than 254).
    body = scan_fsst(_fsst_reader(bytes(buf)), 400)
    row = _row_position(body, 200)
    buf[row + 1] = 254  # after its 1-byte code length
    bad = bytes(buf)
    with pytest.raises(CorruptDataError, match="FSST codes"):
        qdf.decode(bad)
    kept = qdf.decode(bad, filter=qdf.col("k") < 100, output="arrow")
    assert kept.column("s").to_pylist() == strs[:100]
    with pytest.raises(CorruptDataError, match="FSST codes") as err:
        qdf.decode(bad, filter=qdf.col("k") == 200)
    assert err.value.column == "s"


def test_rows_that_end_before_their_column_body_are_corrupt() -> None:
    """With a column index the block's end comes from the index; a full decode checks
    the rows end exactly there (one byte of slack planted after them is reported)."""
    import pyarrow as pa

    import qdf_columnar as qdf
    from qdf_columnar.wire.colstruct_read import read_header
    from qdf_columnar.wire.context import DecodeContext

    strs = _urls(np.random.default_rng(4), 300)
    buf = qdf.encode(pa.table({"s": strs}), mode="balanced")
    r = ByteReader(buf, 6)
    h = read_header(r, DecodeContext(flags=buf[4]))
    info = h.columns[0]
    assert buf[info.start] == StrColTag.FSST and len(h.all_columns) == 1  # no schema note: one body, last
    index_at = h.body_start - 4 * len(h.all_columns)
    bad = bytearray(buf)
    bad[index_at: index_at + 4] = (info.length + 1).to_bytes(4, "little")
    bad[info.start + info.length: info.start + info.length] = b"\x00"
    assert qdf.decode(buf, output="arrow").column("s").to_pylist() == strs
    with pytest.raises(CorruptDataError, match="end 1 bytes before"):
        qdf.decode(bytes(bad))


def _fsst_reader(buf: bytes) -> ByteReader:
    """A reader just after the F6 tag of the only FSST column of a 2-column batch."""
    from qdf_columnar.wire.colstruct_read import read_header
    from qdf_columnar.wire.context import DecodeContext

    r = ByteReader(buf, 6)
    h = read_header(r, DecodeContext(flags=buf[4]))
    info = next(c for c in h.columns if c.name == "s")
    assert buf[info.start] == StrColTag.FSST
    return ByteReader(buf, info.start + 1)


def _row_position(body, row: int) -> int:
    """Byte offset of row ``row``'s code-length varint in a scanned block (1-byte lengths)."""
    r = body.r
    p = r.pos
    src = r.array()
    for _ in range(row):
        assert src[p] < 0x80
        p += 1 + int(src[p])
    return p


def test_huge_total_fails_before_allocating(monkeypatch) -> None:
    calls: list[int] = []
    real = fsst_codec.alloc.empty

    def spy(count: int, dtype):
        calls.append(count)
        return real(count, dtype)

    monkeypatch.setattr(fsst_codec.alloc, "empty", spy)
    for total in (2**60, 2**64 - 1, 8 * (48 - 16) + 1):  # 48 row bytes, 16 of them length bytes
        with pytest.raises(TruncatedError):
            read_fsst(ByteReader(_block(b"\x00", 16, total, b"\x02\xff\x41" * 16), 1), 16)
    assert calls == []
    with pytest.raises(TruncatedError):
        skip_fsst(ByteReader(_block(b"\x00", 16, 2**60, b"\x00" * 16), 1), 16)


@pytest.mark.parametrize(
    ("block", "err"),
    [
        (_block(encode_uvarint(256) + b"\x01a" * 256, 1, 1, b"\x01\x00"), CorruptDataError),  # > 255 symbols
        (_block(b"\x01\x00", 1, 0, b"\x00"), CorruptDataError),  # symbol length 0
        (_block(b"\x01\x09abcdefghi", 1, 9, b"\x01\x00"), CorruptDataError),  # symbol length 9
        (_block(b"\x01\x02ab", 2, 2, b"\x01\x00\x00"), CorruptDataError),  # n differs from the container
        (_block(b"\x01\x02ab", 1, 2, b"\x01\x01"), CorruptDataError),  # code 1 with one symbol
        (_block(b"\x01\x02ab", 1, 3, b"\x02\x00\xff"), CorruptDataError),  # dangling escape
        (_block(b"\x01\x02ab", 1, 3, b"\x01\x00"), CorruptDataError),  # decodes to less than total
        (_block(b"\x01\x02ab", 1, 1, b"\x01\x00"), CorruptDataError),  # decodes to more than total
        (_block(b"\x01\x02ab", 1, 2, b"\x05\x00"), TruncatedError),  # code length past the end
        (_block(b"\x02\x02ab", 1, 2, b"\x01\x00"), TruncatedError),  # table cut short
        (_block(b"\x00", 1, 2, b"\x01\x00"), CorruptDataError),  # empty table: only escapes valid
    ],
)
def test_hostile_blocks(block: bytes, err: type[DecodeError]) -> None:
    with pytest.raises(err):
        read_fsst(ByteReader(block, 1), 1)


def test_hand_built_reference_block() -> None:
    # Table ["ab", "c"], rows "abc", "", "zab" (z escaped), as Go's MarshalTo + Compress lay it out.
    block = _block(b"\x02\x02ab\x01c", 3, 6, b"\x02\x00\x01" + b"\x00" + b"\x03\xff\x7a\x00")
    off, data = read_fsst(ByteReader(block, 1), 3)
    assert off.tolist() == [0, 3, 3, 6] and data.tobytes() == b"abczab"
    assert _go_decode(block, 3) == [b"abc", b"", b"zab"]


# ---------------------------------------------------------------- the picker's limit, projection and training order


def test_limit_is_a_strict_gate() -> None:
    rng = np.random.default_rng(21)
    off, data = _cols(_urls(rng, 2000))
    full = fsst_codec.fsst_block(off, data, 2000)
    assert full is not None
    assert fsst_codec.fsst_block(off, data, 2000, limit=len(full)) is None  # must be strictly smaller
    assert fsst_codec.fsst_block(off, data, 2000, limit=len(full) + 1) == full
    out = bytearray()
    assert not try_write_fsst(out, off, data, 2000, limit=len(full)) and out == b""
    assert try_write_fsst(out, off, data, 2000, limit=len(full) + 1) and out == full


def test_lower_bound_declines_without_training(monkeypatch) -> None:
    calls: list[int] = []
    real = fsst_codec.ft.fsst_train_into
    monkeypatch.setattr(fsst_codec.ft, "fsst_train_into", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(22)
    off, data = _cols(_urls(rng, 500))
    # 500 rows need >= 500 code-length bytes + one code per 8 input bytes
    assert fsst_codec.fsst_block(off, data, 500, limit=500 + int(off[-1]) // 8) is None
    assert calls == []
    assert fsst_codec.fsst_block(off, data, 500) is not None and calls == [1]


def test_projection_skips_a_losing_encode(monkeypatch) -> None:
    calls: list[int] = []
    real = fsst_codec.fk.fsst_encode_into
    monkeypatch.setattr(fsst_codec.fk, "fsst_encode_into", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(23)
    strs = _hex(rng, 20000)  # 32 hex chars: FSST needs ~17.8 bytes a row, alphabet packing 16
    off, data = _cols(strs)
    assert int(off[-1]) > fsst_codec.PROJECT_MIN_BYTES
    assert fsst_codec.fsst_block(off, data, len(strs), limit=16 * len(strs)) is None
    assert calls == []  # projected from a held-out sample, never encoded
    block = fsst_codec.fsst_block(off, data, len(strs))  # against sum(len) + n it wins
    assert block is not None and calls == [1]
    assert _go_decode(bytes(block), len(strs)) == [s.encode() for s in strs]


@given(st.lists(st.integers(1, 40), min_size=0, max_size=400), st.integers(0, 2**32 - 1))
def test_rank_by_gain_is_a_stable_descending_sort(gains: list[int], seed: int) -> None:
    from qdf_kernels.fsst_train import _rank_by_gain

    got = _rank_by_gain(np.concatenate([np.asarray(gains, np.int64), np.full(8, 99, np.int64)]), len(gains))
    np.testing.assert_array_equal(got, np.argsort(-np.asarray(gains, np.int64), kind="stable"))


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 8), st.sampled_from([1, 8])), max_size=300))
def test_candidate_slots_count_and_weigh_each_key(adds: list[tuple[int, int, int]]) -> None:
    """The packed candidate table counts (bytes, length) keys exactly as a dict does."""
    from qdf_kernels.fsst_train import _cand_add, _gains

    slots = np.zeros(2 * 1024, np.uint64)
    used = np.empty(768, np.int64)
    n, want = 0, {}
    for v, ln, w in adds:
        n = _cand_add(slots, used, n, np.uint64(v), np.uint64(ln), np.int64(w))
        c, g = want.get((v, ln), (0, 0))
        want[(v, ln)] = (c + 1, g + w)
    got = {}
    for k, gain in zip(used[:n], _gains(slots, used, n)):
        meta = int(slots[2 * k + 1])
        got[(int(slots[2 * k]), meta & 0xFF)] = ((meta >> 8) & ((1 << 28) - 1), int(gain))
    assert got == want


def _length_bytes(block: bytes, n: int) -> list[int]:
    """How many bytes each row's code-length uvarint takes in an F6 block."""
    body = scan_fsst(ByteReader(block, 1), n)
    src, p, sizes = body.r.array(), body.r.pos, []
    for _ in range(n):
        k, length = 0, 0
        while True:
            b = int(src[p + k])
            length |= (b & 0x7F) << (7 * k)
            k += 1
            if b < 0x80:
                break
        sizes.append(k)
        p += k + length
    return sizes


def test_decode_rows_over_one_and_two_byte_lengths() -> None:
    """Chosen rows decode as the whole block does at those rows when the rows skipped on
    the way have code lengths of one uvarint byte (the framing's fast steps), of two (the
    checked steps) and of zero codes (empty strings)."""
    rng = np.random.default_rng(21)
    strs = [u * int(rng.integers(20, 40)) if k % 7 == 3 else ("" if k % 11 == 5 else u)
            for k, u in enumerate(_urls(rng, 700))]
    block = _check(strs)
    assert {1, 2} <= set(_length_bytes(block, len(strs)))  # the premise: both framings occur
    body = scan_fsst(ByteReader(block, 1), len(strs))
    for rows in (np.arange(len(strs)), np.sort(rng.choice(len(strs), 37, replace=False)),
                 np.array([3, 4, 5, 10, 699]), np.array([699]), np.array([0]), np.empty(0, np.int64)):
        off, data = body.decode_rows(rows)
        assert [data[off[j]: off[j + 1]].tobytes().decode() for j in range(len(rows))] == [strs[i] for i in rows]


def test_decode_rows_of_a_row_cut_short_is_truncated() -> None:
    """A block whose column body (from a column index) ends inside its last row: the rows
    before it decode, the cut row is reported truncated, wherever the walk meets it."""
    strs = _urls(np.random.default_rng(8), 300)
    block = _check(strs)
    cut = scan_fsst(ByteReader(block, 1), len(strs), end=len(block) - 3)
    off, data = cut.decode_rows(np.array([0, 298]))
    assert data[off[1]: off[2]].tobytes().decode() == strs[298]
    for rows in ([299], [0, 299], [298, 299]):
        with pytest.raises(TruncatedError, match="FSST codes"):
            cut.decode_rows(np.array(rows))


def _train(strs: list[str]) -> tuple[int, np.ndarray]:
    """(symbol count, stats: [final code bytes, code bytes under each round's table])."""
    from qdf_kernels import fsst as fk
    from qdf_kernels import fsst_train as ft

    off, data = _cols(strs)
    off.flags.writeable = data.flags.writeable = False
    sbuf = np.empty(ft.SAMPLE_TARGET + ft.SAMPLE_CHUNK, np.uint8)
    soff = np.empty(ft.SAMPLE_TARGET + ft.SAMPLE_CHUNK + 1, np.int64)
    m = ft.fsst_sample_into(data, off, np.int64(ft.SAMPLE_TARGET), sbuf, soff)
    stats = np.zeros(1 + ft.GENERATIONS, np.int64)
    n = ft.fsst_train_into(sbuf, soff, np.int64(m), float(len(data)) / int(soff[m]),
                           np.zeros(fk.MAX_SYMBOLS, np.uint64), np.zeros(fk.MAX_SYMBOLS, np.uint8),
                           np.zeros(fk.HASH_SIZE, np.uint64), np.zeros(fk.HASH_SIZE, np.uint16),
                           np.zeros(65536, np.uint16), np.zeros(256, np.uint16), stats)
    return int(n), stats


def test_training_stops_once_the_tables_stop_gaining_and_keeps_the_best() -> None:
    """A column whose tables settle stops growing after MIN_GENERATIONS + a few rounds; a
    column still gaining runs every round; either way the last round starts from the
    best scored table, so the final table codes the sample no worse than that best."""
    from qdf_kernels import fsst_train as ft

    rng = np.random.default_rng(2)
    settled = [f"status=ok region=eu-west-{i % 3}" for i in range(3000)]  # learnt in a few rounds
    n, stats = _train(settled)
    rounds = int(np.count_nonzero(stats[1:]))
    assert n > 0 and ft.MIN_GENERATIONS + ft.STALL_GENERATIONS <= rounds < ft.GENERATIONS
    assert stats[0] <= min(stats[1:rounds + 1]) * 1.01
    for strs in (_urls(rng, 4000), _logs(rng, 3000), _paths(rng, 3000)):
        n, stats = _train(strs)
        rounds = int(np.count_nonzero(stats[1:]))
        assert rounds >= ft.MIN_GENERATIONS + ft.STALL_GENERATIONS
        assert stats[0] <= min(stats[1:rounds + 1]) * 1.01
        off, data = _cols(strs)
        block = fsst_codec.fsst_block(off, data, len(strs))
        assert block is not None and _go_decode(bytes(block), len(strs)) == [s.encode() for s in strs]


def _reference_decode(codes: bytes, words: np.ndarray, lens: np.ndarray) -> bytes | None:
    out, p = bytearray(), 0
    while p < len(codes):
        c = codes[p]
        p += 1
        if lens[c]:
            out += int(words[c]).to_bytes(8, "little")[: lens[c]]
        elif c == 255 and p < len(codes):
            out.append(codes[p])
            p += 1
        else:
            return None
    return bytes(out)


_CODE = st.one_of(st.integers(0, 199), st.integers(0, 199), st.integers(0, 199), st.integers(0, 199),
                  st.just(255), st.integers(200, 254))  # mostly symbols, some escapes, few unknown


_GUARD = 24  # bytes past the decoder's output room that must stay untouched


@given(st.lists(st.lists(_CODE, max_size=23) | st.lists(_CODE, min_size=124, max_size=160), min_size=1, max_size=12),
       st.integers(0, 2**32 - 1))
def test_the_decoder_expands_codes_as_a_reference_decoder_does(rows: list[list[int]], seed: int) -> None:
    # Symbols of 1-8 bytes, codes 200-254 unknown and 255 an escape, in rows of every
    # length (escapes, unknown codes and row ends anywhere; code lengths of one uvarint
    # byte and of two): the decoded bytes, or the refusal, are the reference decoder's,
    # the framing walk ends where the decode does, and nothing is written past the
    # ``total + 8`` bytes the decoder may use.
    from qdf_kernels import fsst as fk

    rng = np.random.default_rng(seed)
    lens = np.zeros(256, np.uint8)
    lens[:200] = rng.integers(1, 9, 200)
    words = rng.integers(0, 2**63, 256, dtype=np.int64).view(np.uint64)
    body = bytearray()
    want: list[bytes] = []
    ok = True
    for codes in rows:
        body += encode_uvarint(len(codes)) + bytes(codes)
        ref = _reference_decode(bytes(codes), words, lens)
        ok = ok and ref is not None
        want.append(ref or b"")
    total = sum(len(w) for w in want)
    offsets = np.empty(len(rows) + 1, np.int64)
    buf = np.frombuffer(bytes(body), np.uint8)
    assert fk.fsst_skip_rows(buf, np.int64(0), np.int64(len(buf)), np.int64(len(rows)), np.zeros(1, np.int64)) \
        == len(buf)

    def decode(declared: int) -> tuple[int, np.ndarray]:
        data = np.full(declared + 8 + _GUARD, 0xA5, np.uint8)
        end = fk.fsst_decode_into(buf, np.int64(0), np.int64(len(buf)), words, lens, offsets, data[: declared + 8],
                                  np.int64(declared), np.zeros(1, np.int64))
        assert (data[declared + 8:] == 0xA5).all()
        return end, data

    end, data = decode(total)
    if not ok:
        assert end < 0
        return
    assert end == len(buf)
    assert [data[offsets[i]: offsets[i + 1]].tobytes() for i in range(len(rows))] == want
    # and a declared total one byte short, or far short, is refused, never written past
    for short in {total - 1, total // 2, total // 5} if total else ():
        assert decode(short)[0] < 0
