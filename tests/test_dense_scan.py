"""The per-value Dense string kernel (qdf_kernels.dense_strings) against the Python reader.

A string column body that is not a block is M row-major string values read through
the Dense state. ``scan_string_column`` reads such a run with a Numba kernel that
replays ``DenseReader.read_str``; these tests check, on writer output with random
prior state and on hand-built tag streams (including malformed ones), that both
paths return the same values, stop at the same byte, raise the same error and leave
exactly the same state behind for later values and columns.
"""

from __future__ import annotations

from collections import OrderedDict
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from qdf_kernels import dense_strings as dsk

import qdf_columnar as qdf
from qdf_columnar.codecs.strings import per_value
from qdf_columnar.errors import CorruptDataError, DecodeError, TruncatedError
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.varint import encode_uvarint
from qdf_columnar.options import Options
from qdf_columnar.wire import dense as dense_mod
from qdf_columnar.wire.dense import MAX_DECODE_ENTRIES, DenseReader, DenseWriter
from qdf_columnar.wire.strcol_scan import StringSlices, read_str_bytes, scan_string_column


@pytest.fixture(autouse=True)
def _kernel_for_every_run(monkeypatch) -> None:
    # short runs (absolute, or next to the interned state) would otherwise take the Python reader
    monkeypatch.setattr(per_value, "SMALL_RUN", 0)
    monkeypatch.setattr(per_value, "STATE_PER_ROW", 1 << 40)


OPTS = [Options.BALANCED, Options.BALANCED & ~Options.MTF, Options.BALANCED & ~Options.PAIR_PRED, Options.DENSE]


# ------------------------------------------------------------------ harness


def _rows(res) -> list[bytes]:
    if isinstance(res, list):
        return res
    assert isinstance(res, StringSlices) and res.offsets is not None
    data = bytes(res.src)
    off = res.offsets.tolist()
    return [data[off[i] : off[i + 1]] for i in range(res.n)]


def _python_column(r: ByteReader, n: int, dense: DenseReader) -> list[bytes]:
    """What scan_string_column did before the kernel: one read_str per value."""
    if n:
        r.peek("a string column")
    r.need(n, "per-value strings")
    return [read_str_bytes(r, dense) for _ in range(n)]


def _run(buf: bytes, n_prefix: int, columns: list[int], n_suffix: int, *, kernel: bool, writable: bool = False):
    """Read n_prefix values (Python), then each column, then n_suffix values (Python).

    Returns (values per part, final position, state, error) with the error as (type, message).
    """
    src = np.frombuffer(bytearray(buf), np.uint8) if writable else buf
    r = ByteReader(src)
    d = DenseReader()
    parts: list[list[bytes]] = []
    err = None
    try:
        parts.append([read_str_bytes(r, d) for _ in range(n_prefix)])
        for n in columns:
            if kernel:
                parts.append(_rows(scan_string_column(r, n, d)))
            else:
                parts.append(_python_column(r, n, d))
        parts.append([read_str_bytes(r, d) for _ in range(n_suffix)])
    except DecodeError as exc:
        err = (type(exc), str(exc))
    return parts, r.pos, d.state(), err


def _check(buf: bytes, n_prefix: int, columns: list[int], n_suffix: int = 0) -> tuple:
    want = _run(buf, n_prefix, columns, n_suffix, kernel=False)
    got = _run(buf, n_prefix, columns, n_suffix, kernel=True)
    assert got == want
    assert _run(buf, n_prefix, columns, n_suffix, kernel=True, writable=True) == want
    # the fewest LRU stamps the kernel accepts: they are renumbered every few uses
    with mock.patch.object(dense_mod, "_owner_size", lambda cap: cap + 1):
        assert _run(buf, n_prefix, columns, n_suffix, kernel=True) == want
    return want


# ------------------------------------------------------- writer output, random prior state


def _pool(rng: np.random.Generator, k: int) -> list[bytes]:
    lens = rng.choice([0, 1, 3, 4, 5, 9, 31, 32, 200, 256, 5000, 70000], size=k,
                      p=[.05, .05, .1, .15, .15, .15, .1, .1, .05, .04, .04, .02])
    return [bytes(rng.integers(0, 256, int(ln), dtype=np.uint8)) if i % 3 else
            f"é{i}".encode() * max(1, int(ln) // 4) for i, ln in enumerate(lens)]


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), opts=st.sampled_from(OPTS), prior=st.sampled_from([0, 1, 5, 150, 400]),
       sizes=st.lists(st.sampled_from([1, 2, 17, 300, 1200]), min_size=1, max_size=3),
       distinct=st.sampled_from([1, 4, 60, 300]), suffix=st.integers(0, 20))
def test_writer_columns_with_random_prior_state(seed: int, opts: Options, prior: int, sizes: list[int],
                                                distinct: int, suffix: int) -> None:
    rng = np.random.default_rng(seed)
    pool = _pool(rng, distinct + 40)
    w = DenseWriter(opts)
    if rng.random() < 0.2:
        w.max_entries = int(rng.integers(1, 200))  # a full table: later strings go inline
    out = bytearray()

    def write(k: int) -> None:
        for i in np.minimum(rng.zipf(1.3, k), len(pool)) - 1:
            w.write_str(out, pool[int(i)], binary=bool(rng.random() < 0.15))

    write(prior)
    for n in sizes:
        write(n)
    write(suffix)
    parts, pos, _, err = _check(bytes(out), prior, sizes, suffix)
    assert err is None and pos == len(out)
    r = ByteReader(bytes(out))
    d = DenseReader()
    [read_str_bytes(r, d) for _ in range(prior)]
    for n in sizes:  # valid input never needs the Python fallback
        assert isinstance(scan_string_column(r, n, d), StringSlices)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), opts=st.sampled_from(OPTS))
def test_column_after_many_interns_uses_mtf_and_pair(seed: int, opts: Options) -> None:
    # Ids >= 128 are re-emitted as E9 ranks / EA pair hits / multi-byte E1 refs.
    rng = np.random.default_rng(seed)
    names = [b"name-%05d" % i for i in range(700)]
    w = DenseWriter(opts)
    out = bytearray()
    for v in names:
        w.write_str(out, v)
    cycle = [names[int(i)] for i in rng.integers(100, 700, 40)]
    for i in range(3000):
        w.write_str(out, cycle[i % 40] if rng.random() < 0.8 else names[int(rng.integers(0, 700))])
    assert b"\xe9" in out or not opts & Options.MTF
    assert b"\xea\x00" in out or not opts & Options.PAIR_PRED
    _check(bytes(out), 700, [3000])


# ------------------------------------------------------- hand-built tag streams (valid or not)


def _inline(kind: str, data: bytes) -> bytes:
    n = len(data)
    head = {"fix": bytes((0x80 | n,)), "s8": bytes((0xCD, n)), "b8": bytes((0xD0, n)),
            "s16": b"\xce" + n.to_bytes(2, "little"), "b16": b"\xd1" + n.to_bytes(2, "little"),
            "s32": b"\xcf" + n.to_bytes(4, "little"), "b32": b"\xd2" + n.to_bytes(4, "little")}[kind]
    return head + data


_TOKEN = st.one_of(
    st.tuples(st.just("intern"), st.integers(0, 40), st.booleans()),
    st.tuples(st.just("ref"), st.integers(0, 300)),
    st.tuples(st.just("repeat")),
    st.tuples(st.just("mtf"), st.integers(0, 320)),
    st.tuples(st.just("pair"), st.sampled_from([0, 0, 0, 1])),
    st.tuples(st.just("inline"), st.sampled_from(["fix", "s8", "b8", "s16", "b16", "s32", "b32"]),
              st.integers(0, 31)),
    st.tuples(st.just("bad"), st.sampled_from([b"\xc0", b"\x01", b"\xe3", b"\xe1" + b"\xff" * 10,
                                               b"\xe9\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02", b"\xd3"])),
)


def _stream(tokens: list[tuple], seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    out = bytearray()
    for tok in tokens:
        kind = tok[0]
        if kind == "intern":
            data = bytes(rng.integers(97, 100, tok[1], dtype=np.uint8))
            out += (b"\xe2" if tok[2] else b"\xe0") + encode_uvarint(len(data)) + data
        elif kind == "ref":
            out += b"\xe1" + encode_uvarint(tok[1])
        elif kind == "repeat":
            out += b"\xe8"
        elif kind == "mtf":
            out += b"\xe9" + encode_uvarint(tok[1])
        elif kind == "pair":
            out += b"\xea" + encode_uvarint(tok[1])
        elif kind == "inline":
            out += _inline(tok[1], bytes(rng.integers(0, 256, tok[2], dtype=np.uint8)))
        else:
            out += tok[1]
    return bytes(out)


_PRIMER = b"".join(b"\xe0\x05" + b"p%04d" % i for i in range(260))  # ids 0..259, ring and LRU full


@settings(max_examples=300, deadline=None)
@given(tokens=st.lists(_TOKEN, min_size=1, max_size=60), seed=st.integers(0, 2**16), primed=st.booleans(),
       cut=st.integers(0, 100), split=st.integers(0, 60))
def test_tag_streams_match_the_python_reader(tokens: list[tuple], seed: int, primed: bool, cut: int,
                                             split: int) -> None:
    body = _stream(tokens, seed)
    if cut < 30:  # truncate somewhere inside the run
        body = body[: len(body) * cut // 30]
    buf = (_PRIMER if primed else b"") + body
    n = len(tokens)
    k = min(split, n)
    _check(buf, 260 if primed else 0, [k, n - k] if 0 < k < n else [n])


def test_errors_are_typed_and_located() -> None:
    cases = {
        "e8": CorruptDataError,  # repeat with no previous id
        "e1 00": CorruptDataError,  # unknown id
        "ea 00": CorruptDataError,  # pair with no previous id
        "e0 04 61626364 ea 01": CorruptDataError,  # pair rank must be 0
        "e9 00": CorruptDataError,  # empty ring, empty LRU
        "e0 04 61626364 e9 05": CorruptDataError,  # ring slot empty, rank past the LRU
        "c0": CorruptDataError,  # not a string
        "e1 ffffffffffffffffffff01": CorruptDataError,  # uvarint longer than 10 bytes
        "e0 05 6162": TruncatedError,
        "cd 05 61": TruncatedError,
        "ce 05": TruncatedError,
        "e0": TruncatedError,
    }
    for body, exc in cases.items():
        buf = bytes.fromhex(body) + (b"\x81a" * 3 if exc is CorruptDataError else b"")
        n = 2 if body.startswith("e0 04") else 1
        _, _, _, err = _check(buf, 0, [n])
        assert err is not None and err[0] is exc, body
        with pytest.raises(exc) as info:
            scan_string_column(ByteReader(buf), n, DenseReader())
        assert info.value.offset is not None


def test_mtf_rank_past_the_ring_walks_the_lru() -> None:
    # Ranks >= 128 name the LRU chain (the Go decoder accepts them; no encoder writes them).
    refs = b"".join(b"\xe9" + encode_uvarint(r) for r in (150, 0, 259, 200, 3, 200))
    parts, _, state, err = _check(_PRIMER + refs + b"\xe1\x05", 260, [6], 1)
    assert err is None
    assert parts[1][:3] == [b"p0109", b"p0109", b"p0000"]


def test_full_intern_table_is_rejected_identically() -> None:
    def reader() -> DenseReader:
        d = DenseReader()
        d.values = [b"v%04d" % i for i in range(MAX_DECODE_ENTRIES)]
        d.kinds = bytearray(MAX_DECODE_ENTRIES)
        d.strs = [None] * MAX_DECODE_ENTRIES
        d.lru = OrderedDict.fromkeys(range(MAX_DECODE_ENTRIES))
        return d

    buf = b"\xe1\x05\xe8\xe0\x04abcd"
    with pytest.raises(CorruptDataError) as a:
        _python_column(ByteReader(buf), 3, reader())
    with pytest.raises(CorruptDataError) as b:
        scan_string_column(ByteReader(buf), 3, reader())
    assert str(a.value) == str(b.value)
    d = reader()
    got = _rows(scan_string_column(ByteReader(b"\xe1\x05\xe9\x00\xe8"), 3, d))
    assert got == [b"v0005"] * 3 and d.state()[2] == 5


def test_large_interned_values_grow_the_slab() -> None:
    w = DenseWriter(Options.BALANCED)
    out = bytearray()
    vals = [bytes([65 + i]) * (70_000 + i) for i in range(5)] + [b"small"] * 3
    seq = vals + vals[::-1] + vals
    for v in seq:
        w.write_str(out, v)
    parts, pos, _, err = _check(bytes(out), 0, [len(seq)])
    assert err is None and parts[1] == seq


def test_state_survives_kernel_then_python_then_kernel() -> None:
    # Row-major values (Python reader) between per-value columns (kernel) share one state.
    w = DenseWriter(Options.BALANCED)
    out = bytearray()
    col = [b"alpha", b"beta-1", b"alpha", b"gamma", b"ab", b"gamma", b"beta-1"]
    for v in col * 3:
        w.write_str(out, v)
    for v in (b"beta-1", b"delta", b"alpha"):
        w.write_str(out, v, binary=True)
    for v in col[::-1] * 2:
        w.write_str(out, v)
    want = _run(bytes(out), 0, [21], 3, kernel=False)
    r = ByteReader(bytes(out))
    d = DenseReader()
    assert _rows(scan_string_column(r, 21, d)) == col * 3
    assert [read_str_bytes(r, d) for _ in range(3)] == [b"beta-1", b"delta", b"alpha"]
    assert d.last_bin  # bytes equal to an interned str get an E2 id of their own: the type survives
    assert _rows(scan_string_column(r, 14, d)) == col[::-1] * 2
    assert r.pos == len(out)
    w2 = DenseReader()
    r2 = ByteReader(bytes(out))
    _python_column(r2, 21, w2)
    [read_str_bytes(r2, w2) for _ in range(3)]
    _python_column(r2, 14, w2)
    assert d.state() == w2.state()
    assert want[3] is None


def test_skip_replays_the_state() -> None:
    w = DenseWriter(Options.BALANCED)
    out = bytearray()
    for v in [b"one-1", b"two-2", b"one-1"] * 5:
        w.write_str(out, v)
    w.write_str(out, b"two-2")
    r = ByteReader(bytes(out))
    d = DenseReader()
    scan_string_column(r, 15, d, skip=True)
    assert read_str_bytes(r, d) == b"two-2"


# ------------------------------------------------------- through the public API


@pytest.mark.parametrize("mode", ["balanced", "compression"])
def test_per_value_columns_round_trip(mode: str) -> None:
    rng = np.random.default_rng(5)
    groups = [f"CN=Group {i},OU=Groups,DC=corp,DC=example,DC=com" for i in range(400)]
    first = [f"Name{i}" for i in range(900)]
    n = 6000
    t = pa.table({
        "first": [first[int(i)] for i in np.minimum(rng.zipf(1.1, n), 900) - 1],
        "member": [groups[int(i)] for i in rng.integers(0, 400, n)],
        "blob": pa.array([g.encode() for g in rng.choice(groups, n)], pa.binary()),
        "opt": [None if i % 4 == 0 else groups[i % 300] for i in range(n)],
    })
    # The reference's shapes: without go_compatible these columns take dictionary levels.
    buf = qdf.encode(t, mode=mode, go_compatible=True)
    codecs = set(qdf.explain(buf)["codec"])
    assert "per-value strings (Dense)" in codecs
    assert qdf.decode(qdf.encode(t, mode=mode), output="arrow").equals(t)
    assert qdf.decode(buf, output="arrow").equals(t)
    # column projection skips (replays) the per-value bodies it does not return
    assert qdf.decode(buf, output="arrow", columns=["opt"]).column("opt").equals(t.column("opt"))


def test_lru_stamps_are_renumbered_when_they_run_out() -> None:
    # Ten per-value columns in a row keep the array form; with the fewest stamps the
    # kernel accepts, the LRU order is renumbered many times along the way.
    rng = np.random.default_rng(4)
    names = [b"name-%05d" % i for i in range(300)]
    w = DenseWriter(Options.BALANCED)
    out = bytearray()
    for v in names:
        w.write_str(out, v)
    for i in rng.integers(0, 300, 3000):
        w.write_str(out, names[int(i)])
    out += b"\xe9" + encode_uvarint(250)  # a far rank after all that: reads the renumbered order
    with mock.patch.object(dense_mod, "_owner_size", lambda cap: cap + 1):
        parts, _, state, err = _check(bytes(out), 0, [330] * 10, 1)
        d = DenseReader()
        r = ByteReader(bytes(out))
        for _ in range(10):
            scan_string_column(r, 330, d)
        a = d._arrs
        assert a.st[dsk.S_CLOCK] < 3300 and len(a.owner) < 3300  # renumbered at least once
        assert read_str_bytes(r, d) == parts[-1][0]
    assert err is None and d.state() == state


def test_short_runs_next_to_a_large_state_stay_on_the_python_reader(monkeypatch) -> None:
    # Switching the state to arrays costs O(interned ids); a run must be long enough to
    # pay for it, so alternating short columns and row-major values cannot blow up.
    monkeypatch.setattr(per_value, "SMALL_RUN", 8)
    monkeypatch.setattr(per_value, "STATE_PER_ROW", 8)
    w = DenseWriter(Options.BALANCED)
    out = bytearray()
    names = [b"key-%04d" % i for i in range(1000)]
    for v in names:
        w.write_str(out, v)
    for k in (50, 200, 9, 5):
        for i in range(k):
            w.write_str(out, names[(i * 7) % 1000])
    r = ByteReader(bytes(out))
    d = DenseReader()
    [read_str_bytes(r, d) for _ in range(1000)]
    assert isinstance(scan_string_column(r, 50, d), list)  # 50 * 8 < 1000 ids: not worth a switch
    assert isinstance(scan_string_column(r, 200, d), StringSlices)  # long enough
    assert isinstance(scan_string_column(r, 9, d), StringSlices)  # already in array form
    assert isinstance(scan_string_column(r, 5, d), StringSlices)  # short, but the state is still in array form
    assert r.pos == len(out)
