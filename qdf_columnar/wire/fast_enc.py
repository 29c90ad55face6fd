"""Fast row-major encode: ``msgpack`` packs the value at C speed, a Numba kernel transcodes it.

:func:`try_write` appends exactly the bytes ``values_write.write_value`` appends for the
same value and leaves the :class:`~qdf_columnar.wire.dense.DenseWriter` in exactly the
same state (the kernel keeps that state in arrays; see ``qdf_kernels.transcode_enc`` and
``dense._WriterArrays``). When it cannot, it returns False having appended nothing and
changed nothing, and the caller runs the Python path (which also raises the proper errors).
:func:`dumps_body` is the one-shot form ``dumps`` calls first: no encode context, a
per-thread array form the kernel empties at the start of each call.

``strict_types`` makes msgpack hand every value whose type is not exactly a msgpack one
to the ``default=`` hook, which looks its type up in a converter cache (see
:func:`_make_hook`): subclasses whose iteration could differ from the exact type's are
declined, the others become what the Python path writes (ints, floats, text, plain
dicts / lists). State-free qdf forms (float32, timestamps, numeric arrays) travel as
msgpack ext type 1 (base neutral for map-field string deltas, ``values_write._BASE_NEUTRAL``)
or 2 (not neutral: arrays) holding the qdf bytes, which the kernel copies verbatim.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime
from typing import Any

import msgpack
import numpy as np
from qdf_kernels import transcode_enc as te

from ..format.header import HEADER_SIZE, finish_body, pack_header
from ..options import Options, columnar_enabled, header_flags
from .context import MAX_DEPTH, EncodeContext
from .dense import MAX_STATE_ENTRIES, MIN_INTERN, _WriterArrays
from .values_write import (
    _FLOAT32,
    COLUMNAR_MIN_ROWS,
    _datetime_parts,
    _write_ndarray,
    struct_fields_of,
    write_timestamp,
    write_value,
)

__all__ = ["try_write", "dumps_body"]

_ExtType = msgpack.ExtType
_transcode = te.transcode
_BAIL = te.BAIL
_MIN_SHIFT = te.F_MIN_SHIFT
_MAX_SHIFT = te.F_MAX_SHIFT
_ROOT_DECLINED = te.F_ROOT_DECLINED
_IN_REP = te.F_IN_REP
_tls = threading.local()


_DICT_API = ("__iter__", "keys", "items", "values", "__len__", "__getitem__")
_SEQ_API = ("__iter__", "__len__", "__getitem__")


def _same_api(t: type, base: type, names: tuple[str, ...]) -> bool:
    """Whether ``t`` iterates exactly as ``base`` (inherits every one of ``names`` from it)."""
    return all(getattr(t, n, None) is getattr(base, n) for n in names)


def _decline(obj: Any) -> Any:
    raise TypeError(type(obj))


def _make_hook(opts: Options) -> Any:
    """The msgpack ``default=`` hook for ``opts``: one converter per type, looked up first.

    ``strict_types`` hands the hook every value whose type is not exactly a msgpack one;
    the converter of a type is chosen once, in the order of ``values_write._write_other``,
    so the msgpack form is exactly what the Python path writes for it. Field values the
    Python path treats as base neutral (``values_write._BASE_NEUTRAL``) keep that: numbers
    become ints / floats, float32 / float16 / datetimes ext type 1; arrays ext type 2.
    A converter that raises (or :func:`_decline`) sends the whole value to the Python path.
    """
    scratch_ctx = EncodeContext(opts)  # for numeric arrays only, whose encoding never touches Dense state
    cache: dict[type, Any] = {}

    def f32(obj: Any) -> Any:
        return _ExtType(1, bytes((_FLOAT32,)) + np.float32(obj).astype("<f4").tobytes())

    def stamp(obj: Any) -> Any:
        buf = bytearray()
        write_timestamp(buf, *_datetime_parts(obj))
        return _ExtType(1, bytes(buf))

    def array(obj: Any) -> Any:
        if obj.ndim == 0:
            # Not base neutral (an ndarray), so a numeric scalar goes as ext 2; a string
            # one would need the Dense state: the Python path takes it.
            if obj.dtype.kind not in "biufmM":
                raise TypeError(type(obj))
            buf = bytearray()
            write_value(buf, obj[()], scratch_ctx)
            return _ExtType(2, bytes(buf))
        if obj.ndim == 1 and obj.dtype.kind in "biuf":
            buf = bytearray()
            _write_ndarray(buf, obj, scratch_ctx)
            return _ExtType(2, bytes(buf))
        return list(obj)

    def exact_int(obj: Any) -> Any:
        raise TypeError("int out of range")  # msgpack hands an exact int over only when it does not fit

    def build(t: type) -> Any:
        if t is tuple:
            return list
        if t is int:
            return exact_int
        if issubclass(t, np.generic):
            if issubclass(t, np.bool_):
                return bool
            if issubclass(t, np.integer):  # timedelta64 too, as the Python path (write_int(int(v)))
                return int
            if issubclass(t, (np.float32, np.float16)):
                return f32
            if issubclass(t, np.float64):
                return float
            if issubclass(t, np.datetime64):
                return stamp
            if issubclass(t, np.str_):
                return _decline if t.encode is not str.encode else str
            if issubclass(t, np.bytes_):
                return bytes
            return _decline
        if issubclass(t, int):  # IntEnum...: written as int(v)
            return int
        if issubclass(t, float):
            return float.__float__  # the raw value, as _F64.pack(v)
        if issubclass(t, str):
            # Written as its text (a map field: v.encode("utf-8")).
            return _decline if t.encode is not str.encode else str.__str__
        if issubclass(t, (bytes, bytearray, memoryview)):
            return bytes
        if issubclass(t, dict):
            # msgpack packs what dict(v) holds; the Python path iterates v (shape) and
            # v.items() (values): the same order when t keeps dict's (or OrderedDict's) API.
            # dict.copy (a method call, ~25 ns less than dict(v)) copies the storage order,
            # which is the iteration order only with dict's own API (not OrderedDict's).
            if _same_api(t, dict, _DICT_API):
                return dict.copy
            if issubclass(t, OrderedDict) and _same_api(t, OrderedDict, _DICT_API):
                return dict
            return _decline
        if issubclass(t, (list, tuple)):
            base = list if issubclass(t, list) else tuple
            return list if _same_api(t, base, _SEQ_API) else _decline
        if issubclass(t, np.ndarray):
            return array
        if issubclass(t, datetime):
            return stamp
        names = struct_fields_of(t)
        if names is not None:
            return lambda obj: {key: getattr(obj, attr) for key, attr in names}
        return _decline

    def hook(obj: Any) -> Any:
        t = type(obj)
        conv = cache.get(t)
        if conv is None:
            conv = build(t)
            if len(cache) < 1024:
                cache[t] = conv
        return conv(obj)

    return hook


class _Thread:
    """Per-thread state: packers (msgpack's are not thread-safe), the kernel's scratch,
    the one-shot array forms, and a flag that keeps a packer from being re-entered (a
    converter may run user code: a dataclass property that calls ``qdf.dumps``)."""

    __slots__ = ("packers", "busy", "W", "one")

    def __init__(self) -> None:
        self.packers: dict[Options, msgpack.Packer] = {}
        self.busy = False
        self.W = np.empty(1 << 12, np.int64)
        self.one: dict[Options, _OneShot] = {}


def _thread() -> _Thread:
    th = _tls.th = _Thread()
    return th


def _packer(th: _Thread, opts: Options) -> msgpack.Packer:
    pk = th.packers[opts] = msgpack.Packer(
        default=_make_hook(opts), use_bin_type=True, datetime=False, strict_types=True, autoreset=True
    )
    return pk


_KEEP_W = 1 << 20  # scratch words a thread keeps between calls (a bigger one is per call)
_KEEP_OUT = 1 << 22  # a one-shot array form whose output buffer grew past this is dropped after the call


def _scratch(th: _Thread, n: int, room: int) -> np.ndarray:
    need = 2 * (n + 2) + 8 * (min(room, n) + 2)  # te.scratch_len (pages the kernel never touches cost nothing)
    W = th.W
    if len(W) < need:
        W = np.empty(max(need, 2 * len(W)), np.int64)
        if len(W) <= _KEEP_W:
            th.W = W
    return W


def _opt_flags(opts: Options) -> int:
    f = 0
    if columnar_enabled(opts):
        f |= te.F_COLUMNAR
    if opts & (Options.SHAPE_INTERN | Options.MAP_SHAPE):
        f |= te.F_SHAPES
    return f


def try_write(out: bytearray, obj: object, ctx: EncodeContext, *, root_declined: bool = False) -> bool:
    """Append the body bytes of ``obj`` as ``values_write.write_value(out, obj, ctx)`` would.

    Returns False, having appended nothing and changed no state, when the fast path cannot
    (unsupported values, non-str keys, lists the columnar writer may take, too deep); the
    caller then runs the Python path. ``root_declined``: the root list was already offered
    to the columnar writer, which declined.
    """
    opts = ctx.opts
    try:
        th = _tls.th
    except AttributeError:
        th = _thread()
    if th.busy:
        return False
    pk = th.packers.get(opts)
    if pk is None:
        pk = _packer(th, opts)
    th.busy = True
    try:
        src = pk.pack(obj)
    except Exception:
        return False
    finally:
        th.busy = False
    dense = ctx.dense
    a = dense._arrs if dense._native else dense.to_arrays()
    if a.fopts is not opts:
        a.fflags = (
            _opt_flags(opts)
            | (te.F_DENSE if dense.dense else 0)
            | (te.F_PAIR if dense.pair_on else 0)
            | (te.F_MTF if dense.mtf_on else 0)
        )
        a.fopts = opts
    flags = a.fflags | (dense.min_intern << _MIN_SHIFT) | (dense.max_entries << _MAX_SHIFT)
    if root_declined:
        flags |= _ROOT_DECLINED
    if ctx.in_repeated:
        flags |= _IN_REP
    room = ctx.max_depth - ctx.depth
    W = th.W
    if len(W) < 2 * (len(src) + 2) + 8 * (min(room, len(src)) + 2):
        W = _scratch(th, len(src), room)
    while True:
        n = _transcode(src, a.out, a.S, a.slab, a.bslab, W, flags, room)
        if n >= 0:
            out += a.outmv[:n]
            return True
        if n == _BAIL:
            return False
        a.grow()


# ------------------------------------------------------------------ one-shot
class _OneShot:
    """A private array form for one-shot ``dumps`` on this thread with one option set: the
    kernel empties it at the start of each call (``F_RESET``, O(what the last call used))
    and writes the body after the 5-byte header kept at the front of ``out``."""

    __slots__ = ("a", "pk", "flags", "header", "columnar", "rans")

    def __init__(self, th: _Thread, opts: Options) -> None:
        bits = int(opts)
        self.pk = th.packers.get(opts) or _packer(th, opts)
        self.a = _WriterArrays()
        self.a.S[te.H_OUT0] = HEADER_SIZE
        self.header = np.frombuffer(bytes(pack_header(header_flags(opts))), np.uint8)
        self.a.out[:HEADER_SIZE] = self.header
        dense = bool(bits & int(Options.DENSE))
        self.flags = (
            _opt_flags(opts)
            | te.F_ONESHOT
            | (te.F_DENSE | te.F_RESET if dense else 0)
            | (te.F_PAIR if bits & int(Options.PAIR_PRED) else 0)
            | (te.F_MTF if bits & int(Options.MTF) else 0)
            | (MIN_INTERN << te.F_MIN_SHIFT)
            | (MAX_STATE_ENTRIES << te.F_MAX_SHIFT)
        )
        self.columnar = columnar_enabled(opts)
        self.rans = bool(bits & int(Options.RANS))


# colstruct._SCALARS (not imported: colstruct pulls in pyarrow; a test keeps them equal)
_COL_SCALARS = (bool, int, float, str, bytes, datetime)


def _columnar_declines(seq: list | tuple) -> bool:
    """Whether ``values_write.try_columnar`` surely declines ``seq`` (>= 16 rows, columnar
    on) having changed nothing: its first row is a plain dict that is empty, has a non-str
    key or holds a non-None value of a type ``colstruct.write_records_columnar`` refuses
    (it checks every row's values, the first row's included, before writing anything).
    False means "maybe not": the caller takes the ordinary path."""
    first = seq[0]
    if type(first) is not dict:
        return False
    if not first:
        return True
    for k, v in first.items():
        if type(k) is not str:
            return True
        if v is None:
            continue
        tv = type(v)
        if tv not in _COL_SCALARS or (tv is int and not -(2**63) <= v < 2**64):
            return True
    return False


def dumps_body(obj: object, opts: Options, *, row_major: bool = False) -> bytes | None:
    """``values_write.dumps(obj, opts)`` without an encode context: the whole buffer
    (header, body, entropy pass), or None when the caller must take its ordinary path (a
    root list the columnar writer may take, values the fast path declines, re-entry).
    ``row_major``: the caller has the columnar form of a root list already and wants the
    row-major one to compare sizes with (qdf-wire-v1.md §3.4)."""
    try:
        th = _tls.th
    except AttributeError:
        th = _thread()
    st = th.one.get(opts)
    if st is None:
        st = th.one[opts] = _OneShot(th, opts)
    flags = st.flags
    t = type(obj)
    if (t is list or t is tuple) and st.columnar and len(obj) >= COLUMNAR_MIN_ROWS:  # type: ignore[arg-type]
        if not row_major and not _columnar_declines(obj):  # type: ignore[arg-type]
            return None
        flags |= _ROOT_DECLINED
    if th.busy:
        return None
    th.busy = True
    try:
        src = st.pk.pack(obj)
    except Exception:
        return None
    finally:
        th.busy = False
    a = st.a
    W = _scratch(th, len(src), MAX_DEPTH)
    while True:
        n = _transcode(src, a.out, a.S, a.slab, a.bslab, W, flags, MAX_DEPTH)
        if n >= 0:
            break
        if n == _BAIL:
            return None
        a.grow()
        a.out[:HEADER_SIZE] = st.header
    if st.rans:
        buf = finish_body(a.outmv[:n], entropy=True)  # type: ignore[arg-type]
    else:
        buf = bytes(a.outmv[:n])
    if len(a.out) > _KEEP_OUT:
        del th.one[opts]  # do not keep a huge message's buffers alive
    return buf
