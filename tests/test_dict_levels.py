"""Dictionary levels (docs/FORMAT.md Part 2 §2.4): columns of any type and cardinality as
codes in level 0 plus a dictionary level; exact round trips, filters on codes, the
Go-compatible switch, never-larger choices and corrupt layouts."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from arrow_check import assert_tables_bit_equal
from hypothesis import event, given, settings
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.errors import CorruptDataError, QueryError
from qdf_columnar.wire.dict_write import LEVEL_OVERHEAD, NOTE_COST
from qdf_columnar.wire.schema_note import PREFIX

N = 3000
RNG = np.random.default_rng(7)


def _pick(values, n: int = N) -> np.ndarray:
    return np.asarray(values)[RNG.integers(0, len(values), n)]


def _table() -> pa.Table:
    words = [f"airport-{i:04d}" for i in range(700)]  # > 256 distinct: beyond F5 / FA / FC
    floats = np.round(RNG.normal(size=120) * 100, 2)
    floats[:4] = [0.0, -0.0, np.nan, np.inf]
    s = _pick(words).astype(object)
    s[::97] = None
    return pa.table({
        "word": pa.array(s, type=pa.large_string()),
        "blob": pa.array([w.encode() for w in _pick(words)], type=pa.binary()),
        "price": pa.array(_pick(floats), type=pa.float64()),
        "small": pa.array(_pick(floats).astype(np.float32), type=pa.float32()),
        "code": pa.array(_pick(np.arange(0, 90_000, 613)), type=pa.int64()),
        "u8": pa.array(_pick(np.arange(0, 250, 3, dtype=np.uint8)), type=pa.uint8()),
        "day": pa.array(_pick([dt.date(2020, 1, 1) + dt.timedelta(days=7 * i) for i in range(300)]), type=pa.date32()),
        "span": pa.array(_pick(np.arange(0, 10**9, 3_333_333)), type=pa.duration("us")),
        "row": pa.array(np.arange(N), type=pa.int64()),
    })


def _note(buf: bytes) -> dict:
    start = buf.index(PREFIX.encode()) + len(PREFIX)
    doc, _ = json.JSONDecoder().raw_decode(buf[start:].decode("utf-8", "replace"))
    return doc


@pytest.mark.parametrize("mode", ["balanced", "compression"])
def test_round_trip_exact(mode: str) -> None:
    t = _table()
    buf = qdf.encode(t, mode=mode)
    assert_tables_bit_equal(qdf.decode(buf, output="arrow"), t)
    if mode == "balanced":  # the note is inside the entropy-coded body in compression mode
        assert set(_note(buf)["dict"]) >= {"word", "blob", "price", "small", "code", "day", "span"}
    assert "row" not in (qdf.explain(buf).query("codec.str.startswith('dictionary')")["column"].tolist())


@pytest.mark.parametrize("mode", ["balanced", "compression"])
def test_levels_reuse_the_values_body_of_their_trial(monkeypatch, mode: str) -> None:
    """The values' body written while weighing a dictionary is the level's body: the
    bytes equal those of writing every level afresh, and no input is FSST-coded twice."""
    from qdf_columnar.codecs import fsst
    from qdf_columnar.wire import dict_write

    words = [f"{w} street {i:05d}" for i, w in enumerate(_pick(["north", "south", "east", "west"], 900))]
    t = _table().append_column("street", pa.array(_pick(words), type=pa.string()))
    seen: list[bytes] = []
    real = fsst.fsst_block

    def spy(offsets, data, n, limit=None, cap=None):
        seen.append(bytes(data[int(offsets[0]):int(offsets[n])]) + np.asarray(offsets[: n + 1]).tobytes())
        return real(offsets, data, n, limit, cap)

    monkeypatch.setattr(fsst, "fsst_block", spy)
    buf = qdf.encode(t, mode=mode)
    assert seen and len(seen) == len(set(seen))
    assert any("dictionary level of street" in str(c) for c in qdf.explain(buf)["column"])
    monkeypatch.setattr(dict_write, "_stateless", lambda *a: False)  # every level written afresh
    assert qdf.encode(t, mode=mode) == buf
    assert_tables_bit_equal(qdf.decode(buf, output="arrow"), t)


def test_pandas_round_trip_exact() -> None:
    df = _table().to_pandas()
    back = qdf.decode(qdf.encode(df))
    pd.testing.assert_frame_equal(back, df, check_exact=True)
    assert np.signbit(back["price"].to_numpy()).sum() == np.signbit(df["price"].to_numpy()).sum()


def test_smaller_than_the_reference_picker() -> None:
    t = _table()
    assert len(qdf.encode(t)) < 0.6 * len(qdf.encode(t, go_compatible=True))


def test_go_compatible_writes_the_reference_shapes() -> None:
    t = _table()
    go = qdf.encode(t, go_compatible=True)
    assert go == qdf.encode(t, mode=qdf.Options.BALANCED | qdf.Options.COLUMN_INDEX)
    assert go[5] == 0xEF  # one EF container, no levels
    assert qdf.encode(t, mode="compression", go_compatible=True) == qdf.encode(
        t, mode=qdf.Options.COMPRESSION | qdf.Options.COLUMN_INDEX)
    assert_tables_bit_equal(qdf.decode(go, output="arrow"), t)


def test_mostly_distinct_columns_stay_direct() -> None:
    t = pa.table({"id": np.arange(5000), "name": [f"user-{i}" for i in range(5000)],
                  "x": RNG.normal(size=5000)})
    buf = qdf.encode(t)
    assert buf[5] == 0xEF  # one EF container: no dictionary levels
    assert b'"dict"' not in buf


def test_short_tables_stay_direct() -> None:
    t = pa.table({"s": ["ab", "cd"] * 20})
    assert qdf.encode(t) == qdf.encode(t, go_compatible=True)


@pytest.mark.parametrize("expr", [
    qdf.col("word") == "airport-0007",
    qdf.col("word").isin(["airport-0001", "airport-0600", "nope"]),
    qdf.col("word") >= "airport-0650",
    qdf.col("word").is_null(),
    ~(qdf.col("word") == "airport-0007"),
    (qdf.col("price") > 50.5) & (qdf.col("code") < 20_000),
    qdf.col("price") != 0.0,
    qdf.col("code").isin([613, 1226, 5]),
    qdf.col("u8") == 9,
])
def test_filters_on_codes_match_pandas(expr) -> None:
    t = _table()
    buf = qdf.encode(t)
    got = qdf.decode(buf, filter=expr, output="arrow")
    want = qdf.decode(qdf.encode(t, go_compatible=True), filter=expr, output="arrow")
    assert got.num_rows > 0 or want.num_rows == 0
    assert_tables_bit_equal(got, want)


def test_select_only_some_columns() -> None:
    t = _table()
    buf = qdf.encode(t)
    assert_tables_bit_equal(qdf.decode(buf, columns=["row", "price"], output="arrow"), t.select(["row", "price"]))
    got = qdf.decode(buf, columns=["word"], filter=qdf.col("code") > 80_000, output="arrow")
    mask = pa.compute.greater(t.column("code"), 80_000)
    assert got.column("word").to_pylist() == t.filter(mask).column("word").to_pylist()


def test_categories_without_expanding() -> None:
    t = _table()
    buf = qdf.encode(t)
    got = qdf.decode(buf, categories=["word"], output="arrow")
    col = got.column("word").combine_chunks()
    assert pa.types.is_dictionary(col.type)
    assert len(col.dictionary) == pa.compute.count_distinct(t.column("word")).as_py()
    assert col.dictionary_decode().to_pylist() == t.column("word").to_pylist()
    assert pa.types.is_dictionary(qdf.decode(buf, categories=True, output="arrow").schema.field("blob").type)
    with pytest.raises(QueryError, match="not a string column"):
        qdf.decode(buf, categories=["price"])


def test_loads_and_files_read_dictionary_levels(tmp_path) -> None:
    t = _table().slice(0, 500)
    buf = qdf.encode(t)
    assert_tables_bit_equal(pa.Table.from_pylist(qdf.loads(buf), schema=t.schema), t)
    path = tmp_path / "t.qdf"
    qdf.write_qdf(t, path, mode="balanced")
    assert_tables_bit_equal(qdf.read_qdf(path, output="arrow"), t)


def test_nested_batch_with_dictionary_columns() -> None:
    words = _pick([f"w{i:03d}" for i in range(400)])
    t = pa.table({"tags": [[int(i), int(i) + 1] for i in range(N)], "word": words})
    buf = qdf.encode(t)
    note = _note(buf)
    assert note["dict"] == ["word"] and "shred" in note
    assert_tables_bit_equal(qdf.decode(buf, output="arrow"), t)
    got = qdf.decode(buf, filter=qdf.col("word") == "w007", output="arrow")
    assert got.column("tags").to_pylist() == t.filter(pa.compute.equal(t.column("word"), "w007")).column(
        "tags").to_pylist()


def test_explain_shows_codes_and_values() -> None:
    t = _table()
    ex = qdf.explain(qdf.encode(t))
    word = ex[ex["column"] == "word"]["codec"].tolist()
    assert word[0].startswith("dictionary codes: Pack")
    distinct = pa.compute.count_distinct(t.column("word")).as_py()
    assert word[1].startswith(f"dictionary values ({distinct}): ColStr")


# ------------------------------------------------------------------------- corrupt layouts
def _dict_buffer() -> bytes:
    t = pa.table({"s": _pick([f"value-{i}" for i in range(300)], 2000)})
    buf = qdf.encode(t, mode="balanced")
    assert _note(buf)["dict"] == ["s"]
    return buf


def test_code_outside_the_dictionary_is_corrupt() -> None:
    from qdf_columnar.wire.context import EncodeContext
    from qdf_columnar.wire.dict_write import DictColumn, DictionaryPlan, write_dictionary_batch

    t = pa.table({"s": ["a", "b", "c", "d"] * 20})
    codes = pa.array(np.arange(80) % 5, type=pa.uint64())  # code 4 has no value
    out = bytearray(b"QDF\x01\x03")
    write_dictionary_batch(out, t, DictionaryPlan([DictColumn(0, "s", codes, pa.array(["a", "b", "c", "d"]))], {}),
                           EncodeContext(qdf.Options.BALANCED))
    with pytest.raises(CorruptDataError, match="outside a dictionary of 4"):
        qdf.decode(bytes(out))
    ok = pa.array(np.arange(80) % 4, type=pa.uint64())
    out = bytearray(b"QDF\x01\x03")
    write_dictionary_batch(out, t, DictionaryPlan([DictColumn(0, "s", ok, pa.array(["a", "b", "c", "d"]))], {}),
                           EncodeContext(qdf.Options.BALANCED))
    assert qdf.decode(bytes(out), output="arrow").column("s").to_pylist() == t.column("s").to_pylist()


def _coded_batch(values: pa.Array, codes: pa.Array, name: str = "v") -> bytes:
    from qdf_columnar.wire.context import EncodeContext
    from qdf_columnar.wire.dict_write import DictColumn, DictionaryPlan, write_dictionary_batch

    t = pa.table({name: values.take(pa.array(np.zeros(len(codes), np.int64)))})  # the column's type
    out = bytearray(b"QDF\x01\x03")
    write_dictionary_batch(out, t, DictionaryPlan([DictColumn(0, name, codes, values)], {}),
                           EncodeContext(qdf.Options.BALANCED))
    return bytes(out)


_VALUES = {
    "string": pa.array(["a", "bb", "", "dddd"]),
    "large_string": pa.array(["a", "bb", "", "dddd"], type=pa.large_string()),
    "binary": pa.array([b"a", b"\xff\x00", b"", b"dddd"]),
    "float64": pa.array([1.5, -0.0, float("nan"), 4.5]),
    "int32": pa.array([7, -1, 0, 2**31 - 1], type=pa.int32()),
}


@pytest.mark.parametrize("nullable", [True, False])
@pytest.mark.parametrize("kind", sorted(_VALUES))
def test_codes_expand_exactly_and_a_code_outside_is_corrupt_at_its_rows(kind: str, nullable: bool) -> None:
    """Every expansion path (string gather and spread over nulls, fixed-width gather,
    fixed-width straight from PackFor codes) gives the values of ``take`` and rejects a
    code past the table, in a full decode and in a filtered read that reaches the bad
    row, naming the column."""
    values = _VALUES[kind]
    raw = np.arange(80) % 4
    mask = np.zeros(80, bool)
    if nullable:
        mask[::7] = True
    codes = pa.array(raw, type=pa.uint64(), mask=mask)
    buf = _coded_batch(values, codes)
    want = values.take(pa.array(raw, mask=mask))
    got = qdf.decode(buf, output="arrow").column("v").combine_chunks()
    assert_tables_bit_equal(pa.table({"v": got}), pa.table({"v": want}))
    bad = raw.copy()
    bad[41] = 4  # code 4 has no value
    buf = _coded_batch(values, pa.array(bad, type=pa.uint64(), mask=mask))
    with pytest.raises(CorruptDataError, match="outside a dictionary of 4") as err:
        qdf.decode(buf)
    assert err.value.column == "v"
    from qdf_columnar.api import decode_rows

    rows = np.array([0, 40, 79])  # rows that avoid the bad code still decode
    assert decode_rows(buf, rows, 80).column("v").to_pylist() == want.take(pa.array(rows)).to_pylist()
    with pytest.raises(CorruptDataError, match="outside a dictionary of 4"):
        decode_rows(buf, np.array([41]), 80)


@pytest.mark.parametrize("nullable", [False, True])
def test_fixed_width_values_expand_straight_from_packfor_codes(monkeypatch, nullable: bool) -> None:
    """PackFor codes of a fixed-width dictionary expand in one kernel pass (no code
    array; with nulls, the present values are then spread over the rows); the values
    equal ``take``'s and a code past the table is reported."""
    from qdf_kernels import bitpack

    calls = []
    real = bitpack.unpack_for_gather
    monkeypatch.setattr(bitpack, "unpack_for_gather", lambda *a: calls.append(1) or real(*a))
    values = pa.array(np.round(RNG.normal(size=300), 2))
    raw = RNG.integers(0, 300, 5000)
    mask = (RNG.random(5000) < 0.2) if nullable else None
    if nullable:
        mask[4321] = False
    buf = _coded_batch(values, pa.array(raw, type=pa.uint64(), mask=mask))
    assert qdf.explain(buf).set_index("column")["codec"].iloc[1] == "dictionary codes: PackFor"
    got = pa.table({"v": qdf.decode(buf, output="arrow").column("v").combine_chunks()})
    assert calls
    assert_tables_bit_equal(got, pa.table({"v": values.take(pa.array(raw, mask=mask))}))
    raw[4321] = 300  # one past the table, still inside the 9-bit frame
    bad = _coded_batch(values, pa.array(raw, type=pa.uint64(), mask=mask))
    assert qdf.explain(bad).set_index("column")["codec"].iloc[1] == "dictionary codes: PackFor"
    with pytest.raises(CorruptDataError, match="code 300 is outside a dictionary of 300") as err:
        qdf.decode(bad)
    assert err.value.column == "v"


@pytest.mark.parametrize("distinct", [200, 500])  # a ColStrDict block; a dictionary level
def test_a_wide_string_dictionary_expands_from_its_slices(monkeypatch, distinct: int) -> None:
    """A table too wide to pad to whole words takes the per-row slice path: same values."""
    from qdf_columnar.wire import strcol_arrow

    calls = []
    wide = strcol_arrow._wide
    monkeypatch.setattr(strcol_arrow, "_wide", lambda tl: calls.append(wide(tl)) or calls[-1])
    long = [("x" * int(k)) + str(i) for i, k in enumerate(RNG.integers(0, 300, distinct))]
    s = _pick(long).astype(object)
    s[::11] = None
    t = pa.table({"s": pa.array(s, type=pa.string())})
    buf = qdf.encode(t, mode="balanced")
    padded = qdf.decode(buf, output="arrow")
    assert calls and not any(calls)
    monkeypatch.setattr(strcol_arrow, "WIDE_TABLE_BYTES", 0)
    sliced = qdf.decode(buf, output="arrow")
    assert any(calls)
    assert_tables_bit_equal(padded, t)
    assert_tables_bit_equal(sliced, t)
    keep = qdf.decode(buf, filter=qdf.col("s") == long[3], output="arrow")
    assert keep.column("s").to_pylist() == [v for v in s if v == long[3]]


def test_note_naming_a_missing_dictionary_column_is_corrupt() -> None:
    buf = _dict_buffer()
    bad = buf.replace(b'"dict":["s"]', b'"dict":["t"]')
    assert bad != buf
    with pytest.raises(CorruptDataError, match="dictionary column"):
        qdf.decode(bad)


def test_missing_dictionary_level_is_corrupt() -> None:
    buf = bytearray(_dict_buffer())
    assert buf[5] == 0xA2  # fixarray of 2: level 0 and one dictionary level
    buf[5] = 0xA1
    with pytest.raises(CorruptDataError):
        qdf.decode(bytes(buf))


# ------------------------------------------------------------------------- never larger
@settings(max_examples=60, deadline=None)
@given(n=st.integers(64, 3000), distinct=st.integers(1, 3000), seed=st.integers(0, 2**32 - 1),
       kind=st.sampled_from(["int", "float", "str"]), nulls=st.booleans())
def test_balanced_never_larger_than_the_reference_picker(n: int, distinct: int, seed: int, kind: str,
                                                         nulls: bool) -> None:
    rng = np.random.default_rng(seed)
    pool = {"int": rng.integers(-10**9, 10**9, distinct), "float": np.round(rng.normal(size=distinct), 3),
            "str": np.array([f"v{i}" for i in rng.integers(0, 10**6, distinct)])}[kind]
    vals = pool[rng.integers(0, len(pool), n)]
    mask = rng.random(n) < 0.2 if nulls else None
    t = pa.table({"x": pa.array(vals, mask=mask)})
    buf = qdf.encode(t)
    # A string column the reference writes as per-value strings (interned against the
    # shared table, which balanced gives up so columns stay independent) may cost at
    # most a dictionary level's fixed overhead more (a constant 64-row column: 114 vs 88).
    slack = LEVEL_OVERHEAD + 1 + NOTE_COST if kind == "str" else 0
    assert len(buf) <= len(qdf.encode(t, go_compatible=True)) + slack
    assert_tables_bit_equal(qdf.decode(buf, output="arrow"), t)


_SPAN_TYPES = [pa.int8(), pa.int16(), pa.int64(), pa.uint8(), pa.uint64(), pa.float32(), pa.float64(),
               pa.date32(), pa.duration("ms"), pa.time32("s")]


@settings(max_examples=150, deadline=None)
@given(typ=st.sampled_from(_SPAN_TYPES), n=st.integers(1, 400), span=st.sampled_from([1, 3, 40, 70_000]),
       base=st.sampled_from([0, -100, 2**31, 2**63 + 5, -(2**62)]), nulls=st.floats(0, 0.9),
       specials=st.booleans(), offset=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_presence_table_dictionary_equals_the_hashed_one(typ, n, span, base, nulls, specials, offset, seed) -> None:
    """The fast path for small-span integers and whole floats gives exactly the hash path's
    codes (the values under null rows too, which the codes' body may carry) and values."""
    from qdf_columnar.wire.dict_write import NOT_SMALL, _hashed_dictionary, _small_span_dictionary

    rng = np.random.default_rng(seed)
    vals = rng.integers(0, span, n + offset).astype(object) + base
    if pa.types.is_floating(typ):
        vals = vals.astype(float)
        if specials:
            vals[rng.integers(0, len(vals), 3)] = rng.choice([np.nan, -0.0, 0.5, np.inf, 1e300], 3)
    elif pa.types.is_integer(typ) or pa.types.is_temporal(typ):
        bits = typ.bit_width
        lo, hi = (0, 2**bits - 1) if pa.types.is_unsigned_integer(typ) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if pa.types.is_time(typ):
            lo, hi = 0, 86_399
        vals = np.array([min(max(int(v), lo), hi) for v in vals], dtype=object)
    mask = rng.random(len(vals)) < nulls
    arr = pa.array([None if m else v for v, m in zip(vals, mask)], type=typ).slice(offset)
    fast, hashed = _small_span_dictionary(arr), _hashed_dictionary(arr)
    event("hash path" if fast is NOT_SMALL else "mostly distinct" if fast is None else "presence table")
    if fast is NOT_SMALL:
        return
    if fast is None:
        assert hashed is None
        return
    assert hashed is not None
    assert fast[1].equals(hashed[1]) and fast[0].equals(hashed[0])
    under = [np.frombuffer(c.buffers()[1], np.uint64) for c in (fast[0], hashed[0])]
    assert np.array_equal(*under)


@pytest.mark.parametrize(("values", "typ"), [
    ([-43.0, 1301.0, None, -43.0, 7.0, None, 7.0, 7.0], pa.float64()),
    ([-2.0, None, -2.0, 5.0, 5.0, 5.0], pa.float32()),
    ([2**62, 2**62 + 3, None, 2**62, 2**62 + 3], pa.uint64()),
    ([-(2**40), None, -(2**40), -(2**40) + 9, -(2**40) + 9], pa.int64()),
    ([3, 1, 3, 1, 1, 2], pa.int8()),
])
def test_presence_table_takes_small_spans(values, typ) -> None:
    """Negative whole floats, nullable columns, uint64 below 2**63: the table, not the hash."""
    from qdf_columnar.wire.dict_write import NOT_SMALL, _hashed_dictionary, _small_span_dictionary

    for arr in (pa.array(values, type=typ), pa.array([None, *values], type=typ).slice(1)):
        fast = _small_span_dictionary(arr)
        assert fast is not NOT_SMALL and fast is not None
        hashed = _hashed_dictionary(arr)
        assert fast[1].equals(hashed[1]) and fast[0].equals(hashed[0])


@pytest.mark.parametrize(("values", "typ"), [
    ([1.0, float("nan"), 1.0, 2.0], pa.float64()),
    ([1.0, -0.0, 1.0, 2.0], pa.float64()),
    ([1.0, 0.5, 1.0, 2.0], pa.float64()),
    ([1.0, float("inf"), 1.0, 2.0], pa.float64()),
    ([2.0**54, 2.0**54 + 4, 2.0**54, 2.0**54 + 4], pa.float64()),
    ([2**63, 2**63 + 1, 2**63, 2**63 + 1], pa.uint64()),
])
def test_presence_table_leaves_other_keys_to_the_hash(values, typ) -> None:
    from qdf_columnar.wire.dict_write import NOT_SMALL, _small_span_dictionary

    assert _small_span_dictionary(pa.array(values, type=typ)) is NOT_SMALL


def _wide_strings(nulls: bool) -> pa.Table:
    rng = np.random.default_rng(11)
    n = 30000
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    names = sorted({"".join(rng.choice(letters, 8 + i % 9)) for i in range(400)})  # a large string table
    idx = rng.integers(0, len(names), n)
    mask = (rng.random(n) < 0.2) if nulls else None
    return pa.table({"name": pa.array(np.asarray(names)[idx], pa.string(), mask=mask),
                     "k": np.arange(n) % 97})


@pytest.mark.parametrize("nulls", [False, True])
def test_a_selective_read_decodes_only_the_entries_its_rows_refer_to(monkeypatch, nulls: bool) -> None:
    from qdf_columnar.wire.dict_read import LevelValues

    t = _wide_strings(nulls)
    buf = qdf.encode(t, mode="balanced")
    assert _note(buf)["dict"] == ["name"]
    asked: list[int] = []
    real = LevelValues.entries

    def spy(self, idx):  # noqa: ANN001, ANN202
        asked.append(len(idx))
        assert np.all(np.diff(idx) > 0) and (not len(idx) or int(idx[-1]) < self.size)
        return real(self, idx)

    monkeypatch.setattr(LevelValues, "entries", spy)
    for expr in [qdf.col("k") == 5, qdf.col("k") < 40, qdf.col("k") > 1000]:
        want = t.filter(pa.array(_eval_k(expr, t)))
        got = qdf.decode(buf, filter=expr, output="arrow")
        assert_tables_bit_equal(got, want)
        f = qdf.read_qdf(qdf.write_qdf(t, None, mode="balanced"), filter=expr, output="arrow")
        assert f.column("name").to_pylist() == want.column("name").to_pylist()
    assert asked and max(asked) < len(set(t.column("name").to_pylist()) - {None})  # never the whole table
    # Full decodes, the filter's own column and categories= take the whole table as before.
    asked.clear()
    assert_tables_bit_equal(qdf.decode(buf, output="arrow"), t)
    kept = qdf.decode(buf, filter=qdf.col("name") >= "t", output="arrow")
    assert kept.column("name").to_pylist() == [s for s in t.column("name").to_pylist() if s and s >= "t"]
    cats = qdf.decode(buf, filter=qdf.col("k") == 3, categories=["name"], output="arrow")
    assert cats.column("name").to_pylist() == [s for s, k in zip(t.column("name").to_pylist(),
                                                                   t.column("k").to_pylist()) if k == 3]
    assert asked == []


def _eval_k(expr, t: pa.Table) -> np.ndarray:  # noqa: ANN001
    from qdf_columnar.query.evaluate import evaluate

    return evaluate(expr, {"k": t.column("k")}, t.num_rows)


def test_a_column_whose_dictionary_form_wins_trains_no_fsst_table(monkeypatch) -> None:
    """The dictionary form is sized first and the direct body only has to beat it: FSST,
    whose lower bound already loses to a few codes per row, is not trained for nothing."""
    import qdf_columnar.codecs.fsst as fsst_codec

    stamps = [f"2013-01-{d:02d} {h:02d}:00:00" for d in range(1, 29) for h in range(24)]
    rng = np.random.default_rng(1)
    t = pa.table({"when": pa.array([stamps[k] for k in np.sort(rng.integers(0, len(stamps), 20_000))]),
                  "n": np.arange(20_000)})
    trained, rows = [], []
    real_train, real_block = fsst_codec.ft.fsst_train_into, fsst_codec.fsst_block

    def block(offsets, data, n, limit=None, cap=None):
        rows.append(n)
        return real_block(offsets, data, n, limit, cap)

    monkeypatch.setattr(fsst_codec.ft, "fsst_train_into", lambda *a: trained.append(rows[-1]) or real_train(*a))
    monkeypatch.setattr(fsst_codec, "fsst_block", block)
    buf = qdf.encode(t, mode="balanced")
    codecs = qdf.explain(buf).groupby("column")["codec"].apply(list)["when"]
    assert any(c.startswith("dictionary codes") for c in codecs), codecs
    assert 20_000 in rows  # the direct body was sized ...
    assert 20_000 not in trained  # ... without training a table for its 20,000 rows
    assert qdf.decode(buf, output="arrow").equals(t)


@settings(max_examples=200, deadline=None)
@given(typ=st.sampled_from(_SPAN_TYPES + [pa.int32(), pa.uint32(), pa.timestamp("us")]),
       n=st.sampled_from([1, 6, 60, 700, 3000, 7000]), card=st.sampled_from([1, 2, 5, 300, 900, 2500]),
       nulls=st.floats(0, 0.6),
       specials=st.booleans(), offset=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_the_hash_kernel_answers_as_arrows_dictionary_encode(typ, n, card, nulls, specials, offset, seed) -> None:
    """The first-seen ids of ``span_dict.hash_ids`` give exactly the codes and values of
    Arrow's ``dictionary_encode`` path (null rows' codes, NaN payloads, -0.0 against 0.0,
    negative narrow keys, sliced arrays), including past the table's first doublings
    (900 and 2,500 distinct keys) and when the column is mostly distinct (None)."""
    import pyarrow.compute as pc

    from qdf_columnar.wire.dict_write import _hashable, _hashed_dictionary

    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2**62, card, dtype=np.int64)
    if pa.types.is_floating(typ):
        pool = rng.normal(0, 1e3, card)
        if specials:
            pool[: min(card, 3)] = [np.nan, -0.0, 0.0][: min(card, 3)]
            pool = np.concatenate([pool, np.frombuffer(np.uint64(0x7FF8000000000123).tobytes(), np.float64)])
        vals = pool[rng.integers(0, len(pool), n + offset)].astype(typ.to_pandas_dtype())
    else:
        width = typ.bit_width
        lo = 0 if pa.types.is_unsigned_integer(typ) else -(2 ** (width - 1))
        hi = 86_399 if pa.types.is_time(typ) else 2 ** (width - 1) - 1
        vals = (lo + keys % (min(hi, 2**62) - max(lo, 0) + 1))[rng.integers(0, card, n + offset)]
        vals = vals.astype(np.int64)
    mask = rng.random(n + offset) < nulls
    storage = {8: pa.int8(), 16: pa.int16(), 32: pa.int32(), 64: pa.int64()}[typ.bit_width]
    if pa.types.is_unsigned_integer(typ):
        storage = typ
    if pa.types.is_floating(typ):
        arr = pa.array(vals, type=typ, mask=mask)
    else:
        arr = pa.array(vals.astype(storage.to_pandas_dtype()), type=storage, mask=mask).view(typ)
    arr = arr.slice(offset)
    want = _hashed_dictionary(arr, pc.dictionary_encode(_hashable(arr)))
    got = _hashed_dictionary(arr)
    event("mostly distinct" if want is None else f"{len(want[1])} values")
    if want is None:
        assert got is None
        return
    assert got is not None and got[0].equals(want[0]) and got[1].type == want[1].type
    assert _hashable(got[1]).equals(_hashable(want[1]))  # bit for bit: NaN payloads, -0.0
    under = [np.frombuffer(c.buffers()[1], np.uint64) for c in (got[0], want[0])]
    assert np.array_equal(*under)  # the codes under null rows too


_STRING_POOL = ["", "a", "ab", "x" * 8, "y" * 16, "z" * 23, "z" * 24, "z" * 25, "2013-01-01 05:00:00",
                "prefix-" * 5 + "A", "prefix-" * 5 + "B", "é", "日本語テキスト", "N14228", "N24211", "\x00", "\x00\x00"]


@settings(max_examples=200, deadline=None)
@given(typ=st.sampled_from([pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]),
       n=st.sampled_from([1, 7, 60, 900, 5000]), card=st.sampled_from([1, 3, 17, 400, 3000]),
       nulls=st.floats(0, 0.6), offset=st.integers(0, 9), seed=st.integers(0, 2**32 - 1))
def test_the_string_hash_kernel_answers_as_arrows_dictionary_encode(typ, n, card, nulls, offset, seed) -> None:
    """``string_dictionary`` is ``dictionary_encode``: the same indices (null at null rows)
    and dictionary in first-seen order, for values shorter and longer than the 24 bytes
    the table keeps (shared prefixes, zero bytes, values ending the data buffer), sliced
    arrays, and past the table's doublings (3,000 values)."""
    from qdf_columnar.wire.dict_write import string_dictionary

    rng = np.random.default_rng(seed)
    pool = (_STRING_POOL + [f"v{k}-" + "s" * (k % 40) for k in range(card)])[:card]
    vals = [pool[i] for i in rng.integers(0, len(pool), n + offset)]
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        vals = [v.encode() for v in vals]
    arr = pa.array(vals, type=typ, mask=rng.random(n + offset) < nulls).slice(offset)
    got, want = string_dictionary(arr), arr.dictionary_encode()
    event(f"{len(want.dictionary)} values")
    got.validate(full=True)
    assert got.type == want.type and got.equals(want)
