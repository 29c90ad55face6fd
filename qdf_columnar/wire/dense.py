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

from collections import OrderedDict
from itertools import islice

import numpy as np
from qdf_kernels import dense_strings as dk

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
    )

    def __init__(self, opts: Options) -> None:
        opts = Options(opts)
        self.dense = bool(opts & Options.DENSE)
        self.pair_on = bool(opts & Options.PAIR_PRED)
        self.mtf_on = bool(opts & Options.MTF)
        self.min_intern = MIN_INTERN
        self.max_entries = MAX_STATE_ENTRIES
        self.table: dict[bytes, int] = {}  # intern key (raw bytes) -> id
        self.last_id = _INVALID
        self.ring = [_EMPTY] * RING_SIZE  # mruRing
        self.head = 0  # mruHead (monotonic; slot = head & mask)
        self.pair: dict[int, int] = {}  # prev id -> most recent successor id (top-1 predictor)
        self.shapes: dict[tuple[str, ...], int] = {}
        self.shape_count = 0

    # ------------------------------------------------------------ strings
    def write_str(self, out: bytearray, data: bytes, *, binary: bool = False) -> None:
        """Write ``data`` as a string (or ``bytes`` when ``binary``) value: Go WriteString / WriteBytes."""
        if type(data) is not bytes:
            data = bytes(data)  # the intern table needs a hashable key
        if self.dense and len(data) >= self.min_intern and len(self.table) < self.max_entries:
            table = self.table
            id_ = table.get(data)
            if id_ is not None:
                self.emit_state_ref(out, id_)
                return
            id_ = len(table)
            table[data] = id_
            out.append(_E_INTERN_BIN if binary else _E_INTERN_STR)
            write_uvarint(out, len(data))
            out += data
            self._push(id_)  # installInternSlot -> lruAddFresh -> mruPush
            if self.last_id != _INVALID and self.pair_on:
                self.pair[self.last_id] = id_
            self.last_id = id_
            return
        if self.dense:
            # The decoder drops lastID on every inline read; stay in step with it.
            self.last_id = _INVALID
        if binary:
            write_inline_bin(out, data)
        else:
            write_inline_str(out, data)

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
        id_ = self.shapes.get(key)
        if id_ is not None:
            return id_, False
        self.shape_count += 1
        self.shapes[key] = self.shape_count
        return self.shape_count, True

    def declare_shape(self) -> int:
        """Reserve the next shape id without binding it to a key tuple (self-contained declarations)."""
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
        data = r.take_bytes(n, "a string body")
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
        self.shapes.append(names)
        return len(self.shapes)

    def shape(self, id_: int, offset: int | None = None) -> tuple[str, ...]:
        if id_ == 0 or id_ > len(self.shapes):
            raise CorruptDataError(f"unknown map shape id {id_} ({len(self.shapes)} declared)", offset=offset)
        return self.shapes[id_ - 1]


class _DenseArrays:
    """The array form of a :class:`DenseReader`'s string state (see qdf_kernels.dense_strings).

    The slab and its offsets are append-only and stay valid in both forms: ids below
    ``nslab`` have their bytes here, so the Python form keeps ``None`` for them until
    read. The other arrays are current only while the reader is in the array form, and
    only their first ``nids`` entries (``clock`` for ``owner``) mean anything: loading
    and storing cost O(ids), never O(capacity).
    """

    __slots__ = ("toff", "slab", "kinds", "pair", "stamp", "owner", "bcnt", "ring", "st", "nslab")

    def __init__(self) -> None:
        cap = 64
        self.toff = np.zeros(cap + 1, np.int64)
        self.slab = np.empty(1 << 12, np.uint8)
        self.kinds = np.zeros(cap, np.uint8)
        self.pair = np.full(cap, -1, np.int64)
        self.stamp = np.zeros(cap, np.int64)
        self.owner = np.full(_owner_size(cap), -1, np.int64)
        self.bcnt = np.zeros(_block_slots(len(self.owner)), np.int64)
        self.ring = np.full(RING_SIZE, _EMPTY, np.int64)
        self.st = np.zeros(dk.S_LEN, np.int64)
        self.st[dk.S_MAXIDS] = MAX_DECODE_ENTRIES
        self.nslab = 0

    def reserve_ids(self, need: int) -> None:
        cap = len(self.kinds)
        if need <= cap:
            return
        cap = max(need, 2 * cap)

        def grow(arr: np.ndarray, size: int, keep: int) -> np.ndarray:
            out = np.empty(size, arr.dtype)
            out[:keep] = arr[:keep]
            return out

        nids = int(self.st[dk.S_NIDS])
        self.toff = grow(self.toff, cap + 1, len(self.toff))
        self.kinds = grow(self.kinds, cap, nids)
        self.pair = grow(self.pair, cap, nids)
        self.stamp = grow(self.stamp, cap, nids)
        clock = int(self.st[dk.S_CLOCK])
        self.owner = grow(self.owner, _owner_size(cap), clock)
        self.bcnt = np.zeros(_block_slots(len(self.owner)), np.int64)
        self.bcnt[: _blocks(clock)] = np.bincount(np.flatnonzero(self.owner[:clock] >= 0) >> dk.BLOCK_SHIFT,
                                                   minlength=_blocks(clock))[: _blocks(clock)]

    def reserve_slab(self, need: int) -> None:
        if need > len(self.slab):
            self.grow_slab(need)

    def grow_slab(self, need: int) -> None:
        out = np.empty(max(need, 2 * len(self.slab)), np.uint8)
        used = int(self.st[dk.S_USED])
        out[:used] = self.slab[:used]
        self.slab = out

    def load(self, d: DenseReader) -> None:
        """Python form -> arrays (the id arrays already have room for every id)."""
        nids = len(d.values)
        st = self.st
        if self.nslab < nids:  # ids the Python reader interned since the slab was last synced
            new = d.values[self.nslab :]
            blob = b"".join(new)
            used = int(st[dk.S_USED])
            self.reserve_slab(used + len(blob))
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


def _owner_size(cap_ids: int) -> int:
    """LRU stamps for ``cap_ids`` ids: at least as many again free, so renumbering is amortised O(1)."""
    return 2 * cap_ids + (1 << dk.BLOCK_SHIFT)


def _blocks(stamps: int) -> int:
    """Blocks holding stamps 0 .. stamps-1."""
    return (stamps + (1 << dk.BLOCK_SHIFT) - 1) >> dk.BLOCK_SHIFT


def _block_slots(owner_size: int) -> int:
    """Length of ``bcnt`` for ``owner_size`` stamps (the kernel may touch block owner_size >> 8)."""
    return (owner_size >> dk.BLOCK_SHIFT) + 1
