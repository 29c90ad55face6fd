"""protobuf (proto3) via the upb-backed ``protobuf`` runtime and ``grpc_tools.protoc``.

Schemas:

* ``bench/proto/bench.proto`` mirrors the Go library's bench/pb messages (RTB, IoT,
  OTLP, logs, events). A fixture uses its record message there when every column of
  ``fx.table`` (recursively) finds a type-compatible field; names match case- and
  underscore-insensitively, so Go's ``DealIDs`` is proto's ``deal_ids``.
* Any other fixture (ad, wide, access, wolverine, hand-made tests) gets a message
  derived from its Arrow schema, written to ``bench/.generated/`` and compiled the same
  way. Derived scalar fields that hold nulls are ``optional`` (proto3 presence).

Compiled modules are cached in ``bench/.generated/<sha256 of the .proto>/`` and
imported from there, so protoc runs once per schema, never during timing.

The batch is one wrapper message (``repeated <Record>``), encoded with
``SerializeToString``; the runner times only that (``prepare`` builds the message from
the records untimed, ``encode_native`` serialises it). ``decode`` returns the parsed wrapper, protobuf's natural
in-memory form (the Go benchmark also stops at its generated structs); ``check``
converts it back to records. Proto3 cannot say "null" for a plain scalar, list or map
field, nor for a list item or map value; fixtures with such nulls are unsupported
(the reason names the path) rather than compared loosely.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa

from bench.fixtures.base import Fixture

from .base import Blob, Peer, assert_same, canon, fixture_cache, null_paths, sample_indices

__all__ = ["ProtobufPeer", "compile_proto", "GENERATED_DIR", "PROTO_FILE"]

BENCH_DIR = Path(__file__).resolve().parent.parent
PROTO_FILE = BENCH_DIR / "proto" / "bench.proto"
GENERATED_DIR = BENCH_DIR / ".generated"

#: fixture key -> (record message, batch message, batch's repeated field) in bench.proto
STATIC: dict[str, tuple[str, str, str]] = {
    "rtb": ("BidRequest", "RTBBatch", "requests"),
    "iot": ("DeviceReading", "IoTBatchPB", "devices"),
    "otlp": ("ResourceSpans", "TraceExportPB", "resource_spans"),
    "logs": ("LogRecord", "LogBatchPB", "records"),
    "events": ("EventRecord", "EventBatchPB", "records"),
}


class _Unsupported(Exception):
    pass


# ----------------------------------------------------------------------------- compile


def compile_proto(text: str, stem: str) -> ModuleType:
    """Compile ``text`` (saved as ``<stem>.proto``) with grpc_tools.protoc; import the _pb2.

    Cached by content hash. protoc writes into a temp dir that is then renamed into
    place, so concurrent runs never import a half-written module.
    """
    digest = hashlib.sha256(f"{stem}\0{text}".encode()).hexdigest()[:16]
    out = GENERATED_DIR / digest
    mod_file = out / f"{stem}_pb2.py"
    if not mod_file.exists():
        from grpc_tools import protoc

        GENERATED_DIR.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=GENERATED_DIR, prefix=".tmp-"))
        tmp.chmod(0o755)  # mkdtemp's 0700 would hide the cache from other users
        (tmp / f"{stem}.proto").write_text(text)
        rc = protoc.main(["protoc", f"-I{tmp}", f"--python_out={tmp}", str(tmp / f"{stem}.proto")])
        if rc != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"protoc failed ({rc}) on {stem}.proto")
        try:
            os.rename(tmp, out)
        except OSError:  # another process won the race; its copy is identical
            shutil.rmtree(tmp, ignore_errors=True)
    name = f"_bench_pb_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, mod_file)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _static_module() -> ModuleType:
    return compile_proto(PROTO_FILE.read_text(), "bench")


# ----------------------------------------------------------------------------- plans
#
# A plan is the per-fixture list of (record key, proto attribute, kind, sub-plan), built
# once from the Arrow schema and the message descriptor, so conversion does no
# descriptor lookups per value.


@dataclass
class _Slot:
    key: str  # record / Arrow field name
    attr: str  # proto field name
    kind: str  # scalar | msg | rep_scalar | rep_msg | map_scalar | map_msg
    presence: bool = False  # scalar with proto3 presence (optional)
    sub: list[_Slot] = field(default_factory=list)


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


_INT_FD = {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64"}


def _fd_type(fd: Any) -> str:
    from google.protobuf.descriptor import FieldDescriptor as FD

    names = {
        FD.TYPE_DOUBLE: "double", FD.TYPE_FLOAT: "float", FD.TYPE_INT64: "int64",
        FD.TYPE_UINT64: "uint64", FD.TYPE_INT32: "int32", FD.TYPE_FIXED64: "fixed64",
        FD.TYPE_FIXED32: "fixed32", FD.TYPE_BOOL: "bool", FD.TYPE_STRING: "string",
        FD.TYPE_BYTES: "bytes", FD.TYPE_UINT32: "uint32", FD.TYPE_SFIXED32: "sfixed32",
        FD.TYPE_SFIXED64: "sfixed64", FD.TYPE_SINT32: "sint32", FD.TYPE_SINT64: "sint64",
        FD.TYPE_MESSAGE: "message", FD.TYPE_ENUM: "enum", FD.TYPE_GROUP: "group",
    }  # fmt: skip
    return names[fd.type]


def _unwrap(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def _scalar_ok(t: pa.DataType, fd_type: str) -> bool:
    t = _unwrap(t)
    if pa.types.is_boolean(t):
        return fd_type == "bool"
    if pa.types.is_integer(t):
        return fd_type in _INT_FD
    if pa.types.is_float64(t):
        return fd_type == "double"
    if pa.types.is_float32(t):
        return fd_type in ("float", "double")
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return fd_type == "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return fd_type == "bytes"
    return False


def _plan(fields: list[pa.Field], desc: Any, path: tuple[str, ...], nulls: set[tuple[str, ...]]) -> list[_Slot]:
    """Match Arrow ``fields`` to message ``desc``; raise _Unsupported with the reason."""
    by_norm = {_norm(fd.name): fd for fd in desc.fields}
    seen: dict[str, str] = {}
    slots: list[_Slot] = []
    for f in fields:
        p = (*path, f.name)
        where = ".".join(p)
        n = _norm(f.name)
        if n in seen:
            raise _Unsupported(f"fields {seen[n]!r} and {f.name!r} map to one proto name")
        seen[n] = f.name
        fd = by_norm.get(n)
        if fd is None:
            raise _Unsupported(f"message {desc.name} has no field for {where}")
        t = _unwrap(f.type)
        repeated = fd.is_repeated
        is_map = fd.message_type is not None and fd.message_type.GetOptions().map_entry
        if pa.types.is_struct(t):
            if repeated or fd.message_type is None:
                raise _Unsupported(f"{where}: struct vs proto {fd.name}")
            sub = _plan(list(t), fd.message_type, p, nulls)
            slots.append(_Slot(f.name, fd.name, "msg", sub=sub))
            continue
        if p in nulls and (is_map or repeated or _is_list(t) or pa.types.is_map(t)):
            raise _Unsupported(f"proto3 cannot tell a null {where} from an empty one")
        if pa.types.is_map(t):
            if not is_map:
                raise _Unsupported(f"{where}: map vs proto {fd.name}")
            kfd, vfd = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
            if not _scalar_ok(t.key_type, _fd_type(kfd)):
                raise _Unsupported(f"{where}: map key {t.key_type} vs {_fd_type(kfd)}")
            if (*p, "{}") in nulls:
                raise _Unsupported(f"proto3 map values cannot be null ({where})")
            vt = _unwrap(t.item_type)
            if pa.types.is_struct(vt) and vfd.message_type is not None:
                slots.append(
                    _Slot(f.name, fd.name, "map_msg", sub=_plan(list(vt), vfd.message_type, (*p, "{}"), nulls))
                )
            elif _scalar_ok(vt, _fd_type(vfd)):
                slots.append(_Slot(f.name, fd.name, "map_scalar"))
            else:
                raise _Unsupported(f"{where}: map value {vt} vs {_fd_type(vfd)}")
        elif _is_list(t):
            if not repeated or is_map:
                raise _Unsupported(f"{where}: list vs proto {fd.name}")
            if (*p, "[]") in nulls:
                raise _Unsupported(f"proto3 repeated items cannot be null ({where})")
            vt = _unwrap(t.value_type)
            if pa.types.is_struct(vt) and fd.message_type is not None:
                slots.append(_Slot(f.name, fd.name, "rep_msg", sub=_plan(list(vt), fd.message_type, (*p, "[]"), nulls)))
            elif _scalar_ok(vt, _fd_type(fd)):
                slots.append(_Slot(f.name, fd.name, "rep_scalar"))
            else:
                raise _Unsupported(f"{where}: list of {vt} vs repeated {_fd_type(fd)}")
        else:
            if repeated or not _scalar_ok(t, _fd_type(fd)):
                raise _Unsupported(f"{where}: {t} vs proto {_fd_type(fd)}")
            presence = fd.has_presence
            if p in nulls and not presence:
                raise _Unsupported(f"proto3 {fd.name} has no null (nulls in {where})")
            slots.append(_Slot(f.name, fd.name, "scalar", presence=presence))
    return slots


# ----------------------------------------------------------------------------- derived


_PROTO_SCALAR: list[tuple[Any, str]] = [
    (pa.types.is_boolean, "bool"),
    (lambda t: pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t), "int32"),
    (pa.types.is_int64, "int64"),
    (lambda t: pa.types.is_uint8(t) or pa.types.is_uint16(t) or pa.types.is_uint32(t), "uint32"),
    (pa.types.is_uint64, "uint64"),
    (pa.types.is_float32, "float"),
    (pa.types.is_float64, "double"),
    (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t), "string"),
    (lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t), "bytes"),
]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def derive_proto(schema: pa.Schema, nulls: set[tuple[str, ...]], package: str) -> str:
    """proto3 text for ``schema``: message M0 is the record, ``Batch`` the wrapper."""
    messages: list[str] = []

    def scalar(t: pa.DataType, where: str) -> str:
        t = _unwrap(t)
        for pred, name in _PROTO_SCALAR:
            if pred(t):
                return name
        raise _Unsupported(f"no proto3 type for {t} ({where})")

    def message(fields: list[pa.Field], path: tuple[str, ...]) -> str:
        name = f"M{len(messages)}"
        messages.append("")  # reserve the slot so nested messages get later numbers
        lines = []
        for i, f in enumerate(fields, 1):
            p = (*path, f.name)
            where = ".".join(p)
            if not _IDENT.match(f.name):
                raise _Unsupported(f"{where!r} is not a proto field name")
            t = _unwrap(f.type)
            if pa.types.is_struct(t):
                decl = message(list(t), p)
            elif pa.types.is_map(t):
                vt = _unwrap(t.item_type)
                v = message(list(vt), (*p, "{}")) if pa.types.is_struct(vt) else scalar(vt, where)
                decl = f"map<{scalar(t.key_type, where)}, {v}>"
            elif _is_list(t):
                vt = _unwrap(t.value_type)
                if _is_list(vt) or pa.types.is_map(vt):
                    raise _Unsupported(f"proto3 has no list of lists/maps ({where})")
                v = message(list(vt), (*p, "[]")) if pa.types.is_struct(vt) else scalar(vt, where)
                decl = f"repeated {v}"
            else:
                decl = ("optional " if p in nulls else "") + scalar(t, where)
            lines.append(f"  {decl} {f.name} = {i};")
        messages[int(name[1:])] = f"message {name} {{\n" + "\n".join(lines) + "\n}\n"
        return name

    message(list(schema), ())
    head = f'syntax = "proto3";\n\npackage {package};\n\n'
    return head + "\n".join(messages) + "\nmessage Batch {\n  repeated M0 records = 1;\n}\n"


# ----------------------------------------------------------------------------- fixture setup


@dataclass
class _Setup:
    batch_cls: Any = None
    batch_field: str = ""
    plan: list[_Slot] = field(default_factory=list)
    variant: str = ""
    reason: str | None = None


@fixture_cache
def _setup(fx: Fixture) -> _Setup:
    nulls = null_paths(fx.table)
    fields = list(fx.table.schema)
    why_not_static = ""
    if fx.key in STATIC:
        rec, batch, bfield = STATIC[fx.key]
        mod = _static_module()
        try:
            plan = _plan(fields, getattr(mod, rec).DESCRIPTOR, (), nulls)
            s = _Setup(getattr(mod, batch), bfield, plan, f"bench.proto:{rec}")
        except _Unsupported as exc:
            why_not_static = f" (bench.proto {rec}: {exc})"
            s = None
    else:
        s = None
    if s is None:
        try:
            digest = hashlib.sha256(str(fx.table.schema).encode() + repr(sorted(nulls)).encode()).hexdigest()[:12]
            text = derive_proto(fx.table.schema, nulls, f"benchderived_{digest}")
            mod = compile_proto(text, f"derived_{digest}")
            plan = _plan(fields, mod.M0.DESCRIPTOR, (), nulls)
            s = _Setup(mod.Batch, "records", plan, "derived" + why_not_static)
        except _Unsupported as exc:
            return _Setup(reason=str(exc) + why_not_static)
    try:  # int32 overflow and the like only show on the values
        _to_batch(s, fx.records)
    except (ValueError, TypeError) as exc:
        return _Setup(reason=f"proto {s.variant}: {exc}")
    return s


def _fill(msg: Any, rec: dict[str, Any], plan: list[_Slot]) -> None:
    for s in plan:
        v = rec.get(s.key)
        if v is None:
            continue  # absent == null: message / optional presence; non-null paths were checked
        k = s.kind
        if k == "scalar":
            setattr(msg, s.attr, v)
        elif k == "msg":
            sub = getattr(msg, s.attr)
            sub.SetInParent()  # present even when every field is zero
            _fill(sub, v, s.sub)
        elif k == "rep_scalar":
            getattr(msg, s.attr).extend(v)
        elif k == "rep_msg":
            rep = getattr(msg, s.attr)
            for item in v:
                _fill(rep.add(), item, s.sub)
        elif k == "map_scalar":
            getattr(msg, s.attr).update(v)
        else:  # map_msg
            m = getattr(msg, s.attr)
            for mk, item in v.items() if isinstance(v, dict) else v:
                _fill(m[mk], item, s.sub)


def _unfill(msg: Any, plan: list[_Slot]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in plan:
        k = s.kind
        if k == "scalar":
            out[s.key] = None if s.presence and not msg.HasField(s.attr) else getattr(msg, s.attr)
        elif k == "msg":
            out[s.key] = _unfill(getattr(msg, s.attr), s.sub) if msg.HasField(s.attr) else None
        elif k == "rep_scalar":
            out[s.key] = list(getattr(msg, s.attr))
        elif k == "rep_msg":
            out[s.key] = [_unfill(x, s.sub) for x in getattr(msg, s.attr)]
        elif k == "map_scalar":
            out[s.key] = dict(getattr(msg, s.attr))
        else:
            out[s.key] = {mk: _unfill(x, s.sub) for mk, x in getattr(msg, s.attr).items()}
    return out


def _to_batch(s: _Setup, records: list[dict[str, Any]]) -> Any:
    batch = s.batch_cls()
    rep = getattr(batch, s.batch_field)
    for rec in records:
        _fill(rep.add(), rec, s.plan)
    return batch


class ProtobufPeer(Peer):
    name = "protobuf"
    family = "row"
    requires = (("google.protobuf", "protobuf"), ("grpc_tools.protoc", "grpcio-tools"))

    def supports(self, fx: Fixture) -> str | None:
        return _setup(fx).reason

    def variant(self, fx: Fixture) -> str:
        return _setup(fx).variant

    def encode(self, fx: Fixture) -> bytes:
        return self.encode_native(self.prepare(fx))

    # The runner times ``encode_native(prepare(fx))`` when a peer has these hooks:
    # protobuf serialises its generated message objects (as the Go benchmark marshals
    # its pb structs), so building them from dicts is set-up, not encoding.

    def prepare(self, fx: Fixture) -> Any:
        """The fixture as one batch message (protobuf's natural in-memory form)."""
        return _to_batch(_setup(fx), fx.records)

    def encode_native(self, batch: Any) -> bytes:
        return Blob(batch.SerializeToString(), message=type(batch))

    def decode(self, blob: bytes) -> Any:
        return blob.meta["message"].FromString(blob)  # type: ignore[attr-defined]

    def check(self, fx: Fixture, decoded: Any) -> None:
        s = _setup(fx)
        if not isinstance(decoded, s.batch_cls):
            raise AssertionError(f"{self.name}: decoded a {type(decoded).__name__}, expected {s.batch_cls.__name__}")
        msgs = getattr(decoded, s.batch_field)
        if len(msgs) != len(fx.records):
            raise AssertionError(f"{self.name}: {len(msgs)} records, expected {len(fx.records)}")
        # Proto materialises every field, a Go-shaped record may omit null ones. Large
        # batches: the record count plus an exact, evenly spaced sample (see bench/README.md).
        idx = sample_indices(len(msgs), fx)
        got = [_unfill(msgs[i], s.plan) for i in idx]
        assert_same(
            self.name,
            fx.key,
            canon([fx.records[i] for i in idx], drop_none_keys=True),
            canon(got, drop_none_keys=True),
        )
