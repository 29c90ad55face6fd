"""Schemaless row peers: stdlib json, orjson, msgpack and pickle.

All four serialise the fixture's Go-shaped ``root`` (the value the Go library's JSON
benchmark serialises) and decode back to plain Python values. Neither JSON flavour
has a bytes type, so bytes travel as base64 text (what Go's encoding/json does for
``[]byte``) and the check decodes them back where the fixture holds bytes.
"""

from __future__ import annotations

import base64
import json
import pickle
from typing import Any

from bench.fixtures.base import Fixture

from .base import Peer, RootFeatures, assert_lossless, fixture_cache, root_features

__all__ = ["JsonPeer", "OrjsonPeer", "MsgpackPeer", "PicklePeer"]


@fixture_cache
def _features(fx: Fixture) -> RootFeatures:
    return root_features(fx.root)


def _b64(obj: Any) -> str:
    if isinstance(obj, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(obj)).decode("ascii")
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _unb64(expected: Any, got: Any) -> Any:
    """Undo the base64 text in ``got`` wherever ``expected`` (the fixture) holds bytes.

    The JSON text alone cannot say which strings were bytes; like a Go decoder, the
    check uses the known shape (here: the fixture itself) to turn them back.
    """
    if isinstance(expected, bytes) and isinstance(got, str):
        return base64.b64decode(got, validate=True)
    if isinstance(expected, dict) and isinstance(got, dict):
        return {k: _unb64(expected.get(k), v) for k, v in got.items()}
    if isinstance(expected, list | tuple) and isinstance(got, list) and len(expected) == len(got):
        return [_unb64(e, g) for e, g in zip(expected, got, strict=True)]
    return got


class _RootPeer(Peer):
    family = "row"

    def check(self, fx: Fixture, decoded: Any) -> None:
        assert_lossless(self.name, fx.key, fx, fx.root, decoded)


class JsonPeer(_RootPeer):
    """``json.dumps(root, separators=(",", ":"), ensure_ascii=False)``, UTF-8 encoded.

    ``ensure_ascii=False`` matches Go's encoding/json, which writes non-ASCII text raw.
    NaN / Infinity are written as Python's non-standard tokens and read back exactly.
    """

    name = "json"

    def supports(self, fx: Fixture) -> str | None:
        f = _features(fx)
        if f.nonstr_key is not None:
            return f"JSON object keys are strings (key {f.nonstr_key!r})"
        if f.other_type:
            return f"no JSON form for {f.other_type}"
        return None

    def encode(self, fx: Fixture) -> bytes:
        return json.dumps(fx.root, separators=(",", ":"), ensure_ascii=False, default=_b64).encode()

    def decode(self, blob: bytes) -> Any:
        return json.loads(blob)

    def check(self, fx: Fixture, decoded: Any) -> None:
        if _features(fx).has_bytes:
            decoded = _unb64(fx.root, decoded)
        super().check(fx, decoded)


class OrjsonPeer(JsonPeer):
    """orjson with the same shape as :class:`JsonPeer` (bytes as base64 via ``default``)."""

    name = "orjson"
    requires = (("orjson", "orjson"),)

    def supports(self, fx: Fixture) -> str | None:
        f = _features(fx)
        if f.nonfinite is not None:
            return f"orjson writes {f.nonfinite!r} as null"
        if f.big_int is not None:
            return f"orjson ints are 64-bit ({f.big_int})"
        return super().supports(fx)

    def encode(self, fx: Fixture) -> bytes:
        import orjson

        # OPT_PASSTHROUGH_* is not needed: the fixture holds plain JSON-like values only.
        return orjson.dumps(fx.root, default=_b64)

    def decode(self, blob: bytes) -> Any:
        import orjson

        return orjson.loads(blob)


class MsgpackPeer(_RootPeer):
    """msgpack with a real bin type for bytes (``use_bin_type=True``)."""

    name = "msgpack"
    requires = (("msgpack", "msgpack"),)

    def supports(self, fx: Fixture) -> str | None:
        f = _features(fx)
        if f.big_int is not None:
            return f"msgpack ints are 64-bit ({f.big_int})"
        if f.other_type:
            return f"no msgpack form for {f.other_type}"
        return None

    def encode(self, fx: Fixture) -> bytes:
        import msgpack

        return msgpack.packb(fx.root, use_bin_type=True)

    def decode(self, blob: bytes) -> Any:
        import msgpack

        # strict_map_key=False: Go maps may have non-string keys in other fixtures.
        return msgpack.unpackb(blob, raw=False, strict_map_key=False)


class PicklePeer(_RootPeer):
    """pickle protocol 5: Python-only, holds anything, the in-process baseline."""

    name = "pickle"

    def encode(self, fx: Fixture) -> bytes:
        return pickle.dumps(fx.root, protocol=5)

    def decode(self, blob: bytes) -> Any:
        return pickle.loads(blob)  # noqa: S301 - our own bytes, never untrusted input
