"""Fast row-major encode: ``msgpack`` packs the value at C speed, a Numba kernel transcodes it.

:func:`try_write` appends exactly the bytes ``values_write.write_value`` appends for the
same value and leaves the :class:`~qdf_columnar.wire.dense.DenseWriter` in exactly the
same state (the kernel keeps that state in arrays; see ``qdf_kernels.transcode_enc`` and
``dense._WriterArrays``). When it cannot, it returns False having appended nothing and
changed nothing, and the caller runs the Python path (which also raises the proper errors).

The msgpack ``default=`` hook maps every non-msgpack value the Python path accepts to what
that path writes: numpy scalars and ints to ints / bools / floats, and values whose qdf form
is state-free (float32, timestamps, 1-D numeric arrays, int / float subclasses) to msgpack
ext type 1 (base neutral for map-field string deltas, ``values_write._BASE_NEUTRAL``) or 2
(not neutral) holding the qdf bytes, which the kernel copies verbatim. ``strict_types``
makes msgpack hand every subclass of a native type to the hook, so the hook sees exactly
the values whose encoding or base neutrality differs from the exact type's.
"""

from __future__ import annotations

import dataclasses
import threading
from datetime import datetime
from typing import Any

import msgpack
import numpy as np
from qdf_kernels import transcode_enc as te

from ..options import Options, columnar_enabled
from .context import EncodeContext
from .values_write import _F64, _FLOAT32, _FLOAT64, _datetime_parts, _write_ndarray, write_int, write_timestamp

__all__ = ["try_write"]

_ExtType = msgpack.ExtType
_NATIVE = frozenset((type(None), bool, int, float, str, bytes, bytearray, memoryview, dict, list))
_transcode = te.transcode
_BAIL = te.BAIL
_tls = threading.local()


def _make_hook(opts: Options) -> Any:
    scratch_ctx = EncodeContext(opts)  # for 1-D numeric arrays only, whose encoding never touches Dense state

    def hook(obj: Any) -> Any:
        t = type(obj)
        if t is tuple:
            return list(obj)
        if isinstance(obj, np.generic):
            if isinstance(obj, np.bool_):
                return bool(obj)
            if isinstance(obj, np.integer):
                if t is np.int64:
                    return int(obj)
                buf = bytearray()
                write_int(buf, int(obj))
                return _ExtType(2, bytes(buf))
            if isinstance(obj, (np.float32, np.float16)):
                data = bytes((_FLOAT32,)) + np.float32(obj).astype("<f4").tobytes()
                return _ExtType(1 if t is np.float32 else 2, data)
            if isinstance(obj, np.float64):
                return float(obj)
            if isinstance(obj, np.datetime64):
                buf = bytearray()
                write_timestamp(buf, *_datetime_parts(obj))
                return _ExtType(2, bytes(buf))
            if isinstance(obj, np.str_):
                return str(obj)
            if isinstance(obj, np.bytes_):
                return bytes(obj)
            raise TypeError(t)
        if isinstance(obj, int):  # int subclasses (IntEnum...): not base neutral; an exact int here is out of range
            if t is int:
                raise TypeError("int out of range")
            buf = bytearray()
            write_int(buf, int(obj))
            return _ExtType(2, bytes(buf))
        if isinstance(obj, float):
            return _ExtType(2, bytes((_FLOAT64,)) + _F64.pack(obj))
        if isinstance(obj, str):
            # The Python path writes str(obj) as a value but the raw text as a map field.
            if t.__str__ is not str.__str__:
                raise TypeError(t)
            return str.__str__(obj)
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return bytes(obj)
        if isinstance(obj, dict):
            return dict(obj)
        if isinstance(obj, list):
            return list(obj)
        if isinstance(obj, np.ndarray):
            if obj.ndim == 0:
                v = obj[()]
                return v if type(v) in _NATIVE else hook(v)
            if obj.ndim == 1 and obj.dtype.kind in "biuf":
                buf = bytearray()
                _write_ndarray(buf, obj, scratch_ctx)
                return _ExtType(2, bytes(buf))
            return list(obj)
        if isinstance(obj, datetime):
            buf = bytearray()
            write_timestamp(buf, *_datetime_parts(obj))
            return _ExtType(1 if t is datetime else 2, bytes(buf))
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        names = getattr(t, "__struct_fields__", None)  # msgspec.Struct
        if names is not None:
            return {name: getattr(obj, name) for name in names}
        raise TypeError(t)

    return hook


def _packer(opts: Options) -> msgpack.Packer:
    try:
        packers = _tls.packers
    except AttributeError:
        packers = _tls.packers = {}
    pk = packers[opts] = msgpack.Packer(
        default=_make_hook(opts), use_bin_type=True, datetime=False, strict_types=True, autoreset=True
    )
    return pk


_FLAGS: dict[Options, int] = {}  # Options -> kernel flags they imply (IntFlag arithmetic is slow)


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
        pk = _tls.packers[opts]
    except (AttributeError, KeyError):
        pk = _packer(opts)
    try:
        src = pk.pack(obj)
    except Exception:
        return False
    dense = ctx.dense
    a = dense._arrs if dense._native else dense.to_arrays()
    if a.fopts is not opts:
        try:
            f = _FLAGS[opts]
        except KeyError:
            f = _FLAGS[opts] = _opt_flags(opts)
        a.fflags = (
            f
            | (te.F_DENSE if dense.dense else 0)
            | (te.F_PAIR if dense.pair_on else 0)
            | (te.F_MTF if dense.mtf_on else 0)
        )
        a.fopts = opts
    flags = (
        a.fflags
        | (dense.min_intern << te.F_MIN_SHIFT)
        | (dense.max_entries << te.F_MAX_SHIFT)
        | (te.F_ROOT_DECLINED if root_declined else 0)
        | (te.F_IN_REP if ctx.in_repeated else 0)
    )
    room = ctx.max_depth - ctx.depth
    while True:
        n = _transcode(src, a.out, a.S, a.slab, a.bslab, flags, room)
        if n >= 0:
            out += a.outmv[:n]
            return True
        if n == _BAIL:
            return False
        a.grow()
