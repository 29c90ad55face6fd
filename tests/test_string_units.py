"""String column bodies as codec units: each form is one unit, registered once; the
string picker and the string reader go through the registry (docs/CODECS.md).

* every block tag the reader accepts maps to exactly one unit, and explain's names
  come from the units;
* every unit's exact size is the length of the body it writes, on real-looking columns,
  and the body reads back (and skips) through the registry to exactly its end;
* the picker takes what the registry offers, and picks the same forms as before the
  units existed (tests/test_wire_digests.py pins the bytes of every bench fixture).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pytest

from qdf_columnar.codecs import registry
from qdf_columnar.codecs.qpack import INT_CODES
from qdf_columnar.codecs.strings.unit import Column, StrPlan
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import STR_BLOCK_TAGS, StrColTag
from qdf_columnar.options import Options
from qdf_columnar.wire import strcol_write
from qdf_columnar.wire.dense import DenseReader, DenseWriter
from qdf_columnar.wire.strcol_arrow import slices_to_arrow
from qdf_columnar.wire.strcol_scan import StringSlices, scan_string_column
from qdf_columnar.wire.strcol_write import write_string_column


def _columns() -> dict[str, list]:
    rng = np.random.default_rng(12)
    n = 3000
    methods = ["GET", "POST", "PUT", "DELETE"]
    cities = [f"city-{i:03d}" for i in range(180)]
    words = ["GET", "/api/v2/orders", "/api/v2/users", "?page=", "&limit=", "HTTP/1.1", "session", "token"]
    groups = [f"CN=Group {i:03d},OU=Security Groups,DC=corp,DC=example,DC=com" for i in range(400)]
    return {
        "method": [methods[int(k)] for k in rng.integers(0, 4, n)],
        "city": [cities[int(k)] for k in rng.integers(0, len(cities), n)],
        "prefixed": [f"/srv/data/shard-{int(k):02d}" for k in rng.integers(0, 40, n)],
        "trace": [rng.bytes(16).hex() for _ in range(n)],
        "ragged_hex": [rng.bytes(int(k)).hex() for k in rng.integers(1, 12, n)],
        "text": [" ".join(rng.choice(words, int(rng.integers(2, 7)))) + str(int(rng.integers(10**6)))
                 for _ in range(n)],
        "groups": [groups[int(k)] for k in rng.integers(0, 400, n)],
        "unicode": ["".join(chr(0x400 + int(c)) for c in rng.integers(0, 100, 6)) + f"-{int(k)}"
                    for k in rng.integers(0, 10**6, n)],
        "runs": [f"state-{k // 500}" for k in range(n)],
        "short": ["a", "bb", "a", "ccc", "bb"],
        "constant": ["the same value"] * 200,
    }


COLUMNS = _columns()
#: The form write_string_column picked for each column before string bodies were units,
#: and the first 12 hex digits of the body's sha256 (balanced, compression, CASCADE),
#: produced by that code: the picker must still write the same bytes.
PICKED = {
    "method": (('dict', '6006dca5812b'), ('dict', '6006dca5812b'), ('dict', '6006dca5812b')),
    "city": (('dict', '539cded2cb63'), ('dict', '539cded2cb63'), ('dict', '539cded2cb63')),
    "prefixed": (('dict', '315f26bf8a9e'), ('dict', '315f26bf8a9e'), ('dict', '315f26bf8a9e')),
    "trace": (('alpha', '0b41c6059c28'), ('alpha', '0b41c6059c28'), ('alpha', '0b41c6059c28')),
    "ragged_hex": (('alpha', '6b3b7f4ac49f'), ('alpha', '6b3b7f4ac49f'), ('alpha', '6b3b7f4ac49f')),
    "text": (('alpha', '2c2b3143741b'), ('fsst', '5d96d740ab6f'), ('fsst', '5d96d740ab6f')),
    "groups": (('values', '02654480f68e'), ('values', '02654480f68e'), ('fsst', '60fc8e6f31c9')),
    "unicode": (('raw', '8bbe41673055'), ('fsst', '7fe17a165c00'), ('fsst', '7fe17a165c00')),
    "runs": (('dict', 'f1c1befc7e83'), ('dict', 'f1c1befc7e83'), ('dict', 'f1c1befc7e83')),
    "short": (('values', 'c756817b500e'), ('values', 'c756817b500e'), ('dict', '847a9c106266')),
    "constant": (('values', 'd0ada5082141'), ('values', 'd0ada5082141'), ('fsst', '53781102aeef')),
}


def _column(name: str) -> Column:
    return Column(pa.array(COLUMNS[name]), DenseWriter(Options.BALANCED), INT_CODES)


def _rows(sl: StringSlices | list[bytes]) -> list[str]:
    if isinstance(sl, list):
        return [v.decode() for v in sl]
    return slices_to_arrow(sl, pa.string()).to_pylist()


def test_every_block_tag_maps_to_exactly_one_unit_and_names_come_from_the_units() -> None:
    owners = {tag: [u.name for u in registry.STRING_CODECS if tag in u.tags] for tag in StrColTag}
    assert all(len(names) == 1 for names in owners.values()), owners
    assert set(registry.STRING_BY_TAG) == set(STR_BLOCK_TAGS)
    assert len(registry.STRING_BY_NAME) == len(registry.STRING_CODECS)
    assert registry.STRING_UNTAGGED.tags == {} and registry.STRING_UNTAGGED in registry.STRING_CANDIDATES
    # the names explain printed before the units (breakdown.py's own table)
    assert {t: registry.string_reference_name(t) for t in StrColTag} == {
        StrColTag.DICT: "ColStrDict", StrColTag.FSST: "ColStrFSST", StrColTag.RAW: "ColStrRaw",
        StrColTag.CONST: "ColStrConst", StrColTag.DICT_FC: "ColStrDictFC", StrColTag.ALPHA: "ColStrAlpha",
        StrColTag.DICT_Q: "ColStrDictQ"}
    assert registry.string_reference_name(0x41) == "per-value strings (Dense)"
    assert registry.STRING_REFERENCE_ORDER[-1] is registry.STRING_UNTAGGED  # its gate always passes
    for unit in registry.STRING_CODECS:
        assert unit.self_contained == (unit is not registry.STRING_UNTAGGED)


def _planned(name: str) -> list[tuple[str, StrPlan, bytes]]:
    """Every candidate's own plan for a column (each on a fresh Dense state), and its body."""
    out = []
    for unit in registry.STRING_CANDIDATES:
        col = _column(name)
        plan = unit.plan(col, None)
        if plan is None:
            continue
        buf = bytearray()
        unit.encode(buf, col, plan)
        out.append((unit.name, plan, bytes(buf)))
    return out


@pytest.mark.parametrize("name", list(COLUMNS))
def test_every_unit_sizes_exactly_what_it_writes_and_reads_it_back(name: str) -> None:
    vals = COLUMNS[name]
    planned = _planned(name)
    assert {"raw", "values"} <= {u for u, _, _ in planned}  # the slab and per-value strings always apply
    for unit_name, plan, body in planned:
        assert plan.codec == unit_name and plan.cost == len(body), unit_name
        unit = registry.STRING_BY_NAME[unit_name]
        assert (body[0] in unit.tags) == (unit is not registry.STRING_UNTAGGED)
        data = body + b"\x99"  # a following byte every reader must stop before
        r = ByteReader(data, 0)
        assert _rows(scan_string_column(r, len(vals), DenseReader())) == vals, unit_name
        assert r.pos == len(body), unit_name
        r = ByteReader(data, 0)
        scan_string_column(r, len(vals), DenseReader(), skip=True)
        assert r.pos == len(body), unit_name
        r = ByteReader(data, 0)
        assert _rows(unit.read(r, len(vals), DenseReader(), INT_CODES)) == vals  # its own read
        assert r.pos == len(body)


@pytest.mark.parametrize("name", list(COLUMNS))
def test_a_passing_reference_gate_gives_the_units_own_size(name: str) -> None:
    sizes = {u: plan.cost for u, plan, _ in _planned(name)}
    for unit in registry.STRING_REFERENCE_ORDER:
        plan = unit.gate(_column(name))
        if plan is not None and unit.name != "dict":  # the dictionary's gate may pick F5 / FA / FC
            assert plan.cost == sizes[unit.name], unit.name
        elif plan is not None:
            assert plan.cost >= sizes["dict"]  # its plan is the smallest of the three


@pytest.mark.parametrize("name", list(COLUMNS))
def test_the_picker_picks_the_forms_it_picked_before(name: str) -> None:
    arr = pa.array(COLUMNS[name])
    got = []
    for kw in ({}, {"fsst": True}, {"fsst": True, "independent": True}):
        buf = bytearray()
        form = write_string_column(buf, arr, DenseWriter(Options.BALANCED), **kw)
        planned = {u: plan.cost for u, plan, _ in _planned(name)}
        if form in planned and form != "fsst":
            assert len(buf) == planned[form]
        if kw.get("independent"):
            assert form != "values"
            assert len(buf) <= planned["raw"]
        else:
            assert len(buf) <= min(c for u, c in planned.items() if u != "fsst")
        got.append((form, hashlib.sha256(buf).hexdigest()[:12]))
    assert tuple(got) == PICKED[name]


class _OneByte:
    """A fake string unit that claims one byte and writes the raw slab."""

    name = "one_byte"
    tags: dict[int, str] = {}
    self_contained = True
    compression_only = False

    def gate(self, col: Column) -> StrPlan | None:
        return None

    def plan(self, col: Column, to_beat: int | None) -> StrPlan:
        return StrPlan(self.name, 1)

    def encode(self, out: bytearray, col: Column, plan: StrPlan) -> None:
        slab = registry.STRING_BY_NAME["raw"]
        plan = slab.plan(col, None)
        assert plan is not None
        slab.encode(out, col, plan)


def test_the_picker_iterates_over_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    arr = pa.array(COLUMNS["city"])
    assert write_string_column(bytearray(), arr, DenseWriter(Options.BALANCED)) == "dict"
    fake = _OneByte()
    monkeypatch.setattr(strcol_write, "STRING_CANDIDATES", (*registry.STRING_CANDIDATES, fake))
    monkeypatch.setitem(registry.STRING_BY_NAME, fake.name, fake)
    for kw in ({}, {"fsst": True, "independent": True}):
        buf = bytearray()
        assert write_string_column(buf, arr, DenseWriter(Options.BALANCED), **kw) == "one_byte"
        assert _rows(scan_string_column(ByteReader(bytes(buf), 0), len(arr), DenseReader())) == COLUMNS["city"]


def test_the_reader_dispatches_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    slab = registry.STRING_BY_TAG[StrColTag.RAW]

    class Spy:
        def read(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            seen.append(True)
            return slab.read(*args, **kwargs)

    buf = bytearray()
    col = _column("unicode")
    plan = slab.plan(col, None)
    assert plan is not None
    slab.encode(buf, col, plan)
    monkeypatch.setitem(registry.STRING_BY_TAG, int(StrColTag.RAW), Spy())
    assert _rows(scan_string_column(ByteReader(bytes(buf), 0), col.n, DenseReader())) == COLUMNS["unicode"]
    assert seen == [True]


def test_f9_is_read_only() -> None:
    const = registry.STRING_BY_TAG[StrColTag.CONST]
    col = _column("constant")
    assert const.gate(col) is None and const.plan(col, None) is None
    assert const not in registry.STRING_CANDIDATES
