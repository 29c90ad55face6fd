"""Benchmark fixtures (bench/fixtures): Go PCG port, generator determinism, Go-JSON fidelity, Arrow shape.

The five competitive fixtures must serialise to exactly the JSON sizes Go's encoding/json reports in
docs/COMPETITIVE.md; that is only possible if the PCG port, every draw and the JSON formatting match
Go, so it is the strongest end-to-end check available without a Go toolchain. Scale 1 only, plus two
cheap scale-100 variants (wide, wolverine), to keep `make test` fast.
"""

from __future__ import annotations

import hashlib
import math
import sys
from pathlib import Path

import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `bench` lives at the repo root

from bench.fixtures import COMPETITIVE, FIXTURES, GoMap, get, go_float, go_json, to_arrow_value  # noqa: E402
from bench.fixtures.gorand import GO_PCG_1_2, M64, PCG  # noqa: E402

#: sha256 of go_json(root) at scale 1 (regression pin: any change to a generator or the
#: serializer shows up here; the Go-size checks below say whether a change is still faithful).
SHA256 = {
    "rtb": "874f3b6629f82643b7481cccc19a92b542c9c1dbc32816c1e0fa7ea0974ce7aa",
    "iot": "a0ed72858aaf094cce264d0d2ac9b9c8f4abd8b99c34c2b61ab311260c40fd8f",
    "otlp": "a8b89c91777711b96af0a305f954ac831b77f567951902a60c3c9e637e78c66d",
    "logs": "1260ed3fa5e53df04a74fa7648946aeec0d754f3010607e2813eaeb7bfaea168",
    "events": "16a870340583bea0fe6a598f66384fe6c07903a13b583866b0f4f15be4052a90",
    "ad": "c6829a35a2900a378d64a9094af80417d485d76169d92c848d7ef85e1e7a297b",
    "wide": "4b29e35e651e9aeb294f3eb6ee0b0649ab8b33c83eb368ea0e6fffae25fb89d4",
    "access": "f66d70a62922165845a3b6470e1408c51fb46d99c8f12b3936d960edf4665ae0",
    "wolverine": "264e7383f8f740703788e3926e311fadd29598e7772641d06046ce3b5a17c0ff",
}
ROWS = {"rtb": 1024, "iot": 32, "otlp": 4, "logs": 1024, "events": 1024, "ad": 5000, "wide": 2000,
        "access": 1024, "wolverine": 1}  # fmt: skip


# --- gorand: Go math/rand/v2 PCG ---------------------------------------------------------------


def test_pcg_matches_go_test_vectors() -> None:
    rng = PCG(1, 2)
    assert [rng.uint64() for _ in range(20)] == list(GO_PCG_1_2)


def test_pcg_vectors_across_chunk_refills() -> None:
    # take() / hex() slice the look-ahead buffer; a draw straddling a refill must not be lost.
    rng = PCG(1, 2)
    rng._chunk = 3  # force a refill every few draws
    got = rng.take(2) + [rng.uint64()] + rng.take(7) + rng.take(10)
    assert got == list(GO_PCG_1_2)


def _uint64n_reference(rng: PCG, n: int) -> int:
    """Go's uint64n written out literally (thresh computed up front)."""
    if n & (n - 1) == 0:
        return rng.uint64() & (n - 1)
    thresh = ((1 << 64) - n) % n
    while True:
        p = rng.uint64() * n
        if (p & M64) >= thresh:
            return p >> 64


@pytest.mark.parametrize("n", [1, 2, 3, 6, 16, 57, 256, 1000, 10_000, 220_752_000, (1 << 63) + 12345, M64])
def test_intn_matches_reference(n: int) -> None:
    a, b = PCG(7, 9), PCG(7, 9)
    assert [a.intn(n) for _ in range(300)] == [_uint64n_reference(b, n) for _ in range(300)]
    assert a.uint64() == b.uint64()  # same number of draws consumed (rejections included)


def test_intn_rejects_nonpositive() -> None:
    with pytest.raises(ValueError):
        PCG(1, 2).intn(0)


def test_float64_and_hex_helpers() -> None:
    rng = PCG(1, 2)
    assert rng.float64() == (GO_PCG_1_2[0] & ((1 << 53) - 1)) / 2**53
    assert rng.hex(3) == "".join("0123456789abcdef"[x & 15] for x in GO_PCG_1_2[1:4])
    assert rng.bytes_intn256(2) == bytes(x & 255 for x in GO_PCG_1_2[4:6])


# --- go_json: Go encoding/json formatting ------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (100.0, "100"),
        (0.1, "0.1"),
        (-20.38, "-20.38"),
        (0.6779000000000001, "0.6779000000000001"),
        (-0.0, "-0"),
        (1e-6, "0.000001"),
        (1.5e-5, "0.000015"),
        (1e-7, "1e-7"),
        (1.25e-300, "1.25e-300"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (123456789.125, "123456789.125"),
    ],
)
def test_go_float(value: float, text: str) -> None:
    assert go_float(value) == text


def test_go_float_rejects_nan() -> None:
    with pytest.raises(ValueError):
        go_float(math.nan)


def test_go_json_structs_maps_bytes_escapes() -> None:
    root = {
        "z": GoMap(b="2", a="1"),  # map: keys sorted
        "a": [1, True, None, b"\x00\xff", []],  # struct: declaration order kept
        "s": "<a&b>\n\"é\u2028",
    }
    assert go_json(root) == (
        b'{"z":{"a":"1","b":"2"},"a":[1,true,null,"AP8=",[]],'
        b'"s":"\\u003ca\\u0026b\\u003e\\n\\"\xc3\xa9\\u2028"}'
    )


# --- fixtures ----------------------------------------------------------------------------------


def test_registry_order_and_cache() -> None:
    assert list(FIXTURES) == ["rtb", "iot", "otlp", "logs", "events", "ad", "wide", "access", "wolverine"]
    assert get("logs") is get("logs")
    with pytest.raises(KeyError):
        get("nope")


@pytest.mark.parametrize("key", list(FIXTURES))
def test_fixture_is_deterministic(key: str) -> None:
    assert hashlib.sha256(go_json(get(key).root)).hexdigest() == SHA256[key]


@pytest.mark.parametrize("key", COMPETITIVE)
def test_json_size_matches_go(key: str) -> None:
    fx = get(key)
    size = len(go_json(fx.root))
    assert fx.go_json_bytes is not None
    ratio = size / fx.go_json_bytes
    assert abs(ratio - 1) <= 0.15, f"{key}: {size} vs Go {fx.go_json_bytes} (ratio {ratio:.4f})"
    # Stronger: the port is bit-exact, and encoding/json sorts map keys, so Go's size is reproducible.
    assert size == fx.go_json_bytes


def test_ad_json_size_matches_published_kb() -> None:
    # docs/COMPETITIVE.md: "json 3 833 KB" for 5 000 AD users (Go field names, no json tags).
    assert round(len(go_json(get("ad").root)) / 1024) == 3833


def test_first_rtb_request_pinned() -> None:
    first = get("rtb").records[0]
    assert first["id"] == "fc7b7c8db9ec6d8d"
    assert first["imp"][0]["ext"] == {"ptype": "web", "sstype": "banner"}
    assert first["dev"]["geo"] == {"country": "CH", "lat": -20.38, "lon": 113.61, "type": 1}


@pytest.mark.parametrize("key", list(FIXTURES))
def test_table_matches_records(key: str) -> None:
    fx = get(key)
    assert fx.key == key and fx.scale == 1
    assert fx.table.num_rows == len(fx.records) == ROWS[key]
    # Arrow returns maps as lists of (key, value) tuples, structs as dicts.
    assert fx.table.to_pylist() == to_arrow_value(fx.records)
    for col in fx.select:
        assert col in fx.table.schema.names
    for col, op, _ in fx.where:
        assert op in ("==", "!=", "<", "<=", ">", ">=")
        typ = fx.table.schema.field(col).type
        assert not pa.types.is_nested(typ), f"where column {col} must be a top-level scalar"


def test_schema_types() -> None:
    rtb = get("rtb").table.schema
    assert rtb.field("at").type == pa.int64()
    assert pa.types.is_map(rtb.field("imp").type.value_type.field("ext").type)
    assert get("events").table.schema.field("payload").type == pa.binary()
    ad = get("ad").table.schema
    assert ad.field("LogonCount").type == pa.int32()
    assert ad.field("Enabled").type == pa.bool_()
    assert get("iot").table.schema.field("temp").type == pa.list_(pa.float64())


def test_where_fractions_are_modest() -> None:
    import pyarrow.parquet as pq

    for key in FIXTURES:
        fx = get(key)
        if not fx.where or fx.table.num_rows < 100:
            continue
        kept = fx.table.filter(pq.filters_to_expression(fx.where)).num_rows / fx.table.num_rows
        assert 0.005 <= kept <= 0.1, (key, kept)


def test_go_json_bytes_only_at_scale_1() -> None:
    wide = get("wide", 100)
    assert wide.table.num_rows == 100 * ROWS["wide"]
    assert wide.go_json_bytes is None
    wolv = get("wolverine", 100)
    assert wolv.table.num_rows == 10_000
    assert wolv.records[0] == get("wolverine").root  # row 0 is the canonical message
