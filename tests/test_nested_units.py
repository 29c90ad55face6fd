"""Nested codec units (qdf_columnar/codecs/nested): the registry, the plan's dispatch, and
each unit's shred / assemble pair without the wire in between (tests/test_shred.py
covers whole batches through encode and decode)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.codecs.nested.lists import LIST
from qdf_columnar.codecs.nested.plan import Plan, assemble, shred_into, shreddable, unit_for, unit_slots
from qdf_columnar.codecs.nested.split_map import SPLIT_ENTRIES, split_keys
from qdf_columnar.codecs.nested.struct import STRUCT
from qdf_columnar.codecs.nested.unit import map_entries_type
from qdf_columnar.codecs.registry import NESTED_BY_NAME, NESTED_CODECS
from qdf_columnar.errors import CorruptDataError

_MAP = pa.map_(pa.string(), pa.int64())
_ENTRIES = map_entries_type(_MAP)


def test_every_unit_is_registered_once_by_name() -> None:
    assert NESTED_CODECS == (LIST, SPLIT_ENTRIES, STRUCT)
    assert set(NESTED_BY_NAME) == {"list", "split_map", "struct"}
    assert len({u.reference for u in NESTED_CODECS}) == len(NESTED_CODECS)


@pytest.mark.parametrize(("typ", "entries", "split", "want"), [
    (pa.list_(pa.int64()), False, None, LIST),
    (pa.large_list(pa.string()), False, None, LIST),
    (pa.list_(pa.float64(), 3), False, None, LIST),
    (_MAP, False, None, LIST),
    (pa.struct([("a", pa.int64())]), False, None, STRUCT),
    (_ENTRIES, True, None, STRUCT),
    (_ENTRIES, True, ["a", "b"], SPLIT_ENTRIES),
    (pa.int64(), False, None, None),
    (pa.string(), False, None, None),
])
def test_each_nested_type_has_exactly_one_unit(typ, entries, split, want) -> None:
    takers = [u for u in NESTED_CODECS if u.applies(typ, entries, split)]
    assert takers == ([] if want is None else [want])
    assert unit_for(typ, entries, split) is want


def test_shreddable_asks_each_unit_about_its_children() -> None:
    assert shreddable(pa.list_(pa.struct([("a", pa.int64()), ("m", _MAP)])))
    assert not shreddable(pa.struct([]))  # a struct without fields has no slot to hold it
    assert not shreddable(pa.list_(pa.struct([])))
    assert not shreddable(pa.map_(pa.string(), pa.month_day_nano_interval()))  # no flat kind
    deep = pa.int64()
    for _ in range(70):
        deep = pa.list_(deep)
    assert not shreddable(deep)




@st.composite
def nested_arrays(draw, depth: int = 0):
    """(Arrow type, Python values of a few rows, nulls included)."""
    kinds = ["int", "str"] if depth >= 3 else ["int", "str", "list", "large", "fixed", "struct", "map"]
    kind = draw(st.sampled_from(kinds))
    if kind == "int":
        return pa.int64(), st.one_of(st.none(), st.integers(-5, 5))
    if kind == "str":
        return pa.string(), st.one_of(st.none(), st.sampled_from(["", "a", "bc"]))
    if kind == "map":
        vt, vs = draw(nested_arrays(depth + 1))
        return pa.map_(pa.string(), vt), st.one_of(
            st.none(), st.dictionaries(st.sampled_from("abc"), vs, max_size=3).map(lambda d: list(d.items())))
    if kind == "struct":
        fields = [draw(nested_arrays(depth + 1)) for _ in range(draw(st.integers(1, 2)))]
        typ = pa.struct([(f"f{i}", t) for i, (t, _) in enumerate(fields)])
        return typ, st.one_of(st.none(), st.fixed_dictionaries({f"f{i}": s for i, (_, s) in enumerate(fields)}))
    vt, vs = draw(nested_arrays(depth + 1))
    if kind == "fixed":
        return pa.list_(vt, 2), st.one_of(st.none(), st.lists(vs, min_size=2, max_size=2))
    return (pa.list_(vt) if kind == "list" else pa.large_list(vt)), st.one_of(st.none(), st.lists(vs, max_size=3))


def _through_units(arr: pa.Array, split: list[str] | None = None) -> pa.Array:
    """shred_into then assemble, by the same plan, with no bytes in between."""
    plan = Plan([], {"c": split} if split else None)
    node = plan.add("c", arr.type)
    out: list[list[pa.Array]] = [[] for _ in plan.levels]
    shred_into(node, arr, out)
    levels = [{s.name: a for s, a in zip(slots, arrays)} for slots, arrays in zip(plan.levels, out)]
    assert [[s.name for s in slots] for slots in plan.levels] == [list(lv) for lv in levels]  # slot order kept
    rows = [len(arrays[0]) if arrays else 0 for arrays in out]
    return assemble(node, levels, rows)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_shred_then_assemble_gives_the_array_back(data) -> None:
    typ, values = data.draw(nested_arrays())
    if not pa.types.is_nested(typ):
        typ, values = pa.list_(typ), st.one_of(st.none(), st.lists(values, max_size=3))
    rows = data.draw(st.lists(values, max_size=9))
    arr = pa.array(rows, type=typ)
    assert _through_units(arr).equals(arr)
    if len(arr) > 2:  # non-zero offsets: every unit honours the slice
        part = arr.slice(1, len(arr) - 2)
        assert _through_units(part).equals(part)


def test_split_map_values_come_back_in_entry_order() -> None:
    rng = np.random.default_rng(3)
    keys = ["x", "y", "zz"]
    rows = [None if i % 9 == 0 else
            [(keys[k], int(v)) for k, v in zip(rng.integers(0, 3, i % 4), rng.integers(0, 99, 4))]
            for i in range(200)]
    arr = pa.array(rows, _MAP)
    chosen = split_keys(arr)
    assert sorted(chosen) == keys
    assert _through_units(arr, chosen).equals(arr)
    assert split_keys(pa.array(rows[:10], _MAP)) is None  # too few entries to pay for the levels


def test_assemble_refuses_levels_that_do_not_fit() -> None:
    arr = pa.array([[1, 2], [3]], pa.list_(pa.int64()))
    plan = Plan([])
    node = plan.add("c", arr.type)
    out: list[list[pa.Array]] = [[] for _ in plan.levels]
    shred_into(node, arr, out)
    bad = [{"c": pa.array([2, -1])}, {"c[]": out[1][0]}]
    with pytest.raises(CorruptDataError, match="negative length"):
        assemble(node, bad, [2, 3])
    short = [{"c": out[0][0]}, {"c[]": pa.array([1, 2])}]
    with pytest.raises(CorruptDataError, match="elements"):
        assemble(node, short, [2, 2])
    plan = Plan([], {"m": ["a", "b"]})
    node = plan.add("m", _MAP)
    levels = [{"m": pa.array([1])}, {"m.key": pa.array(["q"])}, {"m.value[a]": pa.array([], pa.int64())},
              {"m.value[b]": pa.array([], pa.int64())}]
    with pytest.raises(CorruptDataError, match="split key list"):
        assemble(node, levels, [1, 1, 0, 0])


def test_explain_names_the_unit_of_each_nested_slot() -> None:
    t = pa.table({"id": np.arange(100), "s": pa.array([{"a": i} for i in range(100)]),
                  "l": pa.array([[i] * (i % 3) for i in range(100)]),
                  "m": pa.array([[("k", i), ("j", -i)] for i in range(100)], _MAP)})
    report = qdf.explain(qdf.encode(t))
    codecs = dict(zip(report["column"], report["codec"]))
    assert codecs["s"].startswith("struct validity: ") and codecs["l"].startswith("list / map lengths: ")
    assert codecs["m"].startswith("list / map lengths: ")
    assert not any(str(c).startswith(("struct", "list")) for n, c in codecs.items() if n in ("id", "s.a", "l[]"))
    plan = Plan(["id"], {"m": ["k", "j"]})
    nodes = [plan.flat("id"), plan.add("s", t.schema.field("s").type), plan.add("m", _MAP)]
    assert {k: u.name for k, u in unit_slots(nodes).items()} == {(0, "s"): "struct", (0, "m"): "list"}
