"""The Dense dialect state machine: string interning and state references.

A byte-compatible port of the Go reference's ``encState`` / ``decState``
(``state.go``) and of ``Encoder.WriteString`` / ``WriteBytes`` /
``emitStateRef`` (``encoder.go``) and ``Decoder.readStringBytes``
(``decoder_primitives``), as of the revision these notes follow.

Rules (all mirrored on both sides):

* Intern ids start at 0 and are assigned in emission order. Strings and byte
  strings share one table keyed on the raw bytes (so ``"abcd"`` and
  ``b"abcd"`` share an id, as in Go).
* A value shorter than 4 bytes, or any value once the table holds 16 384
  entries, is written inline; an inline write (and an inline read) resets
  ``last_id`` to invalid.
* A re-emitted id picks the smallest of: ``E8`` (id == last_id), ``E1 id`` when
  id < 128, ``EA 00`` (Markov-1 predictor says last_id -> id), ``E9 rank``
  (offset in the 128-slot emission ring, only when its uvarint is shorter than
  the id's), else ``E1 uvarint(id)``.
* Every fresh intern and every non-repeat reference pushes the id into the
  128-slot ring; ``E8`` does not. The predictor records (prev, id) after every
  emission whose prev is valid, including repeats (id, id) and fresh interns.

The decoder also keeps the Go decoder's LRU chain, consulted only when an
``E9`` rank misses the ring (rank >= 128, which the encoder never writes but
the Go decoder accepts).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from itertools import islice

import numpy as np
from qdf_kernels import dense_strings as dk
from qdf_kernels import transcode_dec as td

from ..errors import CorruptDataError, UnsupportedTypeError
from ..format.reader import ByteReader
from ..format.tags import DenseTag, Tag
from ..format.varint import uvarint_len, write_uvarint
from ..options import Options

__all__ = [
    "MIN_INTERN",
    "MAX_STATE_ENTRIES",
    "MAX_DECODE_ENTRIES",
    "RING_SIZE",
    "DenseWriter",
    "DenseReader",
    "write_inline_str",
    "write_inline_bin",
]

MIN_INTERN = 4  # Encoder.minIntern default
MAX_STATE_ENTRIES = 1 << 14  # Encoder.maxStateEntries default: past it, new strings go inline
MAX_DECODE_ENTRIES = 0xFFFF  # maxInternEntries: the Go decoder rejects the 65 535th intern record
RING_SIZE = 128  # mruRingSize
_RING_MASK = RING_SIZE - 1
_INVALID = -1  # lruInvalidID
_EMPTY = -1  # mruEmpty (ids are never negative)

_FIXSTR = int(Tag.FIXSTR)
_STR8 = int(Tag.STR8)
_STR16 = int(Tag.STR16)
_STR32 = int(Tag.STR32)
_BIN8 = int(Tag.BIN8)
_BIN16 = int(Tag.BIN16)
_BIN32 = int(Tag.BIN32)
_E_INTERN_STR = int(DenseTag.INTERN_STR)
_E_INTERN_BIN = int(DenseTag.INTERN_BIN)
_E_REF = int(DenseTag.STATE_REF)
_E_REPEAT = int(DenseTag.STATE_REPEAT)
_E_MTF = int(DenseTag.STATE_MTF)
_E_PAIR = int(DenseTag.STATE_PAIR)
_F2_DELTA = int(DenseTag.STR_DELTA)

#: Every tag :meth:`DenseReader.read_str` understands (inline str/bin and Dense state tags).
STRINGISH_TAGS = frozenset(
    [*range(_FIXSTR, _FIXSTR + 32), _STR8, _STR16, _STR32, _BIN8, _BIN16, _BIN32]
    + [_E_INTERN_STR, _E_INTERN_BIN, _E_REF, _E_REPEAT, _E_MTF, _E_PAIR]
)
#: The subset that decodes to ``bytes`` when read as a fresh value.
BIN_TAGS = frozenset([_BIN8, _BIN16, _BIN32, _E_INTERN_BIN])


def write_inline_str(out: bytearray, data: bytes) -> None:
    """fixstr / str8 / str16 / str32 header, then the bytes (Go writeStringInline)."""
    n = len(data)
    if n <= 31:
        out.append(_FIXSTR | n)
    elif n <= 0xFF:
        out += bytes((_STR8, n))
    elif n <= 0xFFFF:
        out.append(_STR16)
        out += n.to_bytes(2, "little")
    elif n <= 0xFFFFFFFF:
        out.append(_STR32)
        out += n.to_bytes(4, "little")
    else:
        raise UnsupportedTypeError(f"a string of {n} bytes exceeds the 4 GiB str32 limit")
    out += data


def write_inline_bin(out: bytearray, data: bytes) -> None:
    """bin8 / bin16 / bin32 header (there is no fixbin), then the bytes (Go writeBytesInline)."""
    n = len(data)
    if n <= 0xFF:
        out += bytes((_BIN8, n))
    elif n <= 0xFFFF:
        out.append(_BIN16)
        out += n.to_bytes(2, "little")
    elif n <= 0xFFFFFFFF:
        out.append(_BIN32)
        out += n.to_bytes(4, "little")
    else:
        raise UnsupportedTypeError(f"a byte string of {n} bytes exceeds the 4 GiB bin32 limit")
    out += data


#: tagStrDelta gate (Go strDeltaProbeN / strDeltaRearmN): a field with no win in 32
#: probes stops probing; 512 values later it probes again.
STR_DELTA_PROBE_N = 32
STR_DELTA_REARM_N = 512


class _FieldState:
    """Encoder-side tagStrDelta state of one map-shape field (Go strFieldState, delta part)."""

    __slots__ = ("base", "seen", "wins", "muted")

    def __init__(self) -> None:
        self.base: bytes | None = None  # the field's previous string / bytes value
        self.seen = 0
        self.wins = 0
        self.muted = False


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # invariant: a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _te():  # lazy: only the fast encode path needs the transcode kernels
    from qdf_kernels import transcode_enc

    return transcode_enc


_OPT_DENSE = int(Options.DENSE)
_OPT_PAIR = int(Options.PAIR_PRED)
_OPT_MTF = int(Options.MTF)
_POOL_SIZE = 8
_pool = threading.local()


def _pooled_arrays(owner: DenseWriter) -> _WriterArrays:
    """An empty array form for a fresh ``owner``, reusing one whose writer was freed.

    Allocating and laying out a new one costs more than a whole small message, and dumps
    makes a writer per call; a per-thread pool keeps the buffers (``reset`` is O(used)).
    """
    try:
        pool = _pool.items
    except AttributeError:
        pool = _pool.items = []
    for i, (ref, a) in enumerate(pool):
        if ref() is None:
            _te().reset(a.S, a.slab)
            a.nid_sync = a.shape_sync = 0
            a.fopts = None
            pool[i] = (weakref.ref(owner), a)
            return a
    a = _WriterArrays()
    if len(pool) < _POOL_SIZE:
        pool.append((weakref.ref(owner), a))
    return a


class _WriterArrays:
    """The array form of a :class:`DenseWriter`'s state (layout: ``qdf_kernels.transcode_enc``).

    Ids and shapes are append-only in both forms, so a switch copies only the ids and
    shapes the other form added since the last switch (``nid_sync`` / ``shape_sync``:
    the prefix both forms hold). The pair predictor, the ring and the per-field delta
    states are copied whole: O(ids + fields) per switch, never per call in a run of
    calls on the same form. ``out`` is the kernel's reusable output buffer.
    """

    __slots__ = ("S", "slab", "bslab", "out", "outmv", "nid_sync", "shape_sync", "fopts", "fflags")

    def __init__(self) -> None:
        self.S = _te().new_state()
        self.slab = np.empty(1 << 12, np.uint8)
        self.bslab = np.empty(1 << 10, np.uint8)
        self.out = np.empty(1 << 10, np.uint8)
        self.outmv = memoryview(self.out)
        self.nid_sync = 0
        self.shape_sync = 0
        self.fopts = None  # the Options the cached ``fflags`` were computed for (glue-owned)
        self.fflags = 0

    # -------------------------------------------------------------- capacity
    def reserve(self, ids: int, slab: int, shapes: int, keys: int, fields: int, bslab_more: int, out: int) -> None:
        """Room for ``ids`` ids, ``slab`` slab bytes, shape ids < ``shapes``, ``keys`` key and
        ``fields`` field entries, ``bslab_more`` more base bytes and ``out`` output bytes."""
        te = _te()
        S = self.S
        if (ids > S[te.H_ICAP] or 2 * ids > S[te.H_HCAP] or shapes > S[te.H_SCAP] or 2 * shapes > S[te.H_SHCAP]
                or keys > S[te.H_KCAP] or fields > S[te.H_FCAP]):
            def g(cur: int, need: int) -> int:
                return max(2 * cur, need) if need > cur else cur

            self.S = te.relayout(S, g(int(S[te.H_ICAP]), ids), g(int(S[te.H_SCAP]), shapes),
                                 g(int(S[te.H_KCAP]), keys), g(int(S[te.H_FCAP]), fields))
            te.rehash(self.S, self.slab, np.int64(0), np.int64(1))
            S = self.S
        used = int(S[te.H_SLAB])
        if slab > len(self.slab):
            new = np.empty(max(slab, 2 * len(self.slab)), np.uint8)
            new[:used] = self.slab[:used]
            self.slab = new
        if int(S[te.H_BSLAB]) + bslab_more > len(self.bslab):
            nf = int(S[te.H_NFIELDS])
            lens = S[int(S[te.B_FBLEN]) : int(S[te.B_FBLEN]) + nf]
            live = int(lens[lens > 0].sum())
            new = np.empty(max(4 * (live + bslab_more), 1 << 14), np.uint8)  # room for many calls between compactions
            te.compact_bases(S, self.bslab, new)
            self.bslab = new
        if out > len(self.out):
            self.out = np.empty(max(out, 2 * len(self.out)), np.uint8)
            self.outmv = memoryview(self.out)

    def grow(self) -> None:
        """Grow to what the kernel asked for (``S[N_*]`` after a NEED status)."""
        te = _te()
        S = self.S
        self.reserve(int(S[te.N_IDS]), int(S[te.N_SLAB]), int(S[te.N_SHAPES]), int(S[te.N_KEYS]),
                     int(S[te.N_FIELDS]), int(S[te.N_BSLAB] - S[te.H_BSLAB]), int(S[te.N_OUT]))

    # ----------------------------------------------------------- conversions
    def load(self, w: DenseWriter) -> None:
        """Python form -> arrays."""
        te = _te()
        lo = self.nid_sync
        nids = w.n_ids
        new: dict[int, tuple[int, bytes]] = {}
        if nids > lo:
            for tbl, kind in ((w.table, 0), (w.btable, 1)):
                for data in reversed(tbl):  # insertion order is id order
                    id_ = tbl[data]
                    if id_ < lo:
                        break
                    new[id_] = (kind, data)
        slo = self.shape_sync
        sc = w.shape_count
        newsh: dict[int, list[bytes]] = {}
        if sc > slo:
            for key in reversed(w.shapes):
                sid = w.shapes[key]
                if sid <= slo:
                    break
                newsh[sid] = [k.encode("utf-8") for k in key]
        S = self.S
        nkeys = sum(len(k) for k in newsh.values())
        nbytes = sum(len(d) for _, d in new.values()) + sum(len(b) for k in newsh.values() for b in k)
        bases = sum(len(fs.base) for st in w.fields.values() for fs in st if fs.base)
        self.bslab_reset()
        self.reserve(nids, int(S[te.H_SLAB]) + nbytes, sc + 1, int(S[te.H_NKEYS]) + nkeys,
                     int(S[te.H_NFIELDS]) + nkeys, bases, 0)
        S = self.S
        slab = self.slab
        used = int(S[te.H_SLAB])
        bioff, bilen, bikind = int(S[te.B_IOFF]), int(S[te.B_ILEN]), int(S[te.B_IKIND])
        for id_ in range(lo, nids):
            kd = new.get(id_)
            if kd is None:  # not in either table (never written by DenseWriter): never matches
                S[bilen + id_] = -1
                continue
            kind, data = kd
            n = len(data)
            slab[used : used + n] = np.frombuffer(data, np.uint8)
            S[bioff + id_] = used
            S[bilen + id_] = n
            S[bikind + id_] = kind
            used += n
        bsks, bsn, bsfs = int(S[te.B_SKS]), int(S[te.B_SN]), int(S[te.B_SFS])
        bkoff, bklen = int(S[te.B_KOFF]), int(S[te.B_KLEN])
        e = int(S[te.H_NKEYS])
        nf = int(S[te.H_NFIELDS])
        for sid in range(slo + 1, sc + 1):
            key = newsh.get(sid)
            if key is None:  # reserved by declare_shape: no keys
                S[bsn + sid] = -1
                continue
            S[bsks + sid] = e
            S[bsn + sid] = len(key)
            S[bsfs + sid] = nf
            for k in key:
                n = len(k)
                slab[used : used + n] = np.frombuffer(k, np.uint8)
                S[bkoff + e] = used
                S[bklen + e] = n
                used += n
                e += 1
            nf += len(key)
        S[te.H_SLAB] = used
        S[te.H_NKEYS] = e
        S[te.H_NFIELDS] = nf
        # per-field delta states, whole
        bfo, bfl, bfs, bfw, bfm = (int(S[b]) for b in (te.B_FBOFF, te.B_FBLEN, te.B_FSEEN, te.B_FWINS, te.B_FMUTED))
        S[bfl : bfl + nf] = -1
        S[bfo : bfo + nf] = 0
        S[bfs : bfs + nf] = 0
        S[bfw : bfw + nf] = 0
        S[bfm : bfm + nf] = 0
        bslab = self.bslab
        bused = 0
        for sid, states in w.fields.items():
            if sid > sc or S[bsn + sid] < 0:
                continue
            f0 = int(S[bsfs + sid])
            for i, fs in enumerate(states[: int(S[bsn + sid])]):
                f = f0 + i
                if fs.base is not None:
                    n = len(fs.base)
                    bslab[bused : bused + n] = np.frombuffer(fs.base, np.uint8)
                    S[bfo + f] = bused
                    S[bfl + f] = n
                    bused += n
                S[bfs + f] = fs.seen
                S[bfw + f] = fs.wins
                S[bfm + f] = int(fs.muted)
        S[te.H_BSLAB] = bused
        S[te.H_NIDS] = nids
        S[te.H_LAST] = w.last_id
        S[te.H_HEAD] = w.head
        S[te.H_SHAPES] = sc
        S[te.RING : te.RING + RING_SIZE] = w.ring
        bpair = int(S[te.B_PAIR])
        S[bpair : bpair + nids] = -1
        if w.pair:
            S[bpair + np.fromiter(w.pair.keys(), np.int64, len(w.pair))] = np.fromiter(w.pair.values(), np.int64,
                                                                                       len(w.pair))
        te.rehash(S, slab, np.int64(lo), np.int64(slo + 1))
        self.nid_sync = nids
        self.shape_sync = sc

    def bslab_reset(self) -> None:
        self.S[_te().H_BSLAB] = 0

    def store(self, w: DenseWriter) -> None:
        """Arrays -> Python form."""
        te = _te()
        S = self.S
        nids = int(S[te.H_NIDS])
        lo = self.nid_sync
        if nids > lo:
            mv = memoryview(self.slab)
            offs = S[int(S[te.B_IOFF]) + lo : int(S[te.B_IOFF]) + nids].tolist()
            lens = S[int(S[te.B_ILEN]) + lo : int(S[te.B_ILEN]) + nids].tolist()
            kinds = S[int(S[te.B_IKIND]) + lo : int(S[te.B_IKIND]) + nids].tolist()
            table, btable = w.table, w.btable
            for i in range(nids - lo):
                n = lens[i]
                if n < 0:
                    continue
                data = bytes(mv[offs[i] : offs[i] + n])
                (btable if kinds[i] else table)[data] = lo + i
        w.n_ids = nids
        self.nid_sync = nids
        w.last_id = int(S[te.H_LAST])
        w.head = int(S[te.H_HEAD])
        w.ring = S[te.RING : te.RING + RING_SIZE].tolist()
        bpair = int(S[te.B_PAIR])
        pair = S[bpair : bpair + nids]
        hit = np.flatnonzero(pair >= 0)
        w.pair = dict(zip(hit.tolist(), pair[hit].tolist()))
        sc = int(S[te.H_SHAPES])
        bsn, bsks, bsfs = int(S[te.B_SN]), int(S[te.B_SKS]), int(S[te.B_SFS])
        bkoff, bklen = int(S[te.B_KOFF]), int(S[te.B_KLEN])
        slab = self.slab
        for sid in range(self.shape_sync + 1, sc + 1):
            n = int(S[bsn + sid])
            if n < 0:
                continue
            e0 = int(S[bsks + sid])
            key = tuple(slab[S[bkoff + e] : S[bkoff + e] + S[bklen + e]].tobytes().decode("utf-8")
                        for e in range(e0, e0 + n))
            w.shapes[key] = sid
        w.shape_count = sc
        self.shape_sync = sc
        nf = int(S[te.H_NFIELDS])
        fo, fl, fsn, fw, fm = (S[int(S[b]) : int(S[b]) + nf].tolist()
                               for b in (te.B_FBOFF, te.B_FBLEN, te.B_FSEEN, te.B_FWINS, te.B_FMUTED))
        bmv = memoryview(self.bslab)
        fields: dict[int, list[_FieldState]] = {}
        for sid in range(1, sc + 1):
            n = int(S[bsn + sid])
            if n < 0:
                continue
            f0 = int(S[bsfs + sid])
            states = []
            for f in range(f0, f0 + n):
                fs = _FieldState()
                if fl[f] >= 0:
                    fs.base = bytes(bmv[fo[f] : fo[f] + fl[f]])
                fs.seen = fsn[f]
                fs.wins = fw[f]
                fs.muted = bool(fm[f])
                states.append(fs)
            fields[sid] = states
        w.fields = fields


class DenseWriter:
    """Encoder-side Dense state for one buffer (or one stream: state persists across messages).

    With ``Options.DENSE`` off every string is written inline and no state is kept.
    """

    __slots__ = (
        "dense",
        "pair_on",
        "mtf_on",
        "min_intern",
        "max_entries",
        "table",
        "last_id",
        "ring",
        "head",
        "pair",
        "shapes",
        "shape_count",
        "btable",
        "n_ids",
        "fields",
        "_arrs",
        "_native",
        "__weakref__",
    )

    def __init__(self, opts: Options) -> None:
        bits = int(opts)  # IntFlag arithmetic is slow; dumps builds a writer per call
        #: The array form (qdf_columnar.wire.fast_enc) and whether it holds the current state.
        self._arrs: _WriterArrays | None = None
        self._native = False
        self.dense = bool(bits & _OPT_DENSE)
        self.pair_on = bool(bits & _OPT_PAIR)
        self.mtf_on = bool(bits & _OPT_MTF)
        self.min_intern = MIN_INTERN
        self.max_entries = MAX_STATE_ENTRIES
        self.table: dict[bytes, int] = {}  # interned str (UTF-8 bytes) -> id
        # Byte strings get ids from the same counter but a table of their own: Go lets
        # b"abcd" reference an earlier "abcd" (one table keyed on raw bytes), which a
        # Python reader would return as str. Separate keys keep every value's type;
        # any decoder reads both forms.
        self.btable: dict[bytes, int] = {}
        self.n_ids = 0
        #: Per map-shape field string state for tagStrDelta: shape id -> [_FieldState].
        self.fields: dict[int, list[_FieldState]] = {}
        self.last_id = _INVALID
        self.ring = [_EMPTY] * RING_SIZE  # mruRing
        self.head = 0  # mruHead (monotonic; slot = head & mask)
        self.pair: dict[int, int] = {}  # prev id -> most recent successor id (top-1 predictor)
        self.shapes: dict[tuple[str, ...], int] = {}
        self.shape_count = 0

    # ------------------------------------------------------- the two forms
    def sync(self) -> None:
        """Make the Python form (``table``, ``pair``, ``ring``...) current.

        Every method calls it; code that reads those attributes directly must call it
        first. Costs nothing unless the fast encode path ran last.
        """
        if self._native:
            self._arrs.store(self)  # type: ignore[union-attr]
            self._native = False

    def to_arrays(self) -> _WriterArrays:
        """Switch to the array form (used by ``fast_enc``) and return it."""
        a = self._arrs
        if a is None:
            if (self.n_ids == 0 and self.shape_count == 0 and self.head == 0 and self.last_id == _INVALID
                    and not self.fields and not self.pair):
                # A fresh writer (one per dumps call): an emptied pooled array form, no load.
                a = self._arrs = _pooled_arrays(self)
                self._native = True
                return a
            a = self._arrs = _WriterArrays()
        if not self._native:
            a.load(self)
            self._native = True
        return a

    def state(self) -> tuple:
        """The whole encoder state as plain values (tests compare the two encode paths with it)."""
        self.sync()
        return (
            dict(self.table),
            dict(self.btable),
            self.n_ids,
            self.last_id,
            list(self.ring),
            self.head,
            dict(self.pair),
            dict(self.shapes),
            self.shape_count,
            {s: [(f.base, f.seen, f.wins, f.muted) for f in fs] for s, fs in self.fields.items()},
        )

    def checkpoint(self) -> tuple:
        """What :meth:`rollback` needs to undo the writes that follow: the counters, the
        ring, and copies of the predictor and the per-field delta states (O(state); streams
        take one only for a message the atomic fast path declined)."""
        self.sync()
        fields = {s: [(f.base, f.seen, f.wins, f.muted) for f in fs] for s, fs in self.fields.items()}
        return self.n_ids, self.last_id, list(self.ring), self.head, dict(self.pair), self.shape_count, fields

    def rollback(self, cp: tuple) -> None:
        """Return to :meth:`checkpoint` ``cp``: ids and shapes are only ever appended, so the
        tables drop what came after; the rest is restored from the copies."""
        self.sync()
        n_ids, last_id, ring, head, pair, shape_count, fields = cp
        for table in (self.table, self.btable):
            for key in [k for k, v in table.items() if v >= n_ids]:
                del table[key]
        self.n_ids, self.last_id, self.ring, self.head, self.pair = n_ids, last_id, ring, head, pair
        for key in [k for k, v in self.shapes.items() if v > shape_count]:
            del self.shapes[key]
        self.shape_count = shape_count
        self.fields = {}
        for sid, states in fields.items():
            for f, (base, seen, wins, muted) in zip(self.field_states(sid, len(states)), states):
                f.base, f.seen, f.wins, f.muted = base, seen, wins, muted
        # The array form may hold the abandoned writes' ids: rebuilt from the Python form on next use.
        self._arrs = None
        self._native = False

    # ------------------------------------------------------------ strings
    def write_str(self, out: bytearray, data: bytes, *, binary: bool = False) -> None:
        """Write ``data`` as a string (or ``bytes`` when ``binary``) value: Go WriteString / WriteBytes."""
        if self._native:
            self.sync()
        if type(data) is not bytes:
            data = bytes(data)  # the intern table needs a hashable key
        if self.dense and len(data) >= self.min_intern and self.n_ids < self.max_entries:
            table = self.btable if binary else self.table
            id_ = table.get(data)
            if id_ is not None:
                self.emit_state_ref(out, id_)
                return
            self._intern(out, table, data, binary)
            return
        if self.dense:
            # The decoder drops lastID on every inline read; stay in step with it.
            self.last_id = _INVALID
        if binary:
            write_inline_bin(out, data)
        else:
            write_inline_str(out, data)

    def _intern(self, out: bytearray, table: dict[bytes, int], data: bytes, binary: bool) -> None:
        """First sighting: ``E0``/``E2`` with the next id (Go installInternSlot + lruAddFresh)."""
        id_ = self.n_ids
        self.n_ids = id_ + 1
        table[data] = id_
        out.append(_E_INTERN_BIN if binary else _E_INTERN_STR)
        write_uvarint(out, len(data))
        out += data
        self._push(id_)
        if self.last_id != _INVALID and self.pair_on:
            self.pair[self.last_id] = id_
        self.last_id = id_

    def write_str_field(self, out: bytearray, data: bytes, fs: _FieldState) -> None:
        """Write a string that is field ``fs`` of a map shape: Go ``writeStringField``.

        Identical to :meth:`write_str` except for a first sighting of a value that
        differs from this field's previous one: then ``F2 uvarint(prefix)
        uvarint(len(suffix)) suffix`` (the previous value's first ``prefix`` bytes plus
        the suffix) is written instead when it costs less than half the ``E0`` form.
        A delta value is not interned and, like an inline one, drops ``last_id``. A
        field whose first 32 probes never win is muted for 512 values (encoder-side
        only: the wire does not change meaning). Go's condition order is kept exactly.
        """
        if self._native:
            self.sync()
        base = fs.base
        if not base:  # the field's first value (or an empty previous one): nothing to share
            self.write_str(out, data)
            fs.base = data
            return
        if data == base:  # a consecutive repeat: E8 / E1 is cheaper than any delta
            self.write_str(out, data)
            return
        if not (self.dense and len(data) >= self.min_intern and self.n_ids < self.max_entries):
            self.write_str(out, data)
            fs.base = data
            return
        table = self.table
        id_ = table.get(data)
        if id_ is not None:
            self.emit_state_ref(out, id_)
            fs.base = data
            return
        if not fs.muted:
            p = _common_prefix(base, data)
            n = len(data)
            intern_cost = 1 + uvarint_len(n) + n
            win = (1 + uvarint_len(p) + uvarint_len(n - p) + n - p) * 2 < intern_cost
            fs.seen += 1
            if win:
                fs.wins += 1
            if fs.seen >= STR_DELTA_PROBE_N:
                fs.muted = fs.wins == 0
                fs.seen = fs.wins = 0
            if win:
                out.append(_F2_DELTA)
                write_uvarint(out, p)
                write_uvarint(out, n - p)
                out += data[p:]
                self.last_id = _INVALID
                fs.base = data
                return
        else:
            fs.seen += 1
            if fs.seen >= STR_DELTA_REARM_N:
                fs.muted = False
                fs.seen = fs.wins = 0
        self._intern(out, table, data, False)
        fs.base = data

    def field_states(self, shape: int, n: int) -> list[_FieldState]:
        """The per-field string states of map shape ``shape`` (``n`` fields)."""
        if self._native:
            self.sync()
        states = self.fields.get(shape)
        if states is None or len(states) < n:
            states = (states or []) + [_FieldState() for _ in range(n - len(states or []))]
            self.fields[shape] = states
        return states

    def _push(self, id_: int) -> None:
        self.ring[self.head & _RING_MASK] = id_
        self.head += 1

    def _ring_rank(self, id_: int) -> int:
        """Offset of the newest occurrence of ``id_`` in the ring (mruRank), or -1."""
        k = self.head & _RING_MASK
        # Newest-first view of the ring: slots k-1 .. 0 then 127 .. k.
        newest_first = self.ring[k - 1 :: -1] + self.ring[: k - 1 : -1] if k else self.ring[::-1]
        try:
            return newest_first.index(id_)
        except ValueError:
            return -1

    def emit_state_ref(self, out: bytearray, id_: int) -> None:
        """Reference an already-interned id with the smallest form (Go emitStateRef)."""
        if self._native:
            self.sync()
        prev = self.last_id
        if prev == id_:
            out.append(_E_REPEAT)
            if self.pair_on:
                self.pair[id_] = id_
            return
        prev_valid = prev != _INVALID
        if id_ < 0x80:
            # A 2-byte E1 can't be beaten by EA or E9, so Go skips the predictor lookups.
            self._push(id_)
            out += bytes((_E_REF, id_))
        elif prev_valid and self.pair_on and self.pair.get(prev) == id_:
            self._push(id_)
            out += bytes((_E_PAIR, 0))  # top-1 predictor: rank is always 0
        else:
            rank = self._ring_rank(id_) if self.mtf_on else -1
            self._push(id_)
            if rank >= 0 and uvarint_len(rank) < uvarint_len(id_):
                out.append(_E_MTF)
                write_uvarint(out, rank)
            else:
                out.append(_E_REF)
                write_uvarint(out, id_)
        if prev_valid and self.pair_on:
            self.pair[prev] = id_
        self.last_id = id_

    # ------------------------------------------------------------- shapes
    def shape_id(self, key: tuple[str, ...]) -> tuple[int, bool]:
        """Return ``(id, is_new)`` for a map shape (ordered key tuple); ids start at 1.

        A new shape gets the next id at declaration time, before its keys and
        values are written, exactly as Go's ``shapeDeclareEnc`` (so shapes
        nested in the values get later ids, as on the decoder).
        """
        if self._native:
            self.sync()
        id_ = self.shapes.get(key)
        if id_ is not None:
            return id_, False
        self.shape_count += 1
        self.shapes[key] = self.shape_count
        return self.shape_count, True

    def declare_shape(self) -> int:
        """Reserve the next shape id without binding it to a key tuple (self-contained declarations)."""
        if self._native:
            self.sync()
        self.shape_count += 1
        return self.shape_count


class DenseReader:
    """Decoder-side mirror of :class:`DenseWriter` (Go ``decState``).

    The state lives in one of two forms. The Python form (lists, dicts, an
    OrderedDict for the LRU chain) serves :meth:`read_str`, one value at a time.
    The array form (:class:`_DenseArrays`) serves :meth:`scan_values`, the Numba
    kernel that reads a whole column of per-value strings. Each switches to its
    form on entry, converting only when the other form was last in use, so a run
    of per-value columns converts once. ``values`` may hold ``None`` for ids the
    kernel interned: their bytes are in the array form's slab (:meth:`value`).
    """

    __slots__ = (
        "values",
        "kinds",
        "strs",
        "last_id",
        "ring",
        "head",
        "pair",
        "lru",
        "shapes",
        "last_bin",
        "_arrs",
        "_native",
        "fields",
        "_fnative",
    )

    def __init__(self) -> None:
        self.values: list[bytes | None] = []  # intern id -> raw bytes (None: in the slab, see value())
        self.kinds = bytearray()  # intern id -> 1 if registered by E2 (bytes), 0 for E0 (str)
        self.strs: list[str | None] = []  # lazily decoded UTF-8 per id
        self.last_id = _INVALID
        self.ring = [_EMPTY] * RING_SIZE
        self.head = 0
        self.pair: dict[int, int] = {}
        # Recency order of ids (most recent last); only read for E9 ranks past the ring.
        self.lru: OrderedDict[int, None] = OrderedDict()
        self.shapes: list[tuple[str, ...]] = []  # shape id - 1 -> key names
        #: After :meth:`read_str`: whether the value read is a byte string (bin tag or E2-registered id).
        self.last_bin = False
        self._arrs: _DenseArrays | None = None
        self._native = False  # True while the array form holds the current state
        #: tagStrDelta bases per map shape: shape id -> previous string value of each field.
        self.fields: dict[int, list[bytes | None]] = {}
        #: True while the array form holds the shapes and the field bases (qdf_columnar.wire.fast_dec);
        #: independent of ``_native`` (which covers the string state only).
        self._fnative = False

    def value(self, id_: int) -> bytes:
        """The bytes of intern id ``id_`` (materialised from the slab on first use)."""
        v = self.values[id_]
        if v is None:
            a = self._arrs
            v = self.values[id_] = a.slab[a.toff[id_] : a.toff[id_ + 1]].tobytes()
        return v

    def _push(self, id_: int) -> None:
        self.ring[self.head & _RING_MASK] = id_
        self.head += 1

    def _touch(self, id_: int) -> None:
        """lruMoveToFront: recency update plus a ring push."""
        self.lru.move_to_end(id_)
        self._push(id_)

    def _inline(self, r: ByteReader, n: int, binary: bool) -> bytes:
        start = r.pos
        if n > r.end - start:
            raise r.truncated("a string body", n)
        r.pos = start + n
        data = bytes(r.buf[start : start + n])
        self.last_id = _INVALID
        self.last_bin = binary
        return data

    def _ref(self, r: ByteReader, id_: int, start: int) -> bytes:
        if id_ >= len(self.values):
            raise CorruptDataError(f"unknown Dense state id {id_} ({len(self.values)} interned)", offset=start)
        self._touch(id_)
        if self.last_id != _INVALID:
            self.pair[self.last_id] = id_
        self.last_id = id_
        self.last_bin = bool(self.kinds[id_])
        v = self.values[id_]
        return v if v is not None else self.value(id_)

    def read_str(self, r: ByteReader, tag: int) -> bytes | None:
        """Read the payload of a string-ish value whose ``tag`` was already consumed.

        Returns the raw bytes (:attr:`last_bin` tells str from bytes), or None if
        ``tag`` is not a string / bin / Dense state tag (nothing is consumed then).
        """
        if self._native:
            self._to_python()
        if _FIXSTR <= tag <= _FIXSTR + 31:
            return self._inline(r, tag & 0x1F, False)
        if tag == _E_REPEAT:
            if self.last_id == _INVALID:
                raise CorruptDataError("repeat reference (E8) with no previous state id", offset=r.pos - 1)
            id_ = self.last_id
            self.pair[id_] = id_
            self.last_bin = bool(self.kinds[id_])
            v = self.values[id_]
            return v if v is not None else self.value(id_)
        if tag == _E_REF:
            start = r.pos - 1
            id_ = r.uvarint("a state id")
            return self._ref(r, id_, start)
        if tag == _E_INTERN_STR or tag == _E_INTERN_BIN:
            start = r.pos - 1
            n = r.uvarint("an interned string length")
            data = r.take_bytes(n, "an interned string body")
            if len(self.values) >= MAX_DECODE_ENTRIES:
                raise CorruptDataError(f"more than {MAX_DECODE_ENTRIES - 1} interned strings", offset=start)
            id_ = len(self.values)
            self.values.append(data)
            binary = tag == _E_INTERN_BIN
            self.kinds.append(binary)
            self.strs.append(None)
            self.lru[id_] = None  # lruAddFresh: new head
            self._push(id_)
            if self.last_id != _INVALID:
                self.pair[self.last_id] = id_
            self.last_id = id_
            self.last_bin = binary
            return data
        if tag == _E_MTF:
            start = r.pos - 1
            rank = r.uvarint("an MTF rank")
            id_ = _EMPTY
            if rank < RING_SIZE:
                id_ = self.ring[(self.head - 1 - rank) & _RING_MASK]
            if id_ == _EMPTY:
                # lruIDAtRank fallback (ranks the encoder never writes, accepted by Go).
                if rank < len(self.lru):
                    id_ = next(islice(reversed(self.lru), rank, None))
                if id_ == _EMPTY:
                    raise CorruptDataError(f"MTF rank {rank} does not name a state id", offset=start)
            return self._ref(r, id_, start)
        if tag == _E_PAIR:
            start = r.pos - 1
            rank = r.uvarint("a pair-predictor rank")
            prev = self.last_id
            if prev == _INVALID:
                raise CorruptDataError("pair reference (EA) with no previous state id", offset=start)
            if rank != 0:
                raise CorruptDataError(f"pair-predictor rank {rank} (only 0 is valid)", offset=start)
            id_ = self.pair.get(prev, _EMPTY)
            if id_ == _EMPTY:
                raise CorruptDataError(f"pair reference with no recorded successor of id {prev}", offset=start)
            return self._ref(r, id_, start)
        if tag == _STR8 or tag == _BIN8:
            return self._inline(r, r.u8("a str8 length"), tag == _BIN8)
        if tag == _STR16 or tag == _BIN16:
            return self._inline(r, r.u16("a str16 length"), tag == _BIN16)
        if tag == _STR32 or tag == _BIN32:
            return self._inline(r, r.u32("a str32 length"), tag == _BIN32)
        return None

    def read_delta(self, r: ByteReader, base: bytes | None) -> bytes:
        """Read a tagStrDelta payload (tag consumed) against the field's previous value.

        The value is ``base[:prefix] + suffix``; it is not interned and, like an
        inline string, drops ``last_id``.
        """
        start = r.pos - 1
        p = r.uvarint("a string-delta prefix length")
        m = r.uvarint("a string-delta suffix length")
        if base is None:
            base = b""
        if p > len(base):
            raise CorruptDataError(
                f"string delta keeps {p} bytes of a previous value of {len(base)} bytes", column=r.column, offset=start
            )
        if self._native:
            self._to_python()
        data = base[:p] + r.take_bytes(m, "a string-delta suffix")
        self.last_id = _INVALID
        self.last_bin = False
        return data

    def field_bases(self, shape: int, n: int) -> list[bytes | None]:
        """The tagStrDelta bases of map shape ``shape`` (``n`` fields), keyed by wire position."""
        if self._fnative:
            self._fields_to_python()
        bases = self.fields.get(shape)
        if bases is None or len(bases) < n:
            bases = (bases or []) + [None] * (n - len(bases or []))
            self.fields[shape] = bases
        return bases

    # ------------------------------------------------------- the kernel path
    def scan_values(self, buf: np.ndarray, pos: int, end: int, n: int, starts: np.ndarray,
                    lens: np.ndarray) -> tuple[int, int, int]:
        """Read up to ``n`` per-value strings from ``buf[pos:end]`` with the Numba kernel.

        Fills ``starts`` / ``lens`` (int64, n) as :func:`qdf_kernels.dense_strings.dense_scan_into`
        does (start < 0: ``-(offset in slab) - 1``). Returns ``(rows read, position after
        them, total bytes)``. Fewer than ``n`` rows means the next row is left to
        :meth:`read_str` (which raises for anything malformed); the state is then exactly
        as after the rows read.
        """
        a = self._to_arrays(n, end - pos)
        st = a.st
        st[dk.S_POS] = pos
        st[dk.S_ROW] = 0
        st[dk.S_TOTAL] = 0
        end64 = np.int64(end)
        n64 = np.int64(n)
        while True:
            status = dk.dense_scan_into(buf, end64, n64, a.toff, a.slab, a.kinds, a.pair, a.stamp, a.owner,
                                        a.bcnt, a.ring, st, starts, lens)
            if status != dk.NEED_SLAB:
                break
            a.grow_slab(int(st[dk.S_NEED]))
            st = a.st  # the growth laid the arrays out again
        a.nslab = int(st[dk.S_NIDS])
        return int(st[dk.S_ROW]), int(st[dk.S_POS]), int(st[dk.S_TOTAL])

    @property
    def slab(self) -> np.ndarray:
        """The intern table's bytes (what negative starts from :meth:`scan_values` index)."""
        return self._arrs.slab

    def _to_arrays(self, n_more: int, bytes_left: int) -> _DenseArrays:
        """Switch to the array form, with room for ``n_more`` new ids and some slab bytes."""
        a = self._arrs
        if a is None:
            a = self._arrs = _DenseArrays()
        nids = len(self.values) if not self._native else int(a.st[dk.S_NIDS])
        a.reserve_ids(min(nids + n_more, MAX_DECODE_ENTRIES) + 1)
        if not self._native:
            a.load(self)
            self._native = True
        a.reserve_slab(int(a.st[dk.S_USED]) + min(bytes_left, 1 << 16))
        return a

    def _to_python(self) -> None:
        """Switch back to the Python form (after the kernel ran)."""
        self._arrs.store(self)
        self._native = False

    def state(self) -> tuple:
        """The whole string state as plain values (tests compare the two decode paths with it)."""
        if self._native:
            self._to_python()
        return (
            [self.value(i) for i in range(len(self.values))],
            bytes(self.kinds),
            self.last_id,
            list(self.ring),
            self.head,
            dict(self.pair),
            list(self.lru),
            bool(self.last_bin),
        )

    def text(self, data: bytes, r: ByteReader, start: int) -> str:
        """UTF-8 decode of the value :meth:`read_str` just returned (cached per intern id)."""
        if self._native:
            self._to_python()
        id_ = self.last_id
        if id_ != _INVALID:
            s = self.strs[id_]
            if s is not None:
                return s
        try:
            s = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptDataError(f"string is not valid UTF-8 ({exc.reason})", column=r.column, offset=start) from None
        if id_ != _INVALID:
            self.strs[id_] = s
        return s

    # ------------------------------------------------------------- shapes
    def declare_shape(self, names: tuple[str, ...]) -> int:
        """Register a declared shape; returns its id (1-based)."""
        if self._fnative:
            self._fields_to_python()
        self.shapes.append(names)
        return len(self.shapes)

    def shape(self, id_: int, offset: int | None = None) -> tuple[str, ...]:
        if self._fnative:
            self._fields_to_python()
        if id_ == 0 or id_ > len(self.shapes):
            raise CorruptDataError(f"unknown map shape id {id_} ({len(self.shapes)} declared)", offset=offset)
        return self.shapes[id_ - 1]

    def shape_state(self) -> tuple[list[tuple[str, ...]], dict[int, list[bytes | None]]]:
        """Copies of the shapes and the per-field string-delta bases (Python form)."""
        if self._fnative:
            self._fields_to_python()
        return list(self.shapes), {k: list(v) for k, v in self.fields.items()}

    def _sync_shapes(self, a: _DenseArrays) -> None:
        """Shapes are append-only: copy the ones declared in one form to the other, O(new shapes)."""
        n_arr = int(a.st[td.T_NSH])
        n_py = len(self.shapes)
        if n_py > n_arr:
            a.add_shapes(self.shapes[n_arr:])
        elif n_arr > n_py:
            self.shapes.extend(a.read_shapes(n_py + 1, n_arr + 1))

    def _fields_to_python(self) -> None:
        """Shapes and field bases: array form -> Python form (O(shapes + fields))."""
        a = self._arrs
        self._sync_shapes(a)
        self.fields = a.read_fields()
        self._fnative = False

    def _fields_to_arrays(self) -> _DenseArrays:
        """Shapes and field bases: Python form -> array form (O(shapes + fields))."""
        a = self._arrs
        if a is None:
            a = self._arrs = _DenseArrays()
        if not self._fnative:
            self._sync_shapes(a)
            a.write_fields(self.fields)
            self._fnative = True
        return a


class _DenseArrays:
    """The array form of a :class:`DenseReader`'s string state (see qdf_kernels.dense_strings).

    The slab and its offsets are append-only and stay valid in both forms: ids below
    ``nslab`` have their bytes here, so the Python form keeps ``None`` for them until
    read. The other arrays are current only while the reader is in the array form, and
    only their first ``nids`` entries (``clock`` for ``owner``) mean anything: loading
    and storing cost O(ids), never O(capacity).
    """

    __slots__ = ("toff", "slab", "kinds", "pair", "stamp", "owner", "bcnt", "ring", "st", "nslab",
                 "mst", "midx", "ivf", "shp", "fld", "fkm", "ktab", "stk", "heap", "out", "outmv", "args", "I", "U")

    # All the arrays are views into two backing arrays, ``I`` (int64) and ``U`` (uint8), laid
    # out by :func:`qdf_kernels.transcode_dec.layout`: the transcode kernel takes just
    # ``(I, U)`` (each array argument costs ~90 ns a call). Growing any region lays both out
    # again (regions copied) and rebinds every view, so callers re-read the attributes after
    # a growth (``dense_scan_into`` gets the views as before).

    def __init__(self) -> None:
        cap = 64
        osz = _owner_size(cap)
        self._relayout(td.layout(cap, osz, _block_slots(osz), 1 << 12, 16, 16, 1 << 12, 1 << 12, 64))
        self.st[dk.S_LAST] = _EMPTY
        self.st[dk.S_MAXIDS] = MAX_DECODE_ENTRIES
        self.nslab = 0

    def _relayout(self, iu: tuple[np.ndarray, np.ndarray]) -> None:
        self.I, self.U = iu
        for name, v in td.views(self.I, self.U).items():
            setattr(self, name, v)
        self.outmv = memoryview(self.out)
        self.args = iu  # the transcode kernel's array arguments

    def _grow(self, cap: int | None = None, slab: int | None = None, shp: int | None = None,
              fld: int | None = None, heap: int | None = None, out: int | None = None,
              stk: int | None = None) -> None:
        cap = cap or len(self.kinds)
        osz = _owner_size(cap) if cap != len(self.kinds) else len(self.owner)
        self._relayout(td.layout(cap, osz, _block_slots(osz), slab or len(self.slab), shp or len(self.shp),
                                 fld or len(self.fld), heap or len(self.heap), out or len(self.out),
                                 stk or len(self.stk), self.I, self.U))

    def reserve_ids(self, need: int) -> None:
        cap = len(self.kinds)
        if need <= cap:
            return
        self._grow(cap=max(need, 2 * cap))

    def reserve_slab(self, need: int) -> None:
        if need > len(self.slab):
            self.grow_slab(need)

    def grow_slab(self, need: int) -> None:
        self._grow(slab=max(need, 2 * len(self.slab)))

    def load(self, d: DenseReader) -> None:
        """Python form -> arrays (the id arrays already have room for every id)."""
        nids = len(d.values)
        st = self.st
        if self.nslab < nids:  # ids the Python reader interned since the slab was last synced
            new = d.values[self.nslab :]
            blob = b"".join(new)
            used = int(st[dk.S_USED])
            self.reserve_slab(used + len(blob))
            st = self.st  # (a growth lays the arrays out again)
            self.slab[used : used + len(blob)] = np.frombuffer(blob, np.uint8)
            ends = np.fromiter((len(v) for v in new), np.int64, count=len(new))
            np.cumsum(ends, out=ends)
            self.toff[self.nslab + 1 : nids + 1] = used + ends
            st[dk.S_USED] = used + len(blob)
            self.nslab = nids
        self.kinds[:nids] = np.frombuffer(d.kinds, np.uint8, count=nids)
        self.pair[:nids] = -1
        if d.pair:
            self.pair[np.fromiter(d.pair.keys(), np.int64, len(d.pair))] = np.fromiter(d.pair.values(), np.int64,
                                                                                     len(d.pair))
        k = len(d.lru)  # recency order, oldest first: stamps 0..k-1
        order = np.fromiter(d.lru, np.int64, k)
        self.stamp[order] = np.arange(k, dtype=np.int64)
        self.owner[:k] = order
        nb = _blocks(k)
        self.bcnt[:nb] = 1 << dk.BLOCK_SHIFT
        if k & ((1 << dk.BLOCK_SHIFT) - 1):
            self.bcnt[nb - 1] = k & ((1 << dk.BLOCK_SHIFT) - 1)
        self.bcnt[nb : _blocks(int(st[dk.S_CLOCK])) + 1] = 0
        st[dk.S_COUNT] = k
        st[dk.S_CLOCK] = k
        self.ring[:] = d.ring
        st[dk.S_NIDS] = nids
        st[dk.S_LAST] = d.last_id
        st[dk.S_HEAD] = d.head
        st[dk.S_BIN] = int(d.last_bin)

    def store(self, d: DenseReader) -> None:
        """Arrays -> Python form."""
        st = self.st
        nids = int(st[dk.S_NIDS])
        old = len(d.values)
        if nids > old:
            d.values.extend([None] * (nids - old))
            d.strs.extend([None] * (nids - old))
            d.kinds += self.kinds[old:nids].tobytes()
        hit = np.flatnonzero(self.pair[:nids] >= 0)
        d.pair = dict(zip(hit.tolist(), self.pair[hit].tolist()))
        owners = self.owner[: int(st[dk.S_CLOCK])]
        d.lru = OrderedDict.fromkeys(owners[owners >= 0].tolist())
        d.ring = self.ring.tolist()
        d.last_id = int(st[dk.S_LAST])
        d.head = int(st[dk.S_HEAD])
        d.last_bin = bool(st[dk.S_BIN])
        self.nslab = nids  # every id the kernels interned has its bytes in the slab

    # ---------------------------------------------- transcode_dec: shapes and field bases
    def kernel_args(self) -> tuple:
        """The array arguments of :func:`qdf_kernels.transcode_dec.transcode` after ``validate_only``."""
        return self.args

    def grow_for(self, st: np.ndarray) -> None:
        """Grow what a NEED status asked for (``st[T_NEED_*]``), then clear the requests."""
        kw: dict[str, int] = {}
        need = int(st[td.T_NEED_OUT])
        if need > len(self.out):
            kw["out"] = max(need, 2 * len(self.out))
        need = int(st[td.T_NEED_IDS])
        if need:
            need = min(need, MAX_DECODE_ENTRIES) + 1
            if need > len(self.kinds):
                kw["cap"] = max(need, 2 * len(self.kinds))
        need = int(st[td.T_NEED_SLAB])
        if need > len(self.slab):
            kw["slab"] = max(need, 2 * len(self.slab))
        need = int(st[td.T_NEED_SHP])
        if need > len(self.shp):
            kw["shp"] = max(need, 2 * len(self.shp))
        need = int(st[td.T_NEED_FLD])
        if need > len(self.fld):
            kw["fld"] = max(need, 2 * len(self.fld))
        need = int(st[td.T_NEED_HEAP])
        if need > len(self.heap):
            kw["heap"] = max(need, 2 * len(self.heap))
        need = int(st[td.T_NEED_STK])
        if need > len(self.stk):
            kw["stk"] = max(need, 2 * len(self.stk))
        st[td.T_NEED_OUT : td.T_NEED_HEAP + 1] = 0
        st[td.T_NEED_STK] = 0
        if kw:
            self._grow(**kw)

    def reserve_shapes(self, rows: int) -> None:
        if rows > len(self.shp):
            self._grow(shp=max(rows, 2 * len(self.shp)))

    def reserve_fields(self, rows: int) -> None:
        if rows > len(self.fld):
            self._grow(fld=max(rows, 2 * len(self.fld)))

    def reserve_heap(self, need: int) -> None:
        if need > len(self.heap):
            self._grow(heap=max(need, 2 * len(self.heap)))

    def _heap_put(self, data: bytes) -> int:
        """Append ``data`` to the heap; returns its offset."""
        h = int(self.st[td.T_HEAP])
        self.reserve_heap(h + len(data))
        if data:
            self.heap[h : h + len(data)] = np.frombuffer(data, np.uint8)
        self.st[td.T_HEAP] = h + len(data)
        return h

    def add_shapes(self, shapes: list[tuple[str, ...]]) -> None:
        """Append shapes declared in the Python form (keys stored as msgpack strings)."""
        for keys in shapes:
            blob = bytearray()
            for k in keys:
                b = k.encode("utf-8", "surrogatepass")
                n = len(b)
                if n <= 31:
                    blob.append(0xA0 | n)
                elif n <= 0xFF:
                    blob += bytes((0xD9, n))
                elif n <= 0xFFFF:
                    blob.append(0xDA)
                    blob += n.to_bytes(2, "big")
                else:
                    blob.append(0xDB)
                    blob += n.to_bytes(4, "big")
                blob += b
            sid = int(self.st[td.T_NSH]) + 1
            self.reserve_shapes(sid + 1)
            h = self._heap_put(bytes(blob))
            fb = int(self.st[td.T_NFLD])
            self.reserve_fields(fb + len(keys))
            self.fld[fb : fb + len(keys)] = (0, -1, 0, 0, 0)
            self.fkm[fb : fb + len(keys)] = 0
            self.shp[sid] = (h, h + len(blob), len(keys), fb, 0)
            self.st[td.T_NFLD] = fb + len(keys)
            self.st[td.T_NSH] = sid

    def read_shapes(self, lo: int, hi: int) -> list[tuple[str, ...]]:
        """The key tuples of shape ids ``lo .. hi-1`` (declared by the kernel)."""
        heap = self.heap
        out = []
        for sid in range(lo, hi):
            p, end, n = (int(x) for x in self.shp[sid, :3])
            raw = heap[p:end].tobytes()
            keys = []
            q = 0
            for _ in range(n):
                b = raw[q]
                if b <= 0xBF:
                    ln, q = b & 0x1F, q + 1
                elif b == 0xD9:
                    ln, q = raw[q + 1], q + 2
                elif b == 0xDA:
                    ln, q = int.from_bytes(raw[q + 1 : q + 3], "big"), q + 3
                else:
                    ln, q = int.from_bytes(raw[q + 1 : q + 5], "big"), q + 5
                keys.append(raw[q : q + ln].decode("utf-8", "surrogateescape"))
                q += ln
            out.append(tuple(keys))
        return out

    def read_fields(self) -> dict[int, list[bytes | None]]:
        """The field bases as the Python form keeps them (only shapes whose values were read)."""
        out: dict[int, list[bytes | None]] = {}
        shp, fld, heap, slab, toff = self.shp, self.fld, self.heap, self.slab, self.toff
        for sid in range(1, int(self.st[td.T_NSH]) + 1):
            if not shp[sid, 4]:
                continue
            n, fb = int(shp[sid, 2]), int(shp[sid, 3])
            bases: list[bytes | None] = []
            for j in range(fb, fb + n):
                kind = fld[j, 0]
                if kind == 1:
                    bases.append(heap[fld[j, 2] : fld[j, 2] + fld[j, 3]].tobytes())
                elif kind == 2:
                    i = int(fld[j, 1])
                    bases.append(slab[toff[i] : toff[i + 1]].tobytes())
                else:
                    bases.append(None)
            out[sid] = bases
        return out

    def write_fields(self, fields: dict[int, list[bytes | None]]) -> None:
        """Python-form field bases -> arrays (regions are reused when large enough)."""
        st = self.st
        mx = int(st[td.T_MAXLEN])
        for sid in range(1, int(st[td.T_NSH]) + 1):
            bases = fields.get(sid)
            self.shp[sid, 4] = bases is not None
            n, fb = int(self.shp[sid, 2]), int(self.shp[sid, 3])
            for i in range(n):
                j = fb + i
                b = bases[i] if bases is not None and i < len(bases) else None
                if b is None:
                    self.fld[j, 0] = 0
                    continue
                if self.fld[j, 4] < len(b):
                    cap = max(2 * len(b), 16)
                    h = int(st[td.T_HEAP])
                    self.reserve_heap(h + cap)  # may lay the arrays out again: no local views
                    st = self.st
                    st[td.T_HEAP] = h + cap
                    self.fld[j, 2] = h
                    self.fld[j, 4] = cap
                fld = self.fld
                h = int(fld[j, 2])
                if b:
                    self.heap[h : h + len(b)] = np.frombuffer(b, np.uint8)
                fld[j, 0] = 1
                fld[j, 3] = len(b)
                mx = max(mx, len(b))
        st[td.T_MAXLEN] = mx

    def python_maxlen(self, d: DenseReader) -> None:
        """Raise ``T_MAXLEN`` over ids interned since it was last computed and over the
        Python form's field bases (before a validate pass on a Python-form reader)."""
        st = self.st
        nids = int(st[dk.S_NIDS]) if d._native else len(d.values)
        lo = int(st[td.T_MLIDS])
        mx = int(st[td.T_MAXLEN])
        if lo < nids:
            hi = nids if d._native else min(nids, self.nslab)
            if lo < hi:
                mx = max(mx, int(np.diff(self.toff[lo : hi + 1]).max()))
            if not d._native:
                for v in d.values[max(lo, self.nslab) :]:
                    if v is not None:
                        mx = max(mx, len(v))
            st[td.T_MLIDS] = nids
        if not d._fnative:
            for bases in d.fields.values():
                for b in bases:
                    if b is not None and len(b) > mx:
                        mx = len(b)
        st[td.T_MAXLEN] = mx


def _owner_size(cap_ids: int) -> int:
    """LRU stamps for ``cap_ids`` ids: at least as many again free, so renumbering is amortised O(1)."""
    return 2 * cap_ids + (1 << dk.BLOCK_SHIFT)


def _blocks(stamps: int) -> int:
    """Blocks holding stamps 0 .. stamps-1."""
    return (stamps + (1 << dk.BLOCK_SHIFT) - 1) >> dk.BLOCK_SHIFT


def _block_slots(owner_size: int) -> int:
    """Length of ``bcnt`` for ``owner_size`` stamps (the kernel may touch block owner_size >> 8)."""
    return (owner_size >> dk.BLOCK_SHIFT) + 1
