"""Fast row-major decode: a Numba kernel transcodes the qdf body value into a pickle opcode
stream, then ``pickle.loads`` (C) builds the Python objects.

:func:`try_read` is the entry point of readers with a :class:`DecodeContext` (``session``
calls it before the Python reader); :func:`loads_body` is the one-shot entry (``qdf.loads``)
that needs no context at all. The kernel (:mod:`qdf_kernels.transcode_dec`) replays the
Dense state in its array form (:class:`~qdf_columnar.wire.dense._DenseArrays`): intern
table, kinds, pair predictor, LRU order, ring, last id, map shapes and the per-field
string-delta bases. A first pass validates the value and bounds every output size
without touching state; anything it does not take (QPack payloads, columnar containers,
malformed or truncated input, too deep nesting...) makes the entry points return
``(False, None)`` with the state untouched, so the Python reader runs and raises its
usual typed errors.

:func:`loads_body` skips the validating pass (``MODE_ONESHOT``): its pooled state is
private and reset by the kernel on every call, so a decline or a buffer growth found in
the middle of the value just restarts (or declines) from a clean state.

Forms: a reader whose state is in the Python form is validated first, then converted
once (O(state)); later calls find it in the array form and cost one kernel call plus
``pickle.loads``. The Python reader converts back on its next use. A pristine reader
borrows a pooled array set, reset inside the kernel, so it allocates nothing either.

Pickle's memo gives every interned string (and every map shape key) ONE ``str`` object
per message: records of one shape share their key objects, with cached hashes.

Values pickle cannot carry natively (float32 -> ``np.float32``, timestamps ->
``datetime`` / ``pd.Timestamp``) travel as ``_raw(<raw qdf value bytes>)`` (a
``STACK_GLOBAL`` + ``REDUCE``) decoded by the Python readers.

Security: the kernel writes every opcode itself; every byte taken from the input lands
inside a length-prefixed ``str`` / ``bytes`` payload (or the big-endian 8 bytes of a
``BINFLOAT`` / the little-endian bytes of an int opcode, also fixed-size operands), so an
input can never inject an opcode. A stream without the ``_raw`` global holds no
``GLOBAL`` / ``STACK_GLOBAL`` / ``REDUCE`` at all and goes to plain ``pickle.loads``; a
stream with it is loaded by :class:`_RawUnpickler`, whose ``find_class`` resolves that
one function and refuses everything else.
"""

from __future__ import annotations

import io
import pickle
import sys

import numpy as np
from qdf_kernels import transcode_dec as td

from ..errors import CorruptDataError
from ..format.varint import unzigzag
from .context import MAX_DEPTH, DecodeContext
from .dense import MAX_DECODE_ENTRIES, DenseReader, _DenseArrays
from .values_read import timestamp_value

__all__ = ["loads_body", "try_read"]

_transcode = td.transcode
_pickle_loads = pickle.loads
_RET_OK = td.RET_OK
_NEED = td.NEED
_BAIL = td.BAIL
_BADUTF8 = td.BADUTF8
_CORRUPT = td.CORRUPT
_MODE_FULL = td.MODE_FULL
_MODE_FRESH = td.MODE_FRESH
_MODE_ONESHOT = td.MODE_ONESHOT
_FIRST = -1  # _try_read_slow: no kernel call made yet

#: One spare array set for pristine readers of :func:`try_read`; reused once its reader is gone.
_POOL: list[_DenseArrays | None] = [None]
#: Array sets of :func:`loads_body`: taken with ``pop`` and given back with ``append`` (both
#: atomic), so two threads never share one.
_FREE: list[_DenseArrays] = []
_FREE_MAX = 4
_take = _FREE.pop
_give = _FREE.append
_KEEP_BYTES = 64 << 20  # a set grown past this (a huge message) is not pooled
#: Pickle streams from this many bytes (``2 *``, as in the kernel's OK return) take
#: :func:`_load_big`. The cyclic GC is deliberately left running there: building thousands
#: of dicts triggers young-generation collections (~10% of a 1024-record unpickle), but
#: pausing the GC is process-wide and would undo another thread's ``gc.disable()``.
_GC_PAUSE = 2 * 8192


def _raw(payload: bytes) -> object:
    """A raw qdf value the pickle stream carries as bytes: ``CB`` float32 or ``F3`` timestamp."""
    if payload[0] == 0xCB:  # float32: np.frombuffer keeps the exact bits, as the Python reader
        return np.frombuffer(payload, "<f4", 1, 1)[0]
    # F3 zigzag-uvarint(sec) uvarint(nsec), both varints already validated by the kernel
    # (nsec <= 999999999): read them here rather than through a ByteReader, per timestamp.
    sec = nsec = shift = 0
    i = 1
    while True:
        b = payload[i]
        i += 1
        sec |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    shift = 0
    while True:
        b = payload[i]
        i += 1
        nsec |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    return timestamp_value(unzigzag(sec), nsec)


def _load_raw(mv: memoryview) -> object:
    """Unpickle a stream that uses :func:`_raw`, through :class:`_RawUnpickler`.

    A file-based unpickler reads every opcode through ``file.read`` unless the stream is
    framed; one FRAME opcode (``95`` + u64 length) in front makes it take the whole stream
    into its buffer at once (about 5x faster on a small message)."""
    n = len(mv)
    framed = bytearray(9 + n)
    framed[0] = 0x95
    framed[1:9] = n.to_bytes(8, "little")
    framed[9:] = mv
    return _RawUnpickler(io.BytesIO(framed)).load()


class _RawUnpickler(pickle.Unpickler):
    """Resolves :func:`_raw` and nothing else."""

    def find_class(self, module: str, name: str) -> object:
        if module == td.RAW_MODULE and name == td.RAW_NAME:
            return _raw
        raise pickle.UnpicklingError(f"global {module}.{name} is not allowed")


def _build(a: _DenseArrays, r: int) -> object:
    """The value of the pickle stream the kernel wrote (``r``: its OK return value)."""
    r -= _RET_OK
    mv = a.outmv[: r >> 1]
    if r >= _GC_PAUSE:
        return _load_big(mv, r)
    if r & 1:
        return _load_raw(mv)
    return _pickle_loads(mv)


def _load_big(mv: memoryview, r: int) -> object:
    """Unpickle a large stream (``r & 1``: it uses ``_raw``)."""
    return _load_raw(mv) if r & 1 else _pickle_loads(mv)


def _corrupt(st: np.ndarray, nids: int) -> CorruptDataError:
    code = int(st[td.T_ERR])
    off = int(st[td.T_ERROFF])
    v, v2 = int(st[td.T_ERRVAL]), int(st[td.T_ERRVAL2])
    if code == td.ERR_ID:
        msg = f"unknown Dense state id {v} ({nids} interned)"
    elif code == td.ERR_MTF:
        msg = f"MTF rank {v} does not name a state id"
    elif code == td.ERR_PAIR:
        msg = f"pair reference with no recorded successor of id {v2}"
    elif code == td.ERR_DELTA:
        msg = f"string delta keeps {v} bytes of a previous value of {v2} bytes"
    elif code == td.ERR_REPEAT:
        msg = "repeat reference (E8) with no previous state id"
    else:
        msg = f"more than {MAX_DECODE_ENTRIES - 1} interned strings"
    return CorruptDataError(msg, offset=off)


def _as_buf(buf: object) -> object:
    if type(buf) is bytes or (type(buf) is np.ndarray and buf.dtype == np.uint8 and buf.ndim == 1
                              and buf.flags.c_contiguous):
        return buf
    return np.frombuffer(buf, np.uint8) if not isinstance(buf, np.ndarray) else np.ascontiguousarray(buf, np.uint8)


def _to_native(buf: object, start: int, end: int, maxd: int, d: DenseReader) -> bool:
    """Validate against a Python-form state; only if accepted, switch it to the array form."""
    a = d._arrs
    if a is None:
        a = d._arrs = _DenseArrays()
    if not d._native:
        a.st[td.S_NIDS] = len(d.values)
        a.st[td.S_LAST] = d.last_id
    if not d._fnative:
        d._sync_shapes(a)
    a.python_maxlen(d)
    while True:
        status = _transcode(buf, start, end, maxd, td.MODE_VALIDATE, *a.args)
        if status != _NEED:
            break
        a.grow_for(a.st)
    if status != td.VALID:
        return False
    if not d._native:
        d._to_arrays(0, 0)
    d._fields_to_arrays()
    return True


def try_read(buf: object, start: int, end: int, ctx: DecodeContext) -> tuple[bool, object]:
    """Decode the body value filling ``buf[start:end]`` with the kernel, or decline.

    Returns ``(True, value)`` with ``ctx.dense`` advanced exactly as
    ``values_read.read_value`` would, or ``(False, None)`` with no state changed (the
    caller then runs the Python reader). Corruption found after the state started to
    change raises :class:`CorruptDataError`.
    """
    if type(buf) is not bytes:
        buf = _as_buf(buf)
    d = ctx.dense
    if d._native and d._fnative:  # the per-message path of a stream: one kernel call, one unpickle
        a = d._arrs
        r = _transcode(buf, start, end, ctx.max_depth - ctx.depth, _MODE_FULL, a.I, a.U)
        if r >= _RET_OK:
            r -= _RET_OK
            if r >= _GC_PAUSE:
                return True, _load_big(a.outmv[: r >> 1], r)
            if r & 1:
                return True, _load_raw(a.outmv[: r >> 1])
            return True, _pickle_loads(a.outmv[: r >> 1])
        return _try_read_slow(buf, start, end, ctx.max_depth - ctx.depth, d, a, _MODE_FULL, r)
    if d._arrs is None and not d.values and not d.shapes and not d.head and not d.last_bin and not d.fields:
        a = _POOL[0]
        if a is None or sys.getrefcount(a) > 3:  # held by a live reader (pool + local + argument = 3)
            a = _POOL[0] = _DenseArrays()
        return _try_read_slow(buf, start, end, ctx.max_depth - ctx.depth, d, a, _MODE_FRESH, _FIRST)
    if not _to_native(buf, start, end, ctx.max_depth - ctx.depth, d):
        return False, None
    return _try_read_slow(buf, start, end, ctx.max_depth - ctx.depth, d, d._arrs, _MODE_FULL, _FIRST)


def _try_read_slow(
    buf: object, start: int, end: int, maxd: int, d: DenseReader, a: _DenseArrays, mode: int, status: int
) -> tuple[bool, object]:
    """:func:`try_read` from a first kernel status (:data:`_FIRST`: make the first call here)."""
    while True:
        if status >= _RET_OK:
            break
        if status == _NEED or status == _FIRST:
            if status == _NEED:
                a.grow_for(a.st)
            status = _transcode(buf, start, end, maxd, mode, a.I, a.U)
            continue
        if status == _BAIL:
            return False, None
        if status == _BADUTF8:
            if mode == _MODE_FRESH:  # a pristine one-shot reader: forget the state, the Python path raises
                return False, None
            raise CorruptDataError("string is not valid UTF-8", offset=int(a.st[td.T_ERROFF]))
        if mode == _MODE_FRESH:
            d._arrs = a
            d._native = d._fnative = True
        raise _corrupt(a.st, int(a.st[td.S_NIDS]))
    if mode == _MODE_FRESH:
        a.nslab = 0
        d._arrs = a
        d._native = d._fnative = True
    return True, _build(a, status)


def loads_body(buf: object, start: int, end: int) -> tuple[bool, object]:
    """One-shot decode of the body value filling ``buf[start:end]`` (a fresh Dense state), or decline.

    No :class:`DecodeContext` / :class:`DenseReader` is created: the state is a pooled
    array set reset inside the kernel, which runs its single checking pass
    (``MODE_ONESHOT``): a NEED restarts the call on the grown set. Returns ``(False, None)`` for anything the Python
    reader must handle (it then raises its typed errors); corruption found after the
    state started to change raises :class:`CorruptDataError`. Thread-safe: a set is
    taken from the pool (``list.pop``) and given back (``list.append``) only after the
    objects are built, so two threads never share one.
    """
    if type(buf) is not bytes:
        buf = _as_buf(buf)
    try:
        a = _take()
    except IndexError:
        a = _DenseArrays()
    try:
        while True:
            i_arr, u_arr = a.args
            r = _transcode(buf, start, end, MAX_DEPTH, _MODE_ONESHOT, i_arr, u_arr)
            if r >= _RET_OK:
                r -= _RET_OK
                mv = a.outmv[: r >> 1]
                if r >= _GC_PAUSE:
                    return True, _load_big(mv, r)
                if r & 1:
                    return True, _load_raw(mv)
                return True, _pickle_loads(mv)
            if r == _NEED:
                a.grow_for(a.st)
                continue
            if r == _CORRUPT:
                raise _corrupt(a.st, int(a.st[td.S_NIDS]))
            return False, None  # BAIL / BADUTF8
    finally:
        if len(_FREE) < _FREE_MAX and len(a.U) <= _KEEP_BYTES:
            _give(a)
