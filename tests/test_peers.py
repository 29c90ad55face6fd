"""Round-trip, projection and filter tests for the benchmark peer adapters (bench/peers).

Uses three small hand-made fixtures (flat; nested with list<string>, map, list<struct>,
struct and binary columns; an RTB-shaped one that exercises bench/proto/bench.proto),
so it does not depend on the fixture generators. Peers whose optional packages
(the ``bench`` extra) are missing are skipped via ``pytest.importorskip``; json,
pickle, Parquet, IPC and qdf need only the core dependencies and always run.
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pytest

from bench.fixtures.base import Fixture
from bench.peers import PEERS, Peer
from bench.peers.base import canon_table
from bench.peers.columnar import dnf_mask, dnf_to_sql

# ----------------------------------------------------------------------------- fixtures


def _flat() -> Fixture:
    n = 40
    records = [
        {
            "ID": i,
            "Level": ["INFO", "WARN", "ERROR"][i % 3],
            "Code": 200 + (i * 37) % 400,
            "Latency": [0.5 * i, math.nan, -0.0, 1e300][i % 4] if i % 7 else None,
            "OK": i % 2 == 0,
            "Host": None if i % 5 == 0 else f"host-{i % 4}",
            "Token": bytes([i, 0, 255]),
        }
        for i in range(n)
    ]
    schema = pa.schema(
        [
            ("ID", pa.int64()),
            ("Level", pa.string()),
            ("Code", pa.int32()),
            ("Latency", pa.float64()),
            ("OK", pa.bool_()),
            ("Host", pa.string()),
            ("Token", pa.binary()),
        ]
    )
    return Fixture(
        key="flat",
        name="flat 40",
        scale=1,
        root=records,
        records=records,
        table=pa.Table.from_pylist(records, schema=schema),
        select=("Code", "Host"),
        where=[("Code", ">=", 300), ("Level", "==", "ERROR")],
    )


_ATTR = pa.struct([("Key", pa.string()), ("Value", pa.int64())])


def _nested() -> Fixture:
    records = [
        {
            "TS": 1_700_000_000_000 + i,
            "Source": f"svc-{i % 3}",
            "Tags": [f"t{j}" for j in range(i % 4)] if i != 5 else None,
            "Labels": {f"k{j}": f"v{i}-{j}" for j in range(i % 3)},
            "Attrs": [{"Key": f"a{j}", "Value": i * j - 3} for j in range(i % 3)],
            "Origin": {"Region": "eu", "Zone": i % 2} if i % 4 else None,
            "Payload": bytes(range(i % 9)) * 3,
        }
        for i in range(24)
    ]
    schema = pa.schema(
        [
            ("TS", pa.int64()),
            ("Source", pa.string()),
            ("Tags", pa.list_(pa.string())),
            ("Labels", pa.map_(pa.string(), pa.string())),
            ("Attrs", pa.list_(_ATTR)),
            ("Origin", pa.struct([("Region", pa.string()), ("Zone", pa.int64())])),
            ("Payload", pa.binary()),
        ]
    )
    # Arrow maps are lists of pairs; from_pylist accepts dicts for them.
    table = pa.Table.from_pylist(records, schema=schema)
    return Fixture(
        key="nested",
        name="nested 24",
        scale=1,
        root={"Events": records, "Count": len(records)},
        records=records,
        table=table,
        select=("Source", "Labels"),
        where=[("Source", "==", "svc-1")],
    )


def _rtb() -> Fixture:
    """Go field names of the Go library's RTB structs (mirrored in bench.proto)."""
    records = [
        {
            "ID": f"req-{i}",
            "At": 1 + i % 2,
            "Tmax": 120,
            "Imp": [
                {
                    "ID": f"imp-{i}-{j}",
                    "BidFloor": 0.25 * (j + 1),
                    "W": 300,
                    "H": 250,
                    "DealIDs": [f"d{i}"] if j else [],
                    "Ext": {"pos": str(j)},
                }
                for j in range(1 + i % 2)
            ],
            "Dev": {
                "UA": "Mozilla/5.0",
                "IP": f"10.0.0.{i}",
                "OS": i % 3,
                "Type": 2,
                "Geo": {"Country": "DE", "Lat": 52.5 + i, "Lon": 13.4, "Type": 0},
            }
            if i != 3
            else None,
            "Cur": ["USD"],
        }
        for i in range(12)
    ]
    geo = pa.struct([("Country", pa.string()), ("Lat", pa.float64()), ("Lon", pa.float64()), ("Type", pa.int64())])
    dev = pa.struct([("UA", pa.string()), ("IP", pa.string()), ("OS", pa.int64()), ("Type", pa.int64()), ("Geo", geo)])
    imp = pa.struct(
        [
            ("ID", pa.string()),
            ("BidFloor", pa.float64()),
            ("W", pa.int64()),
            ("H", pa.int64()),
            ("DealIDs", pa.list_(pa.string())),
            ("Ext", pa.map_(pa.string(), pa.string())),
        ]
    )
    schema = pa.schema(
        [("ID", pa.string()), ("At", pa.int64()), ("Tmax", pa.int64()), ("Imp", pa.list_(imp)), ("Dev", dev),
         ("Cur", pa.list_(pa.string()))]
    )  # fmt: skip
    return Fixture(
        key="rtb",
        name="RTB 12",
        scale=1,
        root=records,
        records=records,
        table=pa.Table.from_pylist(records, schema=schema),
        select=("ID", "Tmax"),
        where=[("At", "==", 2)],
    )


FIXTURES = {f.key: f for f in (_flat(), _nested(), _rtb())}

#: (peer, fixture) pairs that must be refused by supports(), not fail in check()
EXPECTED_UNSUPPORTED = {
    ("orjson", "flat"),  # NaN would come back as null
    ("protobuf", "nested"),  # a null list (row 5's Tags) vs proto3's empty repeated
}


# ----------------------------------------------------------------------------- helpers


def _ready(peer: Peer) -> Peer:
    for module, _package in peer.requires:
        pytest.importorskip(module)
    reason = peer.available()
    if reason:
        pytest.skip(reason)
    return peer


@pytest.fixture(params=PEERS, ids=lambda p: p.name)
def peer(request: pytest.FixtureRequest) -> Peer:
    return _ready(request.param)


@pytest.fixture(params=sorted(FIXTURES), ids=str)
def fx(request: pytest.FixtureRequest) -> Fixture:
    return FIXTURES[request.param]


_encoded: dict[tuple[str, str], bytes] = {}


def _encode(peer: Peer, fx: Fixture) -> bytes:
    # One encode per (peer, fixture) across the tests keeps the module fast.
    key = (peer.name, fx.key)
    if key not in _encoded:
        _encoded[key] = peer.encode(fx)
    return _encoded[key]


def _supported(peer: Peer, fx: Fixture) -> None:
    reason = peer.supports(fx)
    if (peer.name, fx.key) in EXPECTED_UNSUPPORTED:
        assert isinstance(reason, str) and reason, f"{peer.name} should refuse {fx.key}"
        pytest.skip(f"unsupported as expected: {reason}")
    assert reason is None, f"{peer.name} refuses {fx.key}: {reason}"


# ----------------------------------------------------------------------------- tests


def test_peer_list_order() -> None:
    assert [p.name for p in PEERS] == [
        "json", "orjson", "msgpack", "pickle", "protobuf", "fastavro",
        "parquet-snappy", "parquet-zstd3", "parquet-zstd3-bss",
        "ipc", "ipc-lz4", "ipc-zstd", "vortex", "lance",
        "qdf-speed", "qdf-balanced", "qdf-compression",
    ]  # fmt: skip
    assert {p.family for p in PEERS} == {"row", "columnar"}


def test_roundtrip(peer: Peer, fx: Fixture) -> None:
    _supported(peer, fx)
    blob = _encode(peer, fx)
    assert isinstance(blob, bytes) and len(blob) > 0
    peer.check(fx, peer.decode(blob))
    # A plain-bytes copy (as read back from disk) must decode too where no schema or
    # path rides out of band.
    if not hasattr(blob, "meta"):
        peer.check(fx, peer.decode(bytes(blob)))
    if hasattr(peer, "prepare"):  # the runner's untimed set-up + timed encode hooks
        assert peer.encode_native(peer.prepare(fx)) == blob


def test_check_catches_loss(peer: Peer, fx: Fixture) -> None:
    """check() is not vacuous: another fixture's decoded value must fail it."""
    _supported(peer, fx)
    other = FIXTURES["flat" if fx.key != "flat" else "nested"]
    if peer.supports(other) is not None:
        pytest.skip("the other fixture is unsupported too")
    decoded_other = peer.decode(_encode(peer, other))
    with pytest.raises(AssertionError):
        peer.check(fx, decoded_other)


def _as_table(res: Any) -> pa.Table:
    assert isinstance(res, pa.Table), type(res)
    return res


def test_select(peer: Peer, fx: Fixture) -> None:
    _supported(peer, fx)
    res = peer.select(_encode(peer, fx), list(fx.select))
    if res is None:
        assert peer.family == "row" or peer.variant(fx) == "dumps", f"{peer.name} should project natively"
        return
    t = _as_table(res)
    assert t.column_names == list(fx.select)
    assert canon_table(t) == canon_table(fx.table.select(list(fx.select)))


def test_where(peer: Peer, fx: Fixture) -> None:
    _supported(peer, fx)
    res = peer.where(_encode(peer, fx), fx.where)
    if res is None:
        assert peer.family == "row" or peer.name.startswith("ipc") or peer.variant(fx) == "dumps"
        return
    want = dnf_mask(fx.table, fx.where)
    assert 0 < want.num_rows < fx.table.num_rows  # the test filters must select something
    t = _as_table(res)
    assert t.column_names == fx.table.column_names
    assert canon_table(t) == canon_table(want)


def test_qdf_variants() -> None:
    pytest.importorskip("qdf_columnar")
    from bench.peers import by_name

    for mode in ("speed", "balanced", "compression"):
        assert by_name(f"qdf-{mode}").variant(FIXTURES["flat"]) == "encode"
    # Speed-mode encode writes maps as lists of pairs, so map fixtures use dumps there.
    assert by_name("qdf-speed").variant(FIXTURES["nested"]) == "dumps"
    assert by_name("qdf-balanced").variant(FIXTURES["nested"]) == "encode"  # hybrid container


def test_qdf_dumps_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """A table qdf.encode refuses goes through qdf.dumps(records) / qdf.loads."""
    pytest.importorskip("qdf_columnar")
    from bench.peers import by_name, qdfpeer

    monkeypatch.setattr(qdfpeer, "_encode_probe", lambda fx: "refused")
    p = by_name("qdf-balanced")
    fx = FIXTURES["nested"]
    assert p.variant(fx) == "dumps"
    blob = p.encode(fx)
    decoded = p.decode(blob)
    assert isinstance(decoded, list)
    p.check(fx, decoded)
    assert p.select(blob, list(fx.select)) is None and p.where(blob, fx.where) is None


def test_protobuf_uses_bench_proto_for_rtb() -> None:
    pytest.importorskip("google.protobuf")
    pytest.importorskip("grpc_tools.protoc")
    from bench.peers import by_name

    p = by_name("protobuf")
    assert p.variant(FIXTURES["rtb"]) == "bench.proto:BidRequest"
    assert p.variant(FIXTURES["flat"]).startswith("derived")
    assert "null" in (p.supports(FIXTURES["nested"]) or "")


def test_dnf_to_sql() -> None:
    sql = dnf_to_sql([("Code", ">=", 300), ("Level", "==", "it's"), ("OK", "in", [True, False])])
    assert sql == "(`Code` >= 300) AND (`Level` = 'it''s') AND (`OK` IN (TRUE, FALSE))"
    assert dnf_to_sql([]) is None
