"""Peer adapters for the benchmark matrix: one :class:`Peer` per format configuration.

``PEERS`` lists them in the report's column order. Importing this package needs only
pyarrow and qdf_columnar; each optional peer imports its package lazily and reports a
missing one through :meth:`Peer.available` (the runner shows the reason, not a crash).
See ``bench/peers/base.py`` for the interface and the comparison rules.
"""

from __future__ import annotations

from .avro import AvroPeer
from .base import Blob, Peer
from .columnar import IpcPeer, LancePeer, ParquetPeer, VortexPeer
from .pb import ProtobufPeer
from .qdfpeer import QdfPeer
from .row import JsonPeer, MsgpackPeer, OrjsonPeer, PicklePeer

__all__ = ["PEERS", "Blob", "Peer", "by_name"]

PEERS: list[Peer] = [
    JsonPeer(),
    OrjsonPeer(),
    MsgpackPeer(),
    PicklePeer(),
    ProtobufPeer(),
    AvroPeer(),
    ParquetPeer("parquet-snappy", "snappy"),
    ParquetPeer("parquet-zstd3", "zstd", level=3),
    ParquetPeer("parquet-zstd3-bss", "zstd", level=3, bss=True),
    IpcPeer("ipc", None),
    IpcPeer("ipc-lz4", "lz4"),
    IpcPeer("ipc-zstd", "zstd"),
    VortexPeer(),
    LancePeer(),
    QdfPeer("speed"),
    QdfPeer("balanced"),
    QdfPeer("compression"),
]


def by_name(name: str) -> Peer:
    """The peer called ``name`` (KeyError lists the known names)."""
    for p in PEERS:
        if p.name == name:
            return p
    raise KeyError(f"no peer {name!r}; known: {[p.name for p in PEERS]}")
