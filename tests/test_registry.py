"""The codec registry: every codec is one unit with the same contract, registered once,
and the pickers and readers go through the registry (docs/CODECS.md)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qdf_columnar as qdf
from qdf_columnar.codecs import floatenc, intdec, intenc, picker, registry
from qdf_columnar.codecs.floats.unit import F64, FloatPlan, replaces
from qdf_columnar.codecs.ints.unit import Plan
from qdf_columnar.codecs.qpack import decode_float_payload, decode_int_payload, skip_payload
from qdf_columnar.codecs.stats import compute_stats
from qdf_columnar.errors import InvalidOptionError, QdfError
from qdf_columnar.format.reader import ByteReader
from qdf_columnar.format.tags import QPackTag
from qdf_columnar.format.varint import encode_uvarint, uvarint_len

INT_FORCE = [c.name for c in registry.INT_CANDIDATES] + ["block"]


def _int_values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Runs, a few distinct values and outliers, so every codec's gate can pass."""
    base = np.repeat(rng.choice([3, 9, 12, 40], max(n // 8, 1)), 8)[:n]
    base[rng.random(n) < 0.02] = 1 << 20
    return base.astype(np.int64)


def test_names_tags_and_references_are_unique_and_complete() -> None:
    units = [*registry.INT_CODECS, *registry.FLOAT_CANDIDATES, *registry.BOOL_CODECS]
    for u in units:
        assert u.name and u.reference.startswith(("Pack", "Zone"))
    assert len({c.tag for c in registry.INT_CODECS}) == len(registry.INT_CODECS)
    assert len(registry.FLOAT_BY_WIRE) == sum(len(c.wire) for c in registry.FLOAT_CANDIDATES)
    assert [c.name for c in registry.INT_CANDIDATES] == ["raw", "for", "delta", "rle", "dict", "pfor"]
    for tag in QPackTag:
        assert not registry.reference_name(tag).startswith("unknown")
    assert registry.reference_name(0x42) == "unknown_0x42"


@pytest.mark.parametrize("codec", INT_FORCE)
@pytest.mark.parametrize("signed", [True, False])
def test_every_int_unit_reads_what_it_writes_and_skips_to_the_same_place(codec: str, signed: bool) -> None:
    rng = np.random.default_rng(3)
    vals = _int_values(rng, 2000)
    vals = vals if signed else vals.astype(np.uint64)
    buf = bytearray()
    intenc.encode_int_array(buf, vals, force=codec)
    assert buf[0] == registry.INT_BY_NAME[codec].tag
    buf += b"\x99"  # a following byte the readers must stop before
    r = ByteReader(bytes(buf), 0)
    payload = intdec.scan_int(r, len(vals))
    end = r.pos
    assert end == len(buf) - 1
    assert payload.values().tolist() == vals.tolist()
    outliers = np.flatnonzero(vals == (1 << 20))[:20]  # PFOR exceptions among the rows taken
    rows = np.union1d(rng.choice(len(vals), 100, replace=False), outliers).astype(np.int64)
    fresh = intdec.scan_int(ByteReader(bytes(buf), 0), len(vals))
    assert fresh.take(rows).tolist() == vals[rows].tolist()
    r = ByteReader(bytes(buf), 0)
    skip_payload(r)
    assert r.pos == end


@pytest.mark.parametrize("codec", [c.name for c in registry.FLOAT_CANDIDATES])
def test_every_float_unit_reads_what_it_writes_and_skips_to_the_same_place(codec: str) -> None:
    rng = np.random.default_rng(4)
    vals = np.round(20 + np.cumsum(rng.standard_normal(3000)) * 0.1, 2)
    buf = bytearray()
    floatenc.encode_floats(buf, vals, compress=True, force=codec)
    assert (buf[0], buf[1]) in registry.FLOAT_BY_NAME[codec].wire
    buf += b"\x99"
    r = ByteReader(bytes(buf), 0)
    got = decode_float_payload(r, n=len(vals))
    assert r.pos == len(buf) - 1 and got.view(np.uint64).tolist() == vals.view(np.uint64).tolist()
    r = ByteReader(bytes(buf), 0)
    skip_payload(r)
    assert r.pos == len(buf) - 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), single=st.booleans())
def test_a_scanned_alp_payload_answers_like_a_full_read(data: st.DataObject, single: bool) -> None:
    """ALP scanned for late decode: ``values()`` and ``take(rows)`` (exceptions patched at
    the rows they hit) equal a full read, bit for bit, and the scan ends where the read
    does; the widths include 0 (a constant) and exceptions include NaN, inf and -0.0."""
    from qdf_columnar.codecs.floatdec import scan_float

    dt = np.float32 if single else np.float64
    n = data.draw(st.integers(1, 400))
    pool = data.draw(st.lists(st.sampled_from([1.25, 3.5, 100.75, -2.0, 7.0]), min_size=1, max_size=5))
    vals = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)), dtype=dt)
    for i in data.draw(st.lists(st.integers(0, n - 1), max_size=6)):
        vals[i] = data.draw(st.sampled_from([np.nan, np.inf, -0.0, 1e300 if not single else 3e38, 0.1234567]))
    buf = bytearray()
    floatenc.encode_floats(buf, vals, compress=True, force="alp")
    buf += b"\x99"
    whole = decode_float_payload(ByteReader(bytes(buf), 0), n=n)
    r = ByteReader(bytes(buf), 0)
    payload = scan_float(r, n, True)
    assert r.pos == len(buf) - 1
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1)))), dtype=np.int64)
    bits = whole.view(np.uint32 if single else np.uint64)
    assert payload.take(rows).view(bits.dtype).tolist() == bits[rows].tolist()
    assert payload.values().view(bits.dtype).tolist() == bits.tolist()


def test_an_alp_payload_that_could_overflow_is_read_at_once() -> None:
    """A FOR base near int64's top lets a value overflow: the scan decodes at once, so a
    damaged body is reported with its offset (a later decode never fails)."""
    from qdf_columnar.codecs.floatdec import scan_float
    from qdf_columnar.errors import CorruptDataError

    def alp(base: int, body: bytes) -> bytes:  # F4 0B n=2, exponent 0, zigzag FOR base, width 8, no exceptions
        return bytes([0xF4, 0x0B, 2, 0]) + encode_uvarint(base << 1) + bytes([8]) + body + bytes([0])

    assert not scan_float(ByteReader(alp(1 << 62, b"\xff\xff"), 0), 2, True).decoded  # cannot overflow: late
    top = (1 << 63) - 100
    ok = scan_float(ByteReader(alp(top, b"\x01\x02"), 0), 2, True)
    assert ok.decoded and ok.values().tolist() == [float(top + 1), float(top + 2)]
    with pytest.raises(CorruptDataError):
        scan_float(ByteReader(alp(top, b"\x01\xff"), 0), 2, True)


class _Cheapest:
    """A fake integer codec that claims one byte and writes the values as raw."""

    name = "cheapest"
    reference = "PackCheapest"
    tag = registry.INT_BY_NAME["raw"].tag

    def estimate(self, s, to_beat):  # noqa: ANN001, ANN201
        return Plan(self.name, 1)

    def encode(self, out, s, plan, child):  # noqa: ANN001, ANN201
        registry.INT_BY_NAME["raw"].encode(out, s, Plan("raw", 0), child)

    def capped(self, plan):  # noqa: ANN001, ANN201
        return False


def test_the_picker_iterates_over_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    vals = np.arange(1000, dtype=np.int64)  # Delta+FOR, normally
    assert picker.pick(compute_stats(vals.view(np.uint64), True)).codec == "delta"
    fake = _Cheapest()
    monkeypatch.setattr(picker, "INT_CANDIDATES", (*registry.INT_CANDIDATES, fake))
    monkeypatch.setitem(registry.INT_BY_NAME, fake.name, fake)
    assert picker.pick(compute_stats(vals.view(np.uint64), True)).codec == "cheapest"
    buf = bytearray()
    intenc.encode_int_array(buf, vals)
    assert decode_int_payload(ByteReader(bytes(buf), 0), n=1000).tolist() == vals.tolist()


def test_forcing_an_unknown_or_gated_codec_says_which() -> None:
    s = compute_stats(np.arange(3, dtype=np.uint64), False)
    with pytest.raises(InvalidOptionError, match="unknown integer codec"):
        picker.forced(s, "zstd")
    with pytest.raises(InvalidOptionError, match="not applicable"):
        picker.forced(s, "rle")  # fewer than 8 rows


def _plan(cost: int, exact: bool, size: int | None = None) -> FloatPlan:
    return FloatPlan("x", cost, exact, payload=None if size is None else bytes(size))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=st.integers(0, 50), b=st.integers(0, 50), ea=st.booleans(), eb=st.booleans(),
       ra=st.integers(0, 50), rb=st.integers(0, 50))
def test_the_float_replacement_rule(a: int, b: int, ea: bool, eb: bool, ra: int, rb: int) -> None:
    """Smaller wins; an exact cost wins a tie with a bound; two bounds are measured."""
    new, best = _plan(a, ea), _plan(b, eb)
    sizes = {id(new): _plan(a, ea, ra), id(best): _plan(b, eb, rb)}
    got = replaces(new, best, lambda p: sizes[id(p)])
    if a < b and not ea and not eb:
        assert got is (sizes[id(new)] if ra < rb else sizes[id(best)])
    elif a < b or (a == b and ea and not eb):
        assert got is new
    else:
        assert got is None


def test_the_float_picker_honours_light_mode() -> None:
    rng = np.random.default_rng(5)
    smooth = 20 + np.sin(np.arange(4000) / 50) + rng.standard_normal(4000) * 1e-9  # Gorilla/Chimp territory
    full = floatenc.pick(np.ascontiguousarray(smooth), F64)
    light = floatenc.pick(np.ascontiguousarray(smooth), F64, light=True)
    assert registry.FLOAT_BY_NAME[light.codec].memory_speed
    assert full.cost <= light.cost


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), signed=st.booleans())
def test_long_runs_stay_unexpanded_and_answer_like_the_expansion(data: st.DataObject, signed: bool) -> None:
    lo, hi = (-(2**63), 2**63 - 1) if signed else (0, 2**64 - 1)
    runs = data.draw(st.lists(st.tuples(st.integers(lo, hi), st.integers(32, 600)), min_size=1, max_size=12))
    vals = np.concatenate([np.full(k, v, dtype=np.int64 if signed else np.uint64) for v, k in runs])
    buf = bytearray()
    intenc.encode_int_array(buf, vals, force="rle")
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, len(vals) - 1), max_size=50))), dtype=np.int64)
    lazy = intdec.scan_int(ByteReader(bytes(buf), 0), len(vals))
    assert not lazy.decoded  # kept as runs
    assert lazy.take(rows).tolist() == vals[rows].tolist()
    assert lazy.values().tolist() == vals.tolist()
    # Damage is found at scan time, where the reader without a row count finds it.
    at = data.draw(st.integers(2 + uvarint_len(len(vals)), len(buf) - 1))  # in the runs
    bad = bytearray(buf)
    bad[at] ^= data.draw(st.integers(1, 255))
    bad = bytes(bad[: data.draw(st.integers(at, len(bad)))])
    try:
        ref = ("ok", intdec.read_int(ByteReader(bad, 0), None, True, True).tolist())
    except QdfError as exc:
        ref = (type(exc).__name__, exc.offset)
    try:
        got = ("ok", intdec.scan_int(ByteReader(bad, 0), len(vals)).values().tolist())
    except QdfError as exc:
        got = (type(exc).__name__, exc.offset)
    assert got == ref


def test_string_codes_kept_in_runs_are_checked_when_used() -> None:
    """A QPack-indexed string dictionary whose codes stay in runs: a code outside the
    dictionary is found when the codes are used (all rows or the kept ones), naming the column."""
    n = 20_000
    names = np.repeat(np.array(["alpha", "bravo", "charlie", "delta"]), n // 4)
    t = pa.table({"k": pa.array(np.arange(n)), "s": pa.array(names)})
    buf = qdf.encode(t, mode="balanced")
    assert qdf.explain(buf).set_index("column").loc["s", "codec"] == "ColStrDictQ"
    assert qdf.decode(buf, filter=[("k", "<", 10)], output="arrow").column("s").to_pylist() == ["alpha"] * 10
    rle = bytes((QPackTag.RLE, 0x03)) + encode_uvarint(n)
    at = bytes(buf).index(rle) + len(rle)  # the first run's value: code 0
    bad = bytearray(buf)
    bad[at] = 9  # outside the 4-entry dictionary
    with pytest.raises(qdf.CorruptDataError) as full:
        qdf.decode(bytes(bad))
    assert full.value.column == "s"
    with pytest.raises(qdf.CorruptDataError):
        qdf.decode(bytes(bad), filter=[("k", "<", 10)])  # the kept rows fall in the bad run
    got = qdf.decode(bytes(bad), filter=[("k", ">=", n - 10)], output="arrow")  # they do not
    assert got.column("s").to_pylist() == ["delta"] * 10


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_pfor_exception_list_is_checked_by_the_rules_of_the_patch_kernel(data: st.DataObject) -> None:
    """The reader keeps PFOR's exceptions as arrays (checked in numpy); on damaged lists it
    must fail exactly where the skip path (the patch kernel) fails, and succeed where it does."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = 600
    vals = rng.integers(0, 16, n)
    vals[rng.random(n) < 0.05] = 1 << 30
    buf = bytearray()
    intenc.encode_int_array(buf, vals.astype(np.uint64), force="pfor")
    hdr = ByteReader(bytes(buf), 2)  # EE, kind, uvarint(n), width, uvarint(min), body, count, list
    hdr.uvarint("n")
    width = hdr.u8("width")
    hdr.uvarint("min")
    exc_at = hdr.pos + (n * width + 7) // 8
    at = data.draw(st.integers(exc_at, len(buf) - 1))  # the exception count or list
    bad = bytearray(buf)
    bad[at] = data.draw(st.integers(0, 255))
    bad = bytes(bad[: data.draw(st.integers(at, len(bad)))])

    def outcome(f):  # noqa: ANN001, ANN202
        r = ByteReader(bad, 0)
        try:
            got = f(r)
        except QdfError as exc:
            return type(exc).__name__, exc.offset
        return "ok", r.pos, None if got is None else got.tolist()

    skipped = outcome(lambda r: intdec.skip_int(r, n))
    read = outcome(lambda r: intdec.scan_int(r, n).values())
    assert read[:2] == skipped[:2]
    if read[0] == "ok":
        full = outcome(lambda r: decode_int_payload(r, n=n))
        assert full == read
