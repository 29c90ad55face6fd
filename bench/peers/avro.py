"""fastavro: an Avro schema derived from the fixture's Arrow schema, schemaless encoding.

The batch is one Avro datum, ``{"type": "array", "items": <record>}``, written with
``fastavro.schemaless_writer``: no container header, sync markers or embedded schema,
the same footing as protobuf (both sides hold the schema out of band; it rides in
``Blob.meta``). Arrow -> Avro: ints to int / long, floats to float / double, string,
binary to bytes, struct to record, list to array, map<string, V> to map. A field is a
``["null", T]`` union only where the fixture actually holds nulls at that path, so
columns without nulls pay no union tag.
"""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa

from bench.fixtures.base import Fixture

from .base import Blob, Peer, assert_same, canon, fixture_cache, null_paths, sample_indices

__all__ = ["AvroPeer", "arrow_to_avro"]


class _Unsupported(Exception):
    pass


def arrow_to_avro(schema: pa.Schema, nulls: set[tuple[str, ...]]) -> dict[str, Any]:
    """The Avro schema of one batch (an array of records) for ``schema``."""
    counter = iter(range(1 << 30))

    def typ(t: pa.DataType, path: tuple[str, ...]) -> Any:
        a = base(t, path)
        return ["null", a] if path in nulls else a

    def base(t: pa.DataType, path: tuple[str, ...]) -> Any:
        where = ".".join(path)
        if pa.types.is_dictionary(t):
            return base(t.value_type, path)
        if pa.types.is_boolean(t):
            return "boolean"
        if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
            return "int"
        if pa.types.is_uint8(t) or pa.types.is_uint16(t):
            return "int"
        if pa.types.is_int64(t) or pa.types.is_uint32(t):
            return "long"
        if pa.types.is_float32(t):
            return "float"
        if pa.types.is_float64(t):
            return "double"
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            return "string"
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
            return "bytes"
        if pa.types.is_struct(t):
            return record(t, path)
        if pa.types.is_map(t):
            if not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type)):
                raise _Unsupported(f"Avro map keys are strings ({where}: {t})")
            return {"type": "map", "values": typ(t.item_type, (*path, "{}"))}
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            return {"type": "array", "items": typ(t.value_type, (*path, "[]"))}
        raise _Unsupported(f"no Avro type for {t} ({where})")

    def record(t: pa.StructType | pa.Schema, path: tuple[str, ...]) -> dict[str, Any]:
        fields = list(t) if isinstance(t, pa.Schema) else [t.field(i) for i in range(t.num_fields)]
        return {
            "type": "record",
            "name": f"r{next(counter)}",  # Avro wants unique named types; names are not data
            "fields": [{"name": f.name, "type": typ(f.type, (*path, f.name))} for f in fields],
        }

    # Top-level columns' paths are (name,), so the root record's path is ().
    return {"type": "array", "items": record(schema, ())}


@fixture_cache
def _schema(fx: Fixture) -> tuple[Any, str | None]:
    import fastavro

    try:
        avro = arrow_to_avro(fx.table.schema, null_paths(fx.table))
    except _Unsupported as exc:
        return None, str(exc)
    for f in fx.table.schema:
        if not f.name.isidentifier():
            return None, f"Avro field names are identifiers ({f.name!r})"
    try:
        return fastavro.parse_schema(avro), None
    except Exception as exc:  # fastavro.schema.SchemaParseException and friends
        return None, f"Avro schema rejected: {exc}"


class AvroPeer(Peer):
    name = "fastavro"
    family = "row"
    requires = (("fastavro", "fastavro"),)

    def supports(self, fx: Fixture) -> str | None:
        return _schema(fx)[1]

    def encode(self, fx: Fixture) -> bytes:
        import fastavro

        schema = _schema(fx)[0]
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, fx.records)
        return Blob(buf.getvalue(), schema=schema)

    def decode(self, blob: bytes) -> list[dict[str, Any]]:
        import fastavro

        return fastavro.schemaless_reader(io.BytesIO(blob), blob.meta["schema"], None)  # type: ignore[attr-defined]

    def check(self, fx: Fixture, decoded: Any) -> None:
        # Avro materialises every field, a Go-shaped record may omit null ones. Large
        # batches: the record count plus an exact, evenly spaced sample (see bench/README.md).
        if len(decoded) != len(fx.records):
            raise AssertionError(f"{self.name}: {len(decoded)} records, expected {len(fx.records)}")
        idx = sample_indices(len(decoded), fx)
        assert_same(
            self.name,
            fx.key,
            canon([fx.records[i] for i in idx], drop_none_keys=True),
            canon([decoded[i] for i in idx], drop_none_keys=True),
        )
