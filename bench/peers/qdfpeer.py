"""qdf_columnar in its three modes (speed / balanced / compression).

Two paths, chosen per fixture and reported by :meth:`QdfPeer.variant`:

* ``"encode"``: ``qdf.encode(fx.table, mode)`` when qdf's columnar batch accepts the
  table (flat columns, and nested ones via the hybrid container); decode is ``qdf.decode(output="arrow")`` and select /
  where push down through ``decode(columns=)`` / ``decode(filter=)``.
* ``"dumps"``: otherwise (a column type ``qdf.encode`` refuses with
  ``qdf.UnsupportedTypeError``; or speed mode on a table with map columns, whose
  row-major maps decode to records, compared as records) ``qdf.dumps(fx.records, mode)``;
  decode is ``qdf.loads`` to a records list; select / where have no native form
  (None -> n/a).

``encode`` returns a :class:`~bench.peers.base.Blob` whose ``meta["variant"]`` tells
``decode`` which path wrote it (in speed mode both paths write row-major maps, so the
bytes alone cannot say). A plain ``bytes`` (no meta) is read with
``qdf.decode(output="arrow")``, which accepts every v1 batch.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from bench.fixtures.base import Fixture

from .base import Blob, Peer, assert_lossless, fixture_cache
from .columnar import check_table

__all__ = ["QdfPeer"]


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_map(t.value_type)
    return False


@fixture_cache
def _speed_drops_maps(fx: Fixture) -> bool:
    """Speed-mode ``encode`` writes ``table.to_pylist()``, where a map is a list of
    (key, value) pairs, so map columns come back as list<struct<key, value>>.
    Such fixtures take the dumps path in speed mode (records keep dicts)."""
    return any(_has_map(f.type) for f in fx.table.schema)


@fixture_cache
def _encode_probe(fx: Fixture) -> str | None:
    """None if ``qdf.encode`` accepts ``fx.table``, else qdf's UnsupportedTypeError text."""
    import qdf_columnar as qdf

    try:
        # Probe on a 1-row slice: type support does not depend on the values' count.
        qdf.encode(fx.table.slice(0, 1), mode="balanced")
    except qdf.UnsupportedTypeError as exc:
        return str(exc)
    return None


class QdfPeer(Peer):
    family = "columnar"
    requires = (("qdf_columnar", "qdf-columnar"),)

    def __init__(self, mode: str) -> None:
        self.name = f"qdf-{mode}"  # type: ignore[misc]
        self.mode = mode

    def variant(self, fx: Fixture) -> str:
        if _encode_probe(fx) is not None:
            return "dumps"
        if self.mode == "speed" and _speed_drops_maps(fx):
            return "dumps"
        return "encode"

    def encode(self, fx: Fixture) -> bytes:
        import qdf_columnar as qdf

        if self.variant(fx) == "encode":
            return Blob(qdf.encode(fx.table, mode=self.mode), variant="encode")
        return Blob(qdf.dumps(fx.records, mode=self.mode), variant="dumps")

    @staticmethod
    def _variant_of(blob: bytes) -> str:
        # Plain bytes (no Blob meta) take the decode path: qdf.decode reads any v1
        # batch, columnar or a row-major list of maps. Sniffing the root tag is not
        # robust (compression mode may wrap the container).
        return getattr(blob, "meta", {}).get("variant", "encode")

    def decode(self, blob: bytes) -> Any:
        import qdf_columnar as qdf

        if self._variant_of(blob) == "encode":
            return qdf.decode(blob, output="arrow")
        return qdf.loads(blob)

    def check(self, fx: Fixture, decoded: Any) -> None:
        if self.variant(fx) == "encode":
            check_table(self.name, fx, decoded)
        else:
            assert_lossless(self.name, fx.key, fx, fx.records, decoded)

    def select(self, blob: bytes, columns: list[str] | tuple[str, ...]) -> Any | None:
        import qdf_columnar as qdf

        if self._variant_of(blob) != "encode":
            return None
        return qdf.decode(blob, columns=list(columns), output="arrow")

    def where(self, blob: bytes, dnf: list[tuple[str, str, Any]]) -> Any | None:
        import qdf_columnar as qdf

        if self._variant_of(blob) != "encode":
            return None
        return qdf.decode(blob, filter=list(dnf) or None, output="arrow")
