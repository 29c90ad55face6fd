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
    """Decoder-side mirror of :class:`DenseWriter` (Go ``decState``)."""

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
    )

    def __init__(self) -> None:
        self.values: list[bytes] = []  # intern id -> raw bytes
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
        return self.values[id_]

    def read_str(self, r: ByteReader, tag: int) -> bytes | None:
        """Read the payload of a string-ish value whose ``tag`` was already consumed.

        Returns the raw bytes (:attr:`last_bin` tells str from bytes), or None if
        ``tag`` is not a string / bin / Dense state tag (nothing is consumed then).
        """
        if _FIXSTR <= tag <= _FIXSTR + 31:
            return self._inline(r, tag & 0x1F, False)
        if tag == _E_REPEAT:
            if self.last_id == _INVALID:
                raise CorruptDataError("repeat reference (E8) with no previous state id", offset=r.pos - 1)
            id_ = self.last_id
            self.pair[id_] = id_
            self.last_bin = bool(self.kinds[id_])
            return self.values[id_]
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
                    for i, cand in enumerate(reversed(self.lru)):
                        if i == rank:
                            id_ = cand
                            break
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

    def text(self, data: bytes, r: ByteReader, start: int) -> str:
        """UTF-8 decode of the value :meth:`read_str` just returned (cached per intern id)."""
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
