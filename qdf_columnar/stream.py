"""qdf v1 streams: one 5-byte header, then length-prefixed messages sharing Dense state.

Wire layout (qdf-wire-v1.md §2.9)::

    51 44 46 01 <flags>                  once
    uvarint(len) <body of len bytes>     per message, no per-message header

The intern table, map shapes, predictors and per-field string bases live in one
:class:`~qdf_columnar.wire.session.EncodeSession` / ``DecodeSession`` for the whole
stream, so a string or key set repeated in a later message costs a reference instead
of its bytes. Streams never use the entropy pass (FlagRANS) or a column index
(FlagColIndex). Frames are capped (2 GiB - 1 by default, ``max_frame=`` lowers it).

:class:`StreamWriter` writes one message per :meth:`~StreamWriter.write` (any value
``dumps`` accepts) or :meth:`~StreamWriter.write_batch` (a record batch as a columnar
container). :class:`StreamReader` reads from bytes, a path or any binary file-like
with ``read(n)`` (short reads are fine), buffering in chunks and never allocating a
declared frame length before those bytes have actually arrived. User docs:
docs/STREAMS.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import IO, Any

from .errors import CorruptDataError, DecodeError, EncodeError, InvalidOptionError, QdfError, TruncatedError
from .format.header import read_header
from .format.tags import HEADER_SIZE, MAGIC, VERSION, Flag
from .format.varint import uvarint_len, write_uvarint
from .options import Mode, Options, header_flags, parse_mode
from .wire.session import DecodeSession, EncodeSession
from .wire.values_write import not_unicode

__all__ = ["StreamWriter", "StreamReader", "MAX_FRAME"]

#: Largest frame body either side accepts by default (the reference caps frames at 2 GiB).
MAX_FRAME = (1 << 31) - 1

#: Bytes a reader asks its source for at a time (grown geometrically inside a large frame).
CHUNK_SIZE = 1 << 16

# Room kept in front of a message body for its length prefix, so the prefix can be
# placed right before the body and the whole frame handed to file.write at once.
_PREFIX_ROOM = 10

_FORBIDDEN_FLAGS = int(Flag.RANS | Flag.COL_INDEX)
_OUTPUTS = ("pandas", "arrow", "numpy", "records")


def _check_max_frame(max_frame: int) -> int:
    if isinstance(max_frame, bool) or not isinstance(max_frame, int):
        raise InvalidOptionError(f"max_frame must be an int, not {type(max_frame).__name__}")
    if not 1 <= max_frame <= MAX_FRAME:
        raise InvalidOptionError(f"max_frame must be in 1..{MAX_FRAME} (2 GiB - 1), got {max_frame}")
    return max_frame


def _is_path(obj: object) -> bool:
    return isinstance(obj, (str, os.PathLike))


# ---------------------------------------------------------------------------------- writer


class StreamWriter:
    """Write a qdf v1 stream: the header at construction, then one frame per message.

    ``file`` is a path (opened ``"wb"``, closed by :meth:`close`) or a binary
    file-like object with ``write()`` (left open unless ``close_file=True``).
    ``mode`` is a preset name or :class:`~qdf_columnar.Options` bits; the RANS and
    COLUMN_INDEX bits are dropped because streams never use them.
    """

    def __init__(
        self,
        file: str | os.PathLike[str] | IO[bytes],
        mode: Mode = "balanced",
        *,
        max_frame: int = MAX_FRAME,
        close_file: bool | None = None,
    ) -> None:
        self._max_frame = _check_max_frame(max_frame)
        # Streams are the reference's shapes: the batch engine (Options.CASCADE) is encode()'s alone.
        self._session = EncodeSession(parse_mode(mode) & ~Options.CASCADE, stream=True)
        self._file: Any = None
        self._closed = True
        self._broken: str | None = None
        self._messages = 0
        self._bytes = 0
        if _is_path(file):
            self._file = open(file, "wb")  # owned: closed by close()
            self._owns = True if close_file is None else bool(close_file)
        elif callable(getattr(file, "write", None)):
            self._file = file
            self._owns = bool(close_file)
        else:
            raise TypeError(f"StreamWriter needs a path or a binary file-like with write(), not {type(file).__name__}")
        self._closed = False
        # The header goes out now so that an empty stream is still a valid 5-byte stream.
        flags = header_flags(self._session.opts) & ~_FORBIDDEN_FLAGS
        try:
            self._emit(memoryview(MAGIC + bytes((VERSION, flags))))
        except BaseException:
            self.close()
            raise

    # -------------------------------------------------------------------- properties
    @property
    def messages(self) -> int:
        """Number of messages written so far."""
        return self._messages

    @property
    def bytes_written(self) -> int:
        """Bytes handed to the file so far, header included."""
        return self._bytes

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def flags(self) -> int:
        """The header flags byte of this stream."""
        return header_flags(self._session.opts) & ~_FORBIDDEN_FLAGS

    # ---------------------------------------------------------------------- writing
    def write(self, obj: object) -> int:
        """Write ``obj`` (anything :func:`qdf_columnar.dumps` accepts) as one message.

        Returns the bytes the message took (length prefix + body). A value that
        cannot be encoded raises the typed error and writes nothing; the stream
        stays usable.
        """
        return self._write_message(self._session.write, obj)

    def write_batch(self, table: Any) -> int:
        """Write one record batch (DataFrame, Arrow table, dict of arrays, list of dicts) as one message.

        Balanced / compression write a columnar container, speed writes one map per
        row. Read it back with :meth:`StreamReader.batches`. Returns the bytes the
        message took.
        """
        return self._write_message(self._session.write_table, table)

    def _write_message(self, encode: Callable[[bytearray, Any], None], obj: Any) -> int:
        if self._closed or self._broken is not None:
            self._check_open()
        buf = bytearray(_PREFIX_ROOM)
        try:
            encode(buf, obj)  # atomic: on error nothing was appended and the Dense state is unchanged
        except UnicodeEncodeError as exc:  # a lone surrogate in a str
            raise not_unicode(exc) from None
        n = len(buf) - _PREFIX_ROOM
        if n > self._max_frame:
            # The body is already encoded, so the Dense state has advanced past what a
            # reader will ever see: later messages could reference entries it lacks.
            self._broken = f"a {n}-byte message exceeded max_frame={self._max_frame}"
            raise EncodeError(
                f"message body is {n} bytes, over the frame cap of {self._max_frame}; "
                "nothing was written but this writer cannot continue (its Dense state has advanced)"
            )
        if n < 0x80:  # most messages: a one-byte length prefix
            k = 1
            start = _PREFIX_ROOM - 1
            buf[start] = n
        else:
            k = uvarint_len(n)
            start = _PREFIX_ROOM - k
            prefix = bytearray()
            write_uvarint(prefix, n)
            buf[start:_PREFIX_ROOM] = prefix
        self._emit(memoryview(buf)[start:])  # one write per message, prefix and body together
        self._messages += 1
        return n + k

    def _emit(self, data: memoryview) -> None:
        try:
            written = self._file.write(data)
            # Raw (unbuffered) files may accept only part of the data.
            while written is not None and written < len(data):  # rare: buffered files take it all
                data = data[written:]
                self._bytes += written
                written = self._file.write(data)
        except BaseException as exc:
            # Part of a frame may be out: nothing after it could be read back correctly.
            self._broken = f"writing to the file failed ({type(exc).__name__}: {exc})"
            raise
        self._bytes += len(data)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("write to a closed StreamWriter")
        if self._broken is not None:
            raise EncodeError(f"this StreamWriter cannot be used any more: {self._broken}")

    # --------------------------------------------------------------------- lifecycle
    def flush(self) -> None:
        """Flush the underlying file (if it has ``flush()``)."""
        if self._closed:
            raise ValueError("flush of a closed StreamWriter")
        flush = getattr(self._file, "flush", None)
        if flush is not None:
            flush()

    def close(self) -> None:
        """Flush and, if this writer owns the file, close it. Idempotent."""
        if self._closed:
            return
        self._closed = True
        f = self._file
        try:
            flush = getattr(f, "flush", None)
            if flush is not None and not getattr(f, "closed", False):
                flush()
        finally:
            if self._owns:
                f.close()

    def __enter__(self) -> StreamWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<StreamWriter {state} messages={self._messages} bytes={self._bytes}>"


# ---------------------------------------------------------------------------------- reader


class StreamReader:
    """Read a qdf v1 stream message by message.

    ``source`` is a path (opened ``"rb"``, closed by :meth:`close`), a bytes-like
    object, or a binary file-like with ``read(n)`` (left open unless
    ``close_file=True``). The header is read and checked at construction.

    Iterating yields each message decoded like :func:`qdf_columnar.loads` (converted
    to ``type`` when given, see :mod:`qdf_columnar.wire.typed`); :meth:`batches`
    yields messages written with :meth:`StreamWriter.write_batch` as tables. Both
    advance the same stream. A frame cut off by the end of the input raises
    :class:`TruncatedError` after every complete message before it; after any decode
    error the reader refuses to continue (the Dense state is no longer trustworthy).
    """

    def __init__(
        self,
        source: str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes],
        *,
        max_frame: int = MAX_FRAME,
        type: Any = None,  # mirrors qdf.loads(buf, type=T)
        close_file: bool | None = None,
        chunk_size: int = CHUNK_SIZE,
    ) -> None:
        self._max_frame = _check_max_frame(max_frame)
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
            raise InvalidOptionError(f"chunk_size must be a positive int, got {chunk_size!r}")
        self._chunk = chunk_size
        self._convert: Callable[[object], Any] | None = None
        if type is not None:
            from .wire.typed import converter

            self._convert = converter(type)  # an unsupported type fails here, not on message 1
        self._file: Any = None
        self._owns = False
        self._closed = False
        self._failed: BaseException | None = None
        self._done = False
        self._messages = 0
        # Input: either the whole stream as one immutable bytes object (_data) or a
        # buffered file. _buf[_pos:] are bytes read but not consumed; _base is the
        # stream offset of _buf[0], so offsets in errors are stream offsets.
        self._data: bytes | None = None
        self._view: memoryview | None = None
        self._buf = bytearray()
        self._pos = 0
        self._base = 0
        self._eof = False
        if isinstance(source, bytes):
            self._data = source
        elif isinstance(source, (bytearray, memoryview)):
            # Frames are copied out one at a time (decoded values may keep views of
            # their bytes, so they must not alias a buffer the caller can still change).
            self._view = memoryview(source).cast("B")
        elif _is_path(source):
            self._file = open(source, "rb")  # owned: closed by close()
            self._owns = True if close_file is None else bool(close_file)
        elif callable(getattr(source, "read", None)):
            self._file = source
            self._owns = bool(close_file)
        else:
            raise TypeError(
                f"StreamReader needs a path, bytes or a binary file-like with read(), not {_type_name(source)}"
            )
        try:
            self._flags = self._read_stream_header()
        except BaseException:
            self.close()
            raise
        self._session = DecodeSession(self._flags)

    # -------------------------------------------------------------------- properties
    @property
    def flags(self) -> int:
        """The header flags byte of the stream."""
        return self._flags

    @property
    def messages(self) -> int:
        """Number of messages read so far."""
        return self._messages

    @property
    def offset(self) -> int:
        """Stream offset of the next frame (bytes consumed so far, header included)."""
        return self._base + self._pos

    @property
    def closed(self) -> bool:
        return self._closed

    # ------------------------------------------------------------------------ input
    def _size(self) -> int:
        """Bytes available from the current position without reading more."""
        if self._data is not None:
            return len(self._data) - self._pos
        if self._view is not None:
            return len(self._view) - self._pos
        return len(self._buf) - self._pos

    def _fill(self, need: int) -> bool:
        """Make ``need`` bytes available from the current position; False if the input ends first."""
        avail = self._size()
        if avail >= need:
            return True
        if self._file is None or self._eof:
            return False
        if self._pos:  # drop consumed bytes before growing (only ever < one frame is kept)
            del self._buf[: self._pos]
            self._base += self._pos
            self._pos = 0
        while avail < need:
            # Ask for at most max(chunk, bytes already buffered): a hostile length on a
            # short input costs at most about twice the bytes that really arrived.
            ask = max(self._chunk, min(need - avail, avail))
            chunk = self._file.read(ask)
            if chunk is None:
                raise DecodeError("the source returned None from read() (a non-blocking file?); use a blocking one")
            if not isinstance(chunk, (bytes, bytearray, memoryview)):
                raise TypeError(f"the source's read() returned {_type_name(chunk)}, not bytes (open it in 'rb' mode)")
            if not chunk:
                self._eof = True
                return False
            self._buf += chunk
            avail += len(chunk)
        return True

    def _bytes(self, start: int, end: int) -> bytes:
        """``[start, end)`` relative to the current position, as an immutable copy (or the input itself)."""
        if self._view is not None:
            return bytes(self._view[self._pos + start : self._pos + end])
        with memoryview(self._buf) as mv, mv[self._pos + start : self._pos + end] as part:
            return bytes(part)

    def _byte(self, i: int) -> int:
        if self._data is not None:
            return self._data[self._pos + i]
        if self._view is not None:
            return self._view[self._pos + i]
        return self._buf[self._pos + i]

    def _read_stream_header(self) -> int:
        self._fill(HEADER_SIZE)
        if self._size() == 0:
            # No bytes at all: an empty stream, as the reference's StreamDecoder (io.EOF
            # before any header). A writer that wrote nothing may not have written a header.
            self._done = True
            return 0
        head = self._bytes_or_data(0, min(HEADER_SIZE, self._size()))
        flags = read_header(head)  # wrong magic / version / reserved bits: its typed errors
        if flags & (Flag.RANS | Flag.COL_INDEX):
            # ErrStreamBadFlags in the reference: streams never carry either.
            raise CorruptDataError(
                f"stream header flags {flags:#04x} set FlagRANS or FlagColIndex, which streams never use", offset=4
            )
        self._pos += HEADER_SIZE
        return flags

    def _bytes_or_data(self, start: int, end: int) -> bytes:
        if self._data is not None:
            return self._data[self._pos + start : self._pos + end]
        return self._bytes(start, end)

    # ------------------------------------------------------------------------ frames
    def _next_frame(self) -> tuple[bytes, int, int, int] | None:
        """(buffer, start, end, stream offset of the body start) of the next frame; None at a clean end."""
        frame_at = self.offset
        if not self._fill(1):
            return None  # clean end: the input stops exactly between frames
        length = 0
        shift = 0
        i = 0
        while True:
            if not self._fill(i + 1):
                raise TruncatedError(f"input ends inside the length prefix of frame {self._messages}", offset=frame_at)
            b = self._byte(i)
            i += 1
            if i == 10 and b > 1:
                raise CorruptDataError("frame length prefix overflows 64 bits", offset=frame_at)
            length |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        if length == 0:
            raise CorruptDataError(
                f"frame {self._messages} has length 0 (an empty body is not a value)", offset=frame_at
            )
        if length > self._max_frame:
            raise CorruptDataError(
                f"frame {self._messages} declares {length} bytes, over the frame cap of {self._max_frame}",
                offset=frame_at,
            )
        if not self._fill(i + length):
            got = self._size() - i
            raise TruncatedError(
                f"input ends inside frame {self._messages}: it declares {length} body bytes, {got} present",
                offset=frame_at,
            )
        body_at = frame_at + i
        if self._data is not None:
            start = self._pos + i
            result = (self._data, start, start + length, body_at)
        else:
            result = (self._bytes(i, i + length), 0, length, body_at)
        self._pos += i + length
        return result

    def _decode(self, read: Callable[[bytes, int, int], Any]) -> Any:
        """Decode the next message with ``read``; raise StopIteration at a clean end."""
        if self._closed:
            raise ValueError("read from a closed StreamReader")
        if self._failed is not None:
            raise DecodeError(
                f"this StreamReader stopped after an earlier error ({self._failed}); "
                "the Dense state is no longer trustworthy"
            ) from self._failed
        if self._done:
            raise StopIteration
        index = self._messages
        try:
            frame = self._next_frame()
            if frame is None:
                self._done = True
                raise StopIteration
            buf, start, end, body_at = frame
            try:
                value = read(buf, start, end)
            except QdfError as err:
                raise _relocated(err, body_at - start, index) from err
        except StopIteration:
            raise
        except BaseException as exc:
            self._failed = exc
            raise
        self._messages += 1
        return value

    # ----------------------------------------------------------------------- reading
    def __iter__(self) -> StreamReader:
        return self

    def __next__(self) -> Any:
        data = self._data
        if data is not None and self._failed is None and not self._closed:
            # In-memory input and a frame with a one-byte length that is all there (a stream
            # of small messages): one step, without the general frame walk of _decode.
            p = self._pos
            if p < len(data):
                n = data[p]
                if 0 < n < 0x80 and p + 1 + n <= len(data) and n <= self._max_frame:
                    try:
                        value = self._session.read(data, p + 1, p + 1 + n)
                    except QdfError as err:
                        self._failed = _relocated(err, 0, self._messages)
                        raise self._failed from err
                    except BaseException as exc:
                        self._failed = exc
                        raise
                    self._pos = p + 1 + n
                    self._messages += 1
                    if self._convert is not None:
                        return self._convert(value)
                    return value
        value = self._decode(self._session.read)
        if self._convert is not None:
            # A conversion error leaves the stream usable: the message itself decoded fine.
            return self._convert(value)
        return value

    def batches(self, output: str = "pandas") -> Iterator[Any]:
        """Yield each remaining message as a table: ``output`` is "pandas", "arrow", "numpy" or "records".

        For messages written with :meth:`StreamWriter.write_batch` (a list of maps
        decodes as a table too). Advances the same stream as iteration does.
        """
        if output not in _OUTPUTS:
            raise InvalidOptionError(f"output must be one of {list(_OUTPUTS)}, got {output!r}")
        return self._batches(output)

    def _batches(self, output: str) -> Iterator[Any]:
        from .columns.outputs import convert_output

        while True:
            try:
                table = self._decode(self._session.read_table)
            except StopIteration:
                return
            yield convert_output(table, output)  # type: ignore[arg-type]

    def read_all(self, output: str = "pandas") -> Any:
        """Read every remaining message into one table (a captured feed, replayed in a notebook).

        Each message must be a record (a map: one row), a list of records, or a batch
        (:meth:`StreamWriter.write_batch`); rows keep their message order and columns
        appear in the order they are first seen (a record without a column is null
        there). Timestamps finer than microseconds, float32 bits and uint64 values
        survive (see ``qdf.decode``).
        """
        if output not in _OUTPUTS:
            raise InvalidOptionError(f"output must be one of {list(_OUTPUTS)}, got {output!r}")
        from .columns.outputs import convert_output
        from .wire.rows import rows_table, split_note

        rows: list[dict] = []
        for value in self:
            if isinstance(value, dict):
                rows.append(value)
            elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
                rows.extend(split_note(value)[0])  # a speed-mode batch's schema note is no row
            else:
                raise DecodeError(
                    f"stream message {self._messages - 1} holds a {type(value).__name__}, not a record or a list "
                    "of records; iterate the reader for arbitrary values"
                )
        return convert_output(rows_table(rows, self.offset), output)  # type: ignore[arg-type]

    # --------------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close the source if this reader opened it (or was asked to). Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._buf = bytearray()
        if self._view is not None:
            self._view.release()
            self._view = None
        if self._owns and self._file is not None:
            self._file.close()

    def __enter__(self) -> StreamReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<StreamReader {state} messages={self._messages} offset={self.offset}>"


def _type_name(obj: object) -> str:
    return type(obj).__name__


def _relocated(err: QdfError, shift: int, index: int) -> QdfError:
    """``err`` with its offset moved from the frame buffer to the stream, naming the message."""
    offset = None if err.offset is None else err.offset + shift
    try:
        new = type(err)(
            f"{err.reason} (stream message {index})", column=err.column, offset=offset, row_group=err.row_group
        )
    except Exception:  # an error class with another constructor: keep it as it is
        return err
    return new
