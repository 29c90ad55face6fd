"""Filters on packed dictionary codes: a :class:`CodedColumn` answers a predicate once per
dictionary entry and maps each row's still-packed code through that table, and must keep
exactly the rows the same filter keeps on the expanded values (SQL three-valued logic,
NOT, IS NULL, IN and nulls included), for F5 string blocks and for dictionary levels
(strings and floats), nullable or not, in a buffer and in a ``.qdf`` file. A code outside
its dictionary is reported, never read past the table."""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from qdf_kernels import bitpack

import qdf_columnar as qdf
from qdf_columnar.columns.coded import CodedColumn
from qdf_columnar.query.evaluate import evaluate

#: The module itself (the package's ``evaluate`` attribute is the function).
evaluate_module = sys.modules["qdf_columnar.query.evaluate"]

_ENTRIES = ["", "a", "b", "c", "z", "ab"]


def _leaf(name: str, op: str, v: object) -> qdf.col:  # type: ignore[valid-type]
    c = qdf.col(name)
    if op == "isin":
        return c.isin(v)
    if op == "null":
        return c.is_null()
    return {"==": c == v, "!=": c != v, "<": c < v, ">=": c >= v}[op]


_LEAVES = st.one_of(
    st.tuples(st.sampled_from(["==", "!=", "<", ">="]), st.sampled_from(_ENTRIES + ["q"])),
    st.tuples(st.just("isin"), st.lists(st.sampled_from(_ENTRIES + ["q"]), max_size=3)),
    st.tuples(st.just("null"), st.none()))


@st.composite
def _columns(draw: st.DrawFn) -> tuple[pa.DictionaryArray, CodedColumn]:
    entries = draw(st.lists(st.sampled_from(_ENTRIES), min_size=1, max_size=len(_ENTRIES), unique=True))
    n = draw(st.integers(0, 60))
    codes = np.array(draw(st.lists(st.integers(0, len(entries) - 1), min_size=n, max_size=n)), dtype=np.int64)
    nullable = draw(st.booleans())
    valid = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool) if nullable else None
    # The codes bit-packed as a PackFor body, read back by the kernel the decoder uses.
    bits = max(1, int(len(entries) - 1).bit_length())
    packed = np.zeros((len(codes) * bits + 7) // 8, dtype=np.uint8)
    bitpack.pack_for(codes.astype(np.uint64), np.uint64(0), bits, packed)

    def lookup(table: np.ndarray) -> np.ndarray:
        out = np.empty(n, dtype=np.uint8)
        assert bitpack.unpack_for_gather(packed, bits, np.uint64(0), table, out) == n
        return out if valid is None else out & valid

    dense = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32(), mask=None if valid is None else ~valid),
                                           pa.array(entries, pa.string()))
    return dense, CodedColumn(pa.array(entries, pa.string()), n, lookup, valid)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(col=_columns(), a=_LEAVES, b=_LEAVES, how=st.sampled_from(["one", "not", "and", "or"]))
def test_a_coded_column_filters_like_its_values(col: tuple[pa.DictionaryArray, CodedColumn], a: tuple, b: tuple,
                                                how: str) -> None:
    dense, coded = col
    x, y = _leaf("x", *a), _leaf("x", *b)
    expr = {"one": x, "not": ~x, "and": x & ~y, "or": ~(x | y)}[how]
    want = evaluate(expr, {"x": dense.dictionary_decode()}, len(dense))
    assert evaluate(expr, {"x": coded}, len(coded)).tolist() == want.tolist()


def test_a_coded_column_checks_its_inputs() -> None:
    with pytest.raises(ValueError, match="no nulls"):
        CodedColumn(pa.array(["a", None]), 3, lambda t: t)
    coded = CodedColumn(pa.array(["a", "b"]), 2, lambda t: t)
    with pytest.raises(ValueError, match="3 answers for a dictionary of 2 entries"):
        coded.lookup(np.zeros(3, dtype=bool))


def test_the_gather_kernel_stops_at_a_code_outside_its_table() -> None:
    codes = np.array([0, 1, 3, 1], dtype=np.uint64)  # 3 is outside a 3-entry table
    packed = np.zeros(1, dtype=np.uint8)
    bitpack.pack_for(codes, np.uint64(0), 2, packed)
    table = np.array([1, 0, 1], dtype=np.uint8)
    out = np.empty(4, dtype=np.uint8)
    assert bitpack.unpack_for_gather(packed, 2, np.uint64(0), table, out) < 0
    assert bitpack.unpack_for_gather(packed, 2, np.uint64(0), np.ones(4, np.uint8), out) == 4


def _table(n: int = 20_000) -> pa.Table:
    rng = np.random.default_rng(5)
    words = np.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"])
    catalogue = np.array([f"item {i * 7919 % 100003:06d} of the catalogue" for i in range(300)])
    floats = np.array([0.5, 1.25, -3.0, 1e10, 2.75, 9.5])
    skew = np.where(rng.random(n) < 0.97, rng.integers(0, 4, n), rng.integers(4, 300, n))  # PFOR codes
    return pa.table({
        "word": words[rng.integers(0, 8, n)],  # an F5 block: packed codes
        "word_or_null": pa.array(words[rng.integers(0, 8, n)], mask=rng.random(n) < 0.2),
        "item": catalogue[rng.integers(0, 300, n)],  # a dictionary level with PackFor codes
        "item_or_null": pa.array(catalogue[rng.integers(0, 300, n)], mask=rng.random(n) < 0.1),
        "price": floats[rng.integers(0, 6, n)],
        "price_or_null": pa.array(floats[rng.integers(0, 6, n)], mask=rng.random(n) < 0.15),
        "sku_or_null": pa.array(np.array([f"sku {k:04d}" for k in skew]), mask=rng.random(n) < 0.1),
        "row": np.arange(n),
    })


def _filters() -> list:
    c = qdf.col
    return [
        c("word") == "echo",
        c("word") >= "delta",
        ~(c("word").isin(["alpha", "golf"])),
        c("word_or_null") != "bravo",
        ~(c("word_or_null") == "bravo"),
        c("word_or_null").is_null(),
        c("word_or_null").is_not_null() & (c("word") < "c"),
        c("item") == "item 007919 of the catalogue",
        c("item_or_null") > "item 05",
        ~(c("item_or_null") <= "item 05") | c("item_or_null").is_null(),
        c("price") > 1.0,
        c("price_or_null") < 1.0,
        ~(c("price_or_null") == 9.5),
        (c("price_or_null") >= 2.75) & (c("word_or_null") == "hotel") & (c("row") >= 100),
        c("word") == "not a word",
        c("sku_or_null") >= "sku 0002",
        c("sku_or_null").isin(["sku 0250", "sku 0001"]) | c("sku_or_null").is_null(),
    ]


def _oracle(t: pa.Table, expr: qdf.col) -> pa.Table:  # type: ignore[valid-type]
    mask = evaluate(expr, {n: t.column(n) for n in t.column_names}, t.num_rows)
    return t.filter(pa.array(mask))


@pytest.fixture(scope="module", params=["balanced", "compression"])
def coded_buffer(request: pytest.FixtureRequest) -> tuple[pa.Table, bytes]:
    t = _table()
    return t, qdf.encode(t, mode=request.param)


def test_filters_read_packed_codes(coded_buffer: tuple[pa.Table, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    """The premise of the tests below: every filter column reaches the predicate as codes."""
    _, buf = coded_buffer
    seen: dict[str, str] = {}
    real = evaluate_module.evaluate

    def spy(expr, columns, n_rows):  # noqa: ANN001, ANN202
        seen.update({name: type(v).__name__ for name, v in columns.items()})
        return real(expr, columns, n_rows)

    monkeypatch.setattr(evaluate_module, "evaluate", spy)
    names = ["word", "word_or_null", "item", "item_or_null", "price", "price_or_null", "sku_or_null"]
    expr = qdf.col(names[0]) == "x"
    for name in names[1:]:
        expr = expr | (qdf.col(name) == ("x" if "price" not in name else -1.0))
    qdf.decode(buf, filter=expr, output="arrow")
    assert seen == dict.fromkeys(names, "CodedColumn")
    # sku_or_null's codes are PFOR (not mapped while packed): decoded once, then mapped
    assert "dictionary codes: PackPFor" in qdf.explain(buf).groupby("column")["codec"].apply(list)["sku_or_null"]


@pytest.mark.parametrize("k", range(len(_filters())))
def test_filters_on_codes_keep_the_rows_the_values_keep(coded_buffer: tuple[pa.Table, bytes], k: int) -> None:
    t, buf = coded_buffer
    expr = _filters()[k]
    want = _oracle(t, expr)
    assert qdf.decode(buf, filter=expr, output="arrow").equals(want)
    assert qdf.decode(buf, filter=expr, columns=["row", "price_or_null"], output="arrow").equals(
        want.select(["row", "price_or_null"]))


@pytest.mark.parametrize("k", range(len(_filters())))
def test_filters_on_codes_in_a_file(k: int) -> None:
    t = _table()
    blob = qdf.write_qdf(t, None, mode="balanced", row_group_size=7_000)
    expr = _filters()[k]
    got = qdf.read_qdf(blob, filter=expr, output="arrow")
    assert got.equals(_oracle(t, expr).cast(got.schema))


def _skewed_strings(n: int = 20_000) -> pa.Table:
    """String columns of a few values, 97% of rows the first: an F5 block whose codes
    are a PFOR payload (not mapped while packed)."""
    rng = np.random.default_rng(11)
    tags = np.array([f"tag-{i:02d}" for i in range(8)])
    skew = np.where(rng.random(n) < 0.97, rng.integers(0, 2, n), rng.integers(2, 8, n))
    return pa.table({"tag": tags[skew], "tag_or_null": pa.array(tags[skew[::-1]], mask=rng.random(n) < 0.1),
                     "row": np.arange(n)})


def test_string_codes_in_other_payloads_are_decoded_once_and_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """An F5 block whose codes are not PackFor reaches the predicate as a CodedColumn
    mapped by one checking kernel pass (no DictionaryArray, no second check), and keeps
    the rows the values keep."""
    from qdf_kernels import columns as ck

    t = _skewed_strings()
    buf = qdf.encode(t, mode="balanced")
    assert qdf.explain(buf).set_index("column").loc["tag", "codec"] == "ColStrDictQ"
    seen: dict[str, str] = {}
    calls = []
    real_eval, real_take = evaluate_module.evaluate, ck.dictionary_take_into

    def spy(expr, columns, n_rows):  # noqa: ANN001, ANN202
        seen.update({name: type(v).__name__ for name, v in columns.items()})
        return real_eval(expr, columns, n_rows)

    def take(codes, table, out):  # noqa: ANN001, ANN202
        calls.append(len(codes))
        return real_take(codes, table, out)

    monkeypatch.setattr(evaluate_module, "evaluate", spy)
    monkeypatch.setattr(ck, "dictionary_take_into", take)
    c = qdf.col
    for expr in (c("tag") == "tag-03", c("tag_or_null").isin(["tag-00", "tag-07"]), c("tag_or_null").is_null(),
                 (c("tag") >= "tag-05") | (c("tag_or_null") != "tag-00")):
        assert qdf.decode(buf, filter=expr, output="arrow").equals(_oracle(t, expr))
    assert seen == {"tag": "CodedColumn", "tag_or_null": "CodedColumn"}
    assert t.num_rows in calls  # tag's codes: decoded once, mapped by the checking kernel



@pytest.mark.parametrize("column", ["tag", "sku_or_null"])
def test_damaged_codes_met_by_a_filter_raise_a_decode_error(column: str) -> None:
    """A filter mapping PFOR codes (an F5 block's, a dictionary level's) over damaged bytes
    raises a DecodeError, never a QueryError (the query is fine, the bytes are not), and
    where the damaged bytes still decode, keeps the rows the decoded values give."""
    t = pa.table({column: (_skewed_strings() if column == "tag" else _table()).column(column)})
    buf = qdf.encode(t, mode="balanced")
    expr = qdf.col(column) == t.column(column)[3].as_py()
    errors = 0
    names = [k for k in range(len(buf)) if buf.startswith(column.encode(), k)]
    for at in range(8, len(buf), max(1, len(buf) // 1500)):  # ~1,500 damaged copies
        if any(k <= at < k + len(column) for k in names):
            continue  # a damaged name is a column the query cannot find: a QueryError
        bad = bytearray(buf)
        bad[at] ^= 0x5A
        try:
            full = qdf.decode(bytes(bad), output="arrow")
        except qdf.DecodeError:
            full = None
        try:
            got = qdf.decode(bytes(bad), filter=expr, output="arrow")
        except qdf.QueryError as exc:  # a DecodeError is no QueryError
            raise AssertionError(f"byte {at}: {exc}") from None
        except qdf.DecodeError:
            errors += 1
            continue
        if full is not None:
            assert got.equals(_oracle(full, expr))
    assert errors > 0
