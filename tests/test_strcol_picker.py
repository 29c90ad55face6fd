"""The string-column picker through the public API (property tests).

* every string block round-trips at the edge lengths 0, 1, 7, 8, 9, 255, 256, 257 and
  4096, for all-null, constant, empty, non-ASCII, binary and mixed columns, in both
  balanced and compression mode (``go_compatible=True``: the v1 picker's own blocks,
  without dictionary levels, which tests/test_dict_levels.py covers);
* a compression-mode string column is never larger than the balanced-mode one, nor
  than its raw F8 form (plus the presence mask);
* per-value strings written by the Dense kernel are byte-for-byte what
  ``DenseWriter.write_str`` writes, and leave the same Dense state behind.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.codecs.qpack import INT_CODES
from qdf_columnar.codecs.strings.alpha import ALPHA
from qdf_columnar.codecs.strings.dictionary import DICTIONARY, _parts
from qdf_columnar.codecs.strings.per_value import PER_VALUE, PER_VALUE_HEAD_PCT
from qdf_columnar.codecs.strings.slab import SLAB
from qdf_columnar.codecs.strings.unit import HEAD_ROWS, Column
from qdf_columnar.format.varint import uvarint_len
from qdf_columnar.options import Options
from qdf_columnar.wire.dense import DenseWriter
from qdf_columnar.wire.strcol_write import _reference_order, write_string_column


def _column(arr: pa.Array, dense: DenseWriter) -> Column:
    return Column(arr, dense, INT_CODES)


LENGTHS = [0, 1, 7, 8, 9, 255, 256, 257, 4096]
SHAPES = ["pool", "zipf", "hex", "text", "constant", "empty", "nonascii", "binary", "mixed", "long"]
MODES = ["balanced", "compression"]


def _values(shape: str, n: int, seed: int, null_pct: int) -> tuple[list, pa.DataType]:
    rng = np.random.default_rng(seed)
    typ = pa.string()
    if shape == "pool":
        pool = [f"v{i}" * int(rng.integers(1, 4)) for i in range(int(rng.integers(2, 400)))]
        vals: list = [pool[int(k)] for k in rng.integers(0, len(pool), n)]
    elif shape == "zipf":
        pool = [f"user-{i:05d}@example.org" for i in range(int(rng.integers(50, 3000)))]
        vals = [pool[min(int(k), len(pool)) - 1] for k in rng.zipf(1.3, n)]
    elif shape == "hex":
        ln = int(rng.integers(1, 20))
        vals = [rng.bytes(ln).hex() for _ in range(n)]
    elif shape == "text":
        words = ["GET", "POST", "/api/v2/orders", "/api/v2/users", "?page=", "&limit=", "HTTP/1.1", "session"]
        vals = [" ".join(rng.choice(words, int(rng.integers(1, 7)))) + str(int(rng.integers(1000))) for _ in range(n)]
    elif shape == "constant":
        vals = ["the same value"] * n
    elif shape == "empty":
        vals = [""] * n
    elif shape == "nonascii":
        vals = ["".join(chr(int(c)) for c in rng.integers(0x400, 0x4FF, int(rng.integers(0, 12)))) + "é😀"
                for _ in range(n)]
    elif shape == "binary":
        typ = pa.binary()
        vals = [bytes(rng.integers(0, 256, int(rng.integers(0, 9)), dtype=np.uint8)) for _ in range(n)]
    elif shape == "mixed":  # short (inline) and long (interned) values, some past 127 bytes
        pool = ["", "a", "bb", "ccc", "dddd", "eeeee" * 10, "f" * 200, "g" * 40, "ζ" * 70]
        vals = [pool[int(k)] for k in rng.integers(0, len(pool), n)]
    else:  # long distinct rows
        vals = ["x" * int(rng.integers(100, 3000)) + str(i) for i in range(n)]
    if null_pct:
        vals = [None if rng.integers(100) < null_pct else v for v in vals]
    return vals, typ


def _raw_bound(vals: list) -> int:
    """Presence mask (if any null) + the F8 block: tag, uvarint(n), uvarint(total), n x (uvarint(len), bytes)."""
    present = [v.encode() if isinstance(v, str) else v for v in vals if v is not None]
    mask = (len(vals) + 7) >> 3 if len(present) < len(vals) else 0
    if not present:
        return mask
    total = sum(len(v) for v in present)
    return mask + 1 + uvarint_len(len(present)) + uvarint_len(total) + sum(uvarint_len(len(v)) + len(v)
                                                                          for v in present)


def _uneven_slab(vals: list) -> bool:
    """Rows of unequal lengths whose total is n x the first length (a fixed-length look-alike)."""
    lens = [len(v) for v in vals if v is not None]
    return len(set(lens)) > 1 and sum(lens) == len(lens) * lens[0]


def _uneven_hex() -> list[str]:
    """92 random hex ids of lengths 8, 4, 12, ... summing to 92 x 8: an alpha block in either mode."""
    rng = np.random.default_rng(0)
    return ["".join(rng.choice(list("0123456789abcdef"), ln)) for ln in [8, 4, 12] * 30 + [8, 8]]


def _decoder_reads_uneven_slabs() -> bool:
    """Whether ``strcol_arrow._contiguous_to_arrow`` is fixed (it took such a slab for fixed-length)."""
    vals = _uneven_hex()
    t = pa.table({"s": vals})
    buf = qdf.encode(t, mode="balanced", go_compatible=True)
    return qdf.decode(buf, output="arrow").column("s").to_pylist() == vals


DECODER_READS_UNEVEN_SLABS = _decoder_reads_uneven_slabs()


def _check_table(vals: list, typ: pa.DataType) -> None:
    if not DECODER_READS_UNEVEN_SLABS and _uneven_slab(vals):
        # Known reader bug (see test_uneven_slab_decodes): break the coincidence until it is fixed.
        k = next(i for i, v in enumerate(vals) if v is not None)
        vals = [*vals[:k], vals[k] + (b"!" if isinstance(vals[k], bytes) else "!"), *vals[k + 1 :]]
    n = len(vals)
    t = pa.table({"s": pa.array(vals, type=typ), "i": pa.array(np.arange(n, dtype=np.int64))})
    sizes = {}
    for mode in MODES:
        buf = qdf.encode(t, mode=mode, go_compatible=True)
        got = qdf.decode(buf, output="arrow")
        assert got.column("s").to_pylist() == vals, mode
        assert got.column("s").type == typ
        if n:
            ex = qdf.explain(buf).set_index("column")
            sizes[mode] = int(ex.loc["s", "bytes"])
    if n:
        assert sizes["compression"] <= sizes["balanced"], sizes
        assert sizes["compression"] <= _raw_bound(vals), (sizes, _raw_bound(vals))
        assert sizes["balanced"] <= _raw_bound(vals), (sizes, _raw_bound(vals))  # F8 is a balanced candidate


@given(n=st.sampled_from(LENGTHS), shape=st.sampled_from(SHAPES), seed=st.integers(0, 2**32 - 1),
       null_pct=st.sampled_from([0, 0, 10, 90]))
def test_every_block_round_trips_and_compression_is_never_larger(n: int, shape: str, seed: int,
                                                                 null_pct: int) -> None:
    _check_table(*_values(shape, n, seed, null_pct))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("shape", SHAPES)
def test_edge_lengths(n: int, shape: str) -> None:
    _check_table(*_values(shape, n, n * 31 + len(shape), 0))


@pytest.mark.parametrize("n", LENGTHS)
def test_all_null(n: int) -> None:
    _check_table([None] * n, pa.string())


@given(st.lists(st.text(max_size=12), min_size=0, max_size=300))
def test_arbitrary_text(vals: list[str]) -> None:
    _check_table(vals, pa.string())


@given(st.lists(st.sampled_from(["", "a", "ab", "abcd", "abcdefgh", "é", "\x00\xff", "xyzxyzxyzxyz"]),
                min_size=0, max_size=300),
       st.sampled_from(LENGTHS))
def test_repetitive_columns(head: list[str], n: int) -> None:
    vals = (head * (n // max(1, len(head)) + 1))[:n] if head else [""] * n
    _check_table(vals, pa.string())


@pytest.mark.xfail(not DECODER_READS_UNEVEN_SLABS, strict=True,
                   reason="qdf_columnar/wire/strcol_arrow.py _contiguous_to_arrow treats any slab with "
                          "total == n * len(row 0) as fixed-length")
@pytest.mark.parametrize("mode", MODES)
def test_uneven_slab_decodes(mode: str) -> None:
    # Alpha (and FSST) blocks decode to one contiguous slab; these lengths sum to n * 8.
    vals = _uneven_hex()
    assert _uneven_slab(vals)
    t = pa.table({"s": vals})
    assert qdf.decode(qdf.encode(t, mode=mode, go_compatible=True), output="arrow").column("s").to_pylist() == vals


def test_hex_ids_keep_alphabet_packing_in_compression_mode() -> None:
    # The issue: hex trace / span ids came out larger with FSST than with FB.
    rng = np.random.default_rng(1)
    t = pa.table({"trace_id": [rng.bytes(16).hex() for _ in range(5000)],
                  "span_id": [rng.bytes(8).hex() for _ in range(5000)]})
    bal = qdf.explain(qdf.encode(t, mode="balanced", go_compatible=True)).set_index("column")
    cmp_ = qdf.explain(qdf.encode(t, mode="compression", go_compatible=True)).set_index("column")
    for c in ("trace_id", "span_id"):
        assert cmp_.loc[c, "codec"] == bal.loc[c, "codec"] == "ColStrAlpha"
        assert cmp_.loc[c, "bytes"] == bal.loc[c, "bytes"]


def test_both_modes_try_the_dictionary_past_the_head_gate() -> None:
    # 200 values in round-robin: the first 64 rows are all distinct, so the reference's
    # gate skips the dictionary (it would pick alphabet packing); both modes size the
    # dictionary anyway and take it, as the smallest form.
    vals = [f"category-{i % 200:03d}" for i in range(20000)]
    t = pa.table({"s": vals})
    bal = qdf.explain(qdf.encode(t, mode="balanced", go_compatible=True)).set_index("column")
    cmp_ = qdf.explain(qdf.encode(t, mode="compression", go_compatible=True)).set_index("column")
    dicts = ("ColStrDict", "ColStrDictFC", "ColStrDictQ")
    assert bal.loc["s", "codec"] in dicts and cmp_.loc["s", "codec"] in dicts
    assert cmp_.loc["s", "bytes"] == bal.loc["s", "bytes"]
    buf = qdf.encode(t, mode="compression", go_compatible=True)
    assert qdf.decode(buf, output="arrow").column("s").to_pylist() == vals


# ---------------------------------------------------------------- the Dense per-value kernel


def _state(d: DenseWriter) -> tuple:
    return list(d.table.items()), d.last_id, list(d.ring), d.head, dict(d.pair)


def _writers(opts: Options, max_entries: int, preload: list[bytes]) -> tuple[DenseWriter, DenseWriter]:
    a, b = DenseWriter(opts), DenseWriter(opts)
    for w in (a, b):
        w.max_entries = max_entries
        for v in preload:
            w.write_str(bytearray(), v)
    return a, b


@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 2, 17, 300, 3000]),
       distinct=st.sampled_from([1, 3, 40, 200, 1000]),
       opts=st.sampled_from([Options.BALANCED, Options.BALANCED & ~Options.MTF, Options.BALANCED & ~Options.PAIR_PRED,
                             Options.DENSE, Options.QPACK]),
       max_entries=st.sampled_from([1 << 14, 1, 150]), binary=st.booleans(), preload=st.integers(0, 300))
def test_dense_kernel_matches_dense_writer(seed: int, n: int, distinct: int, opts: Options, max_entries: int,
                                           binary: bool, preload: int) -> None:
    rng = np.random.default_rng(seed)
    lens = rng.choice([0, 1, 3, 4, 5, 31, 32, 127, 128, 300], size=distinct)
    pool = [bytes([97 + i % 26]) * int(ln) + (str(i).encode() if ln >= 4 else b"") for i, ln in enumerate(lens)]
    vals = [pool[int(k)] for k in np.minimum(rng.zipf(1.2, n), distinct) - 1]
    pre = [p for p in pool[: preload % (distinct + 1)]] + [f"name{i}".encode() for i in range(preload)]
    py, kern = _writers(opts, max_entries, pre)
    want = bytearray(b"\x01")
    for v in vals:
        py.write_str(want, v, binary=binary)
    arr = pa.array(vals, pa.binary() if binary else pa.string()) if binary else pa.array(
        [v.decode() for v in vals], pa.string())
    got = bytearray(b"\x01")
    col = _column(arr, kern)
    form = PER_VALUE.plan(col, None)
    PER_VALUE.encode(got, col, form)
    assert form.cost == len(got) - 1
    assert bytes(got) == bytes(want)
    assert _state(kern) == _state(py)


# ---------------------------------------------------------------- balanced keeps the smallest form


def test_balanced_keeps_per_value_strings_when_they_are_smallest() -> None:
    # AD's MemberOf[] shape: 400 group DNs of ~45 bytes, too many for a dictionary (the Go
    # decoder caps tables at 256); the reference order picks alphabet packing (~0.8 of the
    # bytes), per-value interning costs ~2 bytes a row.
    rng = np.random.default_rng(11)
    groups = [f"CN=Group {i:03d},OU=Security Groups,DC=corp,DC=example,DC=com" for i in range(400)]
    vals = [groups[int(i)] for i in rng.integers(0, 400, 20000)]
    t = pa.table({"g": vals})
    bal = qdf.encode(t, mode="balanced", go_compatible=True)
    ex = qdf.explain(bal).set_index("column")
    assert ex.loc["g", "codec"] == "per-value strings (Dense)"
    col = _column(pa.array(vals), DenseWriter(Options.BALANCED))
    assert _parts(col) is None  # 400 distinct: no dictionary form at all
    alpha = ALPHA.plan(col, None)
    assert ex.loc["g", "bytes"] * 5 < alpha.cost
    assert qdf.decode(bal, output="arrow").column("g").to_pylist() == vals


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n", [40, 3000])
def test_balanced_is_never_larger_than_any_sized_candidate(shape: str, n: int) -> None:
    vals, typ = _values(shape, n, n + len(shape), 0)
    arr = pa.array(vals, typ)
    got = bytearray()
    write_string_column(got, arr, DenseWriter(Options.BALANCED))
    col = _column(arr, DenseWriter(Options.BALANCED))
    # every form sized without a heuristic gate, and per-value strings whenever the head gate admits them
    cands = [_reference_order(col), SLAB.plan(col, None), DICTIONARY.plan(col, None), ALPHA.plan(col, None)]
    if col.head_distinct() * 100 <= min(n, HEAD_ROWS) * PER_VALUE_HEAD_PCT:
        cands.append(PER_VALUE.plan(col, None))
    assert len(got) == min(c.cost for c in cands if c is not None)
    dp = _parts(col)
    assert dp is None or dp.d <= 256


@settings(max_examples=300, deadline=None)
@given(shape=st.sampled_from([s for s in SHAPES if s != "binary"]), n=st.sampled_from([16, 40, 300, 2000]),
       seed=st.integers(0, 2**32 - 1), independent=st.booleans(), fsst=st.booleans(), cut=st.floats(0.3, 1.5))
# FSST's held-out projection overestimated this column by more than its margin: judged
# against the limit, it dropped a block (58,765 bytes) the call without one keeps.
@example(shape="long", n=300, seed=3756, independent=False, fsst=True, cut=1.0625)
def test_a_limit_changes_nothing_the_caller_keeps(shape: str, n: int, seed: int, independent: bool, fsst: bool,
                                                  cut: float) -> None:
    """With ``limit``, a body shorter than it is byte for byte the body written without it,
    and a body that is not shorter than it without the limit is not shorter with it: the
    forms left untried could not have been kept (plan_dictionaries relies on this)."""
    vals, typ = _values(shape, n, seed, 0)
    arr = pa.array(vals, type=typ)
    free = bytearray()
    write_string_column(free, arr, DenseWriter(Options.BALANCED), fsst=fsst, independent=independent)
    limit = max(1, int(len(free) * cut))
    bounded = bytearray()
    write_string_column(bounded, arr, DenseWriter(Options.BALANCED), fsst=fsst, independent=independent,
                        limit=limit)
    assert (len(bounded) < limit) == (len(free) < limit)
    if len(free) < limit:
        assert bounded == free
