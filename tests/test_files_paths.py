"""Every kind of path and buffer ``write_qdf`` / ``read_qdf`` / ``QdfFile`` / ``df.to_qdf`` take.

Contract: a str, ``pathlib.Path``, ``~``-path (expanded for local paths only), fsspec
URL, binary file object (seekable or not) or ``None`` (write: the bytes are returned)
gives the same container bytes, and a path, URL, file object (seekable: ranged reads;
non-seekable: read into memory) or bytes / bytearray / memoryview read back the frame
exactly, with projections, filters, row-group pruning and ``no_copy``. A file object
receives nothing when encoding fails. ``append`` / ``storage_options`` without a path
raise ``InvalidOptionError``; a missing directory or file, a directory, a denied access
raise ``QdfIOError`` subclasses that are also the matching ``OSError`` and name the
path; an argument of no accepted kind raises ``InvalidPathError`` (a ``TypeError``).
"""

from __future__ import annotations

import doctest
import errno
import io
import os
import pickle
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fsspec
import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf
from qdf_columnar import accessor
from qdf_columnar.io import SchemaMismatchError

accessor.register()

N = 50
ROWS = 7  # row_group_size: 8 row groups


def make_frame() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    words = pd.Series([f"w{i % 6}é" for i in range(N)])
    words.iloc[::9] = None
    ints = pd.Series(rng.integers(-1000, 1000, N), dtype="Int64")
    ints.iloc[::8] = None
    floats = rng.normal(size=N)
    floats[3] = np.nan
    df = pd.DataFrame(
        {
            "i": np.arange(N, dtype=np.int64),
            "f": floats,
            "n": ints,
            "s": words,
            "sp": words.astype("string[python]"),
            "c": pd.Categorical(rng.choice(["lo", "mid", "hi"], N), categories=["hi", "mid", "lo", "unused"]),
            "t": pd.Series(pd.date_range("2024-03-30", periods=N, freq="53min", tz="Europe/Paris")),
        },
    )
    df.index = pd.Index(np.arange(N)[::-1] * 3, name="key")  # set after: the columns must not realign
    return df


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return make_frame()


@pytest.fixture(scope="module")
def blob(df: pd.DataFrame) -> bytes:
    """The reference container: what every kind of target must receive byte for byte."""
    return qdf.write_qdf(df, None, row_group_size=ROWS)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is a fresh directory and the working directory another, so a ``~`` that is not
    expanded shows up as a ``./~`` directory."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("USERPROFILE", str(h))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return h


def _memory_url(name: str = "f.qdf") -> str:
    return f"memory://qdf-paths-{uuid.uuid4().hex}/{name}"


class WriteOnly:
    """A sink with nothing but ``write`` (a socket-like stream)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)


class ShortWrites(io.RawIOBase):
    """A raw file that takes at most 1000 bytes per call (``write`` must loop)."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        take = bytes(data[:1000])
        self.buf += take
        return len(take)


class ReadOnlyStream:
    """A non-seekable reader that returns short reads (a pipe-like stream)."""

    def __init__(self, data: bytes) -> None:
        self._data, self._at = data, 0

    def read(self, size: int = -1) -> bytes:
        size = len(self._data) if size is None or size < 0 else min(size, 777)
        out = self._data[self._at:self._at + size]
        self._at += len(out)
        return out

    def seekable(self) -> bool:
        return False


class CountingBytesIO(io.BytesIO):
    """A seekable file object that counts the bytes read from it."""

    bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        out = super().read(size)
        self.bytes_read += len(out)
        return out


class BytesFsPath:
    """An os.PathLike whose ``__fspath__`` returns bytes."""

    def __init__(self, p: Path) -> None:
        self._p = os.fsencode(str(p))

    def __fspath__(self) -> bytes:
        return self._p


# ----------------------------------------------------------------------------- write: every kind of target

# name -> (tmp_path, home) -> (target, collect): collect() returns the bytes written.
WriteKind = Callable[[Path, Path], tuple[Any, Callable[[], bytes]]]


def _w_str(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    p = tmp / "w.qdf"
    return str(p), p.read_bytes


def _w_path(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    p = tmp / "w.qdf"
    return p, p.read_bytes


def _w_bytes_pathlike(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    p = tmp / "w.qdf"
    return BytesFsPath(p), p.read_bytes


def _w_tilde(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    def collect() -> bytes:
        assert not (Path.cwd() / "~").exists()  # no literal ./~ directory
        return (home / "w.qdf").read_bytes()

    return "~/w.qdf", collect


def _w_tilde_path(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    return Path("~") / "w.qdf", (home / "w.qdf").read_bytes


def _w_bytesio(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    b = io.BytesIO()
    return b, b.getvalue


def _w_open_file(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    p = tmp / "w.qdf"
    f = open(p, "wb")  # noqa: SIM115 - the target stays open until collected

    def collect() -> bytes:
        assert not f.closed  # write_qdf flushes, never closes a caller's file
        f.close()
        return p.read_bytes()

    return f, collect


def _w_unbuffered_file(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    p = tmp / "w.qdf"
    f = open(p, "wb", buffering=0)  # noqa: SIM115

    def collect() -> bytes:
        f.close()
        return p.read_bytes()

    return f, collect


def _w_write_only(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    s = WriteOnly()
    return s, lambda: b"".join(s.parts)


def _w_short_writes(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    s = ShortWrites()
    return s, lambda: bytes(s.buf)


def _w_memory_url(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    url = _memory_url()
    return url, lambda: fsspec.open(url, "rb").open().read()


def _w_memory_tilde_url(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    url = _memory_url("~/f.qdf")  # a URL's ~ is a plain path component

    def collect() -> bytes:
        assert not list(home.iterdir())
        return fsspec.open(url, "rb").open().read()

    return url, collect


def _w_fsspec_file(tmp: Path, home: Path) -> tuple[Any, Callable[[], bytes]]:
    url = _memory_url()
    f = fsspec.open(url, "wb").open()

    def collect() -> bytes:
        f.close()
        return fsspec.open(url, "rb").open().read()

    return f, collect


WRITE_KINDS: dict[str, WriteKind] = {
    "str": _w_str,
    "pathlib.Path": _w_path,
    "bytes PathLike": _w_bytes_pathlike,
    "~ str": _w_tilde,
    "~ Path": _w_tilde_path,
    "BytesIO": _w_bytesio,
    "open file": _w_open_file,
    "unbuffered file": _w_unbuffered_file,
    "write-only stream": _w_write_only,
    "short-write raw file": _w_short_writes,
    "memory:// URL": _w_memory_url,
    "memory:// URL with ~": _w_memory_tilde_url,
    "fsspec file": _w_fsspec_file,
}


@pytest.mark.parametrize("kind", list(WRITE_KINDS))
def test_write_to_every_kind_of_target(kind: str, tmp_path: Path, home: Path, df: pd.DataFrame, blob: bytes) -> None:
    target, collect = WRITE_KINDS[kind](tmp_path, home)
    assert qdf.write_qdf(df, target, row_group_size=ROWS) is None
    data = collect()
    assert data == blob  # the same container whatever the target
    pd.testing.assert_frame_equal(qdf.read_qdf(data), df, check_exact=True)


def test_none_returns_a_whole_container(df: pd.DataFrame, blob: bytes) -> None:
    assert isinstance(blob, bytes) and blob[:4] == b"QDFC" and blob[-4:] == b"QDFC"
    f = qdf.QdfFile(blob)
    assert f.num_rows == N and f.num_row_groups == -(-N // ROWS) and f.size == len(blob)
    pd.testing.assert_frame_equal(qdf.read_qdf(blob), df, check_exact=True)
    pd.testing.assert_frame_equal(qdf.read_qdf(io.BytesIO(blob)), df, check_exact=True)
    # Streamed batches work too.
    streamed = qdf.write_qdf((df.iloc[i:i + 10] for i in range(0, N, 10)), None, row_group_size=ROWS)
    pd.testing.assert_frame_equal(qdf.read_qdf(streamed), df, check_exact=True)


def test_file_object_is_written_from_its_position(df: pd.DataFrame, blob: bytes) -> None:
    b = io.BytesIO()
    b.write(b"prefix")
    qdf.write_qdf(df, b, row_group_size=ROWS)
    assert b.getvalue() == b"prefix" + blob and b.tell() == len(b"prefix") + len(blob)


def test_tilde_write_and_read_of_the_same_path(home: Path, df: pd.DataFrame) -> None:
    qdf.write_qdf(df, "~/sub.qdf", row_group_size=ROWS)
    assert (home / "sub.qdf").is_file()
    assert qdf.QdfFile("~/sub.qdf").path == str(home / "sub.qdf")
    pd.testing.assert_frame_equal(qdf.read_qdf("~/sub.qdf"), df, check_exact=True)
    qdf.write_qdf(df, "~/sub.qdf", row_group_size=ROWS, append=True)  # append expands ~ too
    assert qdf.QdfFile(Path("~/sub.qdf")).num_rows == 2 * N
    assert sorted(p.name for p in home.iterdir()) == ["sub.qdf"]  # no temporary left


# ----------------------------------------------------------------------------- read: every kind of source

# name -> (blob, tmp_path, home) -> source (a fresh one per call).
ReadKind = Callable[[bytes, Path, Path], Any]


def _file(blob: bytes, tmp: Path) -> Path:
    p = tmp / "r.qdf"
    if not p.exists():
        p.write_bytes(blob)
    return p


def _home_file(blob: bytes, home: Path) -> Path:
    p = home / "r.qdf"
    if not p.exists():
        p.write_bytes(blob)
    return p


def _at_end(f: io.BytesIO) -> io.BytesIO:
    f.seek(0, io.SEEK_END)  # a seekable source spans the whole object, whatever its position
    return f


_URLS: dict[bytes, str] = {}


def _url(blob: bytes) -> str:
    if blob not in _URLS:
        _URLS[blob] = _memory_url()
        with fsspec.open(_URLS[blob], "wb") as f:
            f.write(blob)
    return _URLS[blob]


READ_KINDS: dict[str, ReadKind] = {
    "str": lambda b, t, h: str(_file(b, t)),
    "pathlib.Path": lambda b, t, h: _file(b, t),
    "bytes PathLike": lambda b, t, h: BytesFsPath(_file(b, t)),
    "~ str": lambda b, t, h: (_home_file(b, h), "~/r.qdf")[1],
    "~ Path": lambda b, t, h: (_home_file(b, h), Path("~/r.qdf"))[1],
    "memory:// URL": lambda b, t, h: _url(b),
    "bytes": lambda b, t, h: bytes(b),
    "bytearray": lambda b, t, h: bytearray(b),
    "memoryview": lambda b, t, h: memoryview(bytearray(b)),
    "memoryview of a numpy array": lambda b, t, h: memoryview(np.frombuffer(b, np.uint8)),
    "memoryview of signed bytes": lambda b, t, h: memoryview(bytearray(b)).cast("b"),
    "BytesIO": lambda b, t, h: io.BytesIO(b),
    "BytesIO at its end": lambda b, t, h: _at_end(io.BytesIO(b)),
    "open file": lambda b, t, h: open(_file(b, t), "rb"),  # noqa: SIM115
    "unbuffered file": lambda b, t, h: open(_file(b, t), "rb", buffering=0),  # noqa: SIM115
    "non-seekable stream": lambda b, t, h: ReadOnlyStream(b),
    "fsspec file": lambda b, t, h: fsspec.open(_url(b), "rb").open(),
}


@pytest.fixture
def opened() -> Any:
    """File objects a test opens, closed when it ends."""
    files: list[Any] = []
    yield files
    for f in files:
        f.close()


@pytest.mark.parametrize("kind", list(READ_KINDS))
def test_read_every_kind_of_source(kind: str, tmp_path: Path, home: Path, df: pd.DataFrame, blob: bytes,
                                   opened: list[Any]) -> None:
    def src() -> Any:  # a fresh source per read: a stream is consumed once
        s = READ_KINDS[kind](blob, tmp_path, home)
        if hasattr(s, "close") and not isinstance(s, memoryview):
            opened.append(s)
        return s

    pd.testing.assert_frame_equal(qdf.read_qdf(src()), df, check_exact=True)
    pd.testing.assert_frame_equal(qdf.read_qdf(src(), threads=4), df, check_exact=True)
    pd.testing.assert_frame_equal(qdf.read_qdf(src(), no_copy=True, threads=1), df, check_exact=True)
    # Projection (the stored index comes along) and a filter pushed into the groups it cannot prune.
    cols = ["s", "c", "t"]
    pd.testing.assert_frame_equal(qdf.read_qdf(src(), columns=cols), df[cols], check_exact=True)
    flt = (qdf.col("i") >= 10) & (qdf.col("i") < 20) & qdf.col("s").is_not_null()
    want = df[(df.i >= 10) & (df.i < 20) & df.s.notna()]  # the stored "key" index comes along
    got = qdf.read_qdf(src(), columns=["i", "s", "sp", "n"], filter=flt)
    pd.testing.assert_frame_equal(got, want[["i", "s", "sp", "n"]], check_exact=True)
    # Row-group pruning from the footer statistics.
    with qdf.QdfFile(src()) as f:
        assert f.num_rows == N and f.num_row_groups == -(-N // ROWS)
        plan = f.explain(flt)
        assert plan["read"].tolist() == [False, True, True, False, False, False, False, False]
        assert f.read(filter=qdf.col("i") > 10**6, output="arrow").num_rows == 0
        assert isinstance(f.path, str) and f.path in repr(f)


def test_seekable_file_objects_read_only_the_groups_needed() -> None:
    from qdf_columnar.io.source import TAIL_BYTES

    rng = np.random.default_rng(5)
    data = qdf.write_qdf({"i": np.arange(100_000), "v": rng.normal(size=100_000)}, None,
                         row_group_size=10_000, mode="balanced")
    f = CountingBytesIO(data)
    got = qdf.read_qdf(f, filter=qdf.col("i") == 45_000, output="arrow")
    assert got.column("i").to_pylist() == [45_000]
    meta = qdf.QdfFile(data)
    assert meta.metadata["footer_bytes"] + 16 <= TAIL_BYTES < len(data)
    # The header, the tail (which holds the footer) and the one row group that can match.
    assert f.bytes_read == 8 + TAIL_BYTES + meta.row_groups[4].length


def test_no_copy_columns_are_views_of_an_in_memory_file() -> None:
    v = np.random.default_rng(3).normal(size=5000)
    # Raw floats in plain v1 buffers: go_compatible (no ALP-RD), version 1 (no zstd frame)
    data = qdf.write_qdf({"v": v}, None, row_group_size=2000, mode="balanced", go_compatible=True, format_version=1)
    base = np.frombuffer(data, np.uint8).ctypes.data
    t = qdf.read_qdf(data, output="arrow", no_copy=True)
    assert all(base <= c.buffers()[1].address < base + len(data) for c in t.column("v").chunks)
    assert np.array_equal(t.column("v").to_numpy(), v)
    copied = qdf.read_qdf(data, output="arrow")
    assert not any(base <= c.buffers()[1].address < base + len(data) for c in copied.column("v").chunks)


def test_a_closed_source_releases_a_bytearray(blob: bytes) -> None:
    buf = bytearray(blob)
    qdf.read_qdf(buf, columns=["i", "s"], filter=qdf.col("i") > 3)
    buf.extend(b"x")  # the read left no export of the buffer behind: it can grow again
    with pytest.raises(qdf.TruncatedError):
        qdf.read_qdf(buf)  # a trailing byte: no trailing magic any more


def test_file_objects_stay_open_and_usable(df: pd.DataFrame, tmp_path: Path, blob: bytes) -> None:
    p = tmp_path / "o.qdf"
    p.write_bytes(blob)
    with open(p, "rb") as f:
        pd.testing.assert_frame_equal(qdf.read_qdf(f), df, check_exact=True)
        assert not f.closed
        pd.testing.assert_frame_equal(qdf.read_qdf(f, columns=["i"]), df[["i"]], check_exact=True)
    assert qdf.QdfFile(io.BytesIO(blob)).path == "<BytesIO>"
    assert qdf.QdfFile(blob).path == f"<{len(blob)} bytes>"
    with open(p, "rb") as f:
        assert qdf.QdfFile(f).path == str(p)


def test_damaged_in_memory_files_raise_typed_errors(blob: bytes) -> None:
    for bad in (b"", blob[:10], blob[:-1]):
        with pytest.raises(qdf.TruncatedError):
            qdf.read_qdf(bad)
        with pytest.raises(qdf.TruncatedError):
            qdf.read_qdf(io.BytesIO(bad))
    with pytest.raises(qdf.DecodeError, match=r"qdf.decode\(\)"):
        qdf.read_qdf(qdf.encode({"x": [1, 2, 3]}))
    f = qdf.QdfFile(blob)
    g = f.row_groups[3]
    damaged = bytearray(blob)
    damaged[g.offset + g.length // 2] ^= 0x55
    with pytest.raises(qdf.CorruptDataError, match="checksum mismatch") as e:
        qdf.read_qdf(damaged)
    assert e.value.row_group == 3
    with pytest.warns(qdf.QdfWarning, match="row group 3"):
        got = qdf.read_qdf(io.BytesIO(bytes(damaged)), on_error="skip")
    assert len(got) == N - g.num_rows


# ----------------------------------------------------------------------------- df.to_qdf


def test_to_qdf_keeps_its_meaning_and_takes_file_objects(df: pd.DataFrame, tmp_path: Path, blob: bytes) -> None:
    v1 = df.to_qdf()
    assert v1 == qdf.encode(df) and v1[:4] == b"QDF\x01"  # one v1 buffer, not a container
    pd.testing.assert_frame_equal(qdf.decode(v1), df, check_exact=True)
    sink = io.BytesIO()
    assert df.to_qdf(sink, row_group_size=ROWS) is None
    assert sink.getvalue() == blob
    df.to_qdf(tmp_path / "acc.qdf", row_group_size=ROWS)
    assert (tmp_path / "acc.qdf").read_bytes() == blob
    with open(tmp_path / "acc2.qdf", "wb") as f:
        df.to_qdf(f, row_group_size=ROWS)
    pd.testing.assert_frame_equal(qdf.read_qdf(tmp_path / "acc2.qdf"), df, check_exact=True)
    with pytest.raises(qdf.InvalidOptionError, match="append=True needs a path"):
        df.to_qdf(io.BytesIO(), append=True)
    with pytest.raises(qdf.InvalidOptionError, match="applies only when writing a .qdf file"):
        df.to_qdf(None, row_group_size=ROWS)


# ----------------------------------------------------------------------------- refusals

REFUSALS: list[tuple[str, Callable[[], Any], dict[str, Any], str]] = [
    ("BytesIO", io.BytesIO, {"append": True}, r"append=True needs a path or URL .*a file object \(BytesIO\)"),
    ("None", lambda: None, {"append": True}, r"append=True needs a path or URL .*path=None"),
    ("write-only stream", WriteOnly, {"append": True}, r"append=True needs a path or URL"),
    ("BytesIO", io.BytesIO, {"storage_options": {"anon": True}}, r"storage_options= applies only to a path or URL"),
    ("None", lambda: None, {"storage_options": {"anon": True}}, r"storage_options= applies only to a path or URL"),
]


@pytest.mark.parametrize(("kind", "make", "options", "match"), REFUSALS, ids=[f"{r[0]}-{next(iter(r[2]))}" for r in
                                                                               REFUSALS])
def test_options_that_need_a_path_are_refused(kind: str, make: Callable[[], Any], options: dict[str, Any],
                                               match: str, df: pd.DataFrame) -> None:
    target = make()
    with pytest.raises(qdf.InvalidOptionError, match=match) as e:
        qdf.write_qdf(df, target, **options)
    assert isinstance(e.value, ValueError) and isinstance(e.value, qdf.QdfError)
    if isinstance(target, io.BytesIO):
        assert target.getvalue() == b""
    if isinstance(target, WriteOnly):
        assert target.parts == []


def test_storage_options_need_a_path_to_read(blob: bytes) -> None:
    for src in (blob, io.BytesIO(blob)):
        with pytest.raises(qdf.InvalidOptionError, match="storage_options= applies only to a path or URL"):
            qdf.read_qdf(src, storage_options={"anon": True})


def test_a_failed_encode_writes_nothing_to_a_file_object(tmp_path: Path) -> None:
    batches = [pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": ["x", "y"]})]  # the second has another type
    b = io.BytesIO(b"keep")
    b.seek(0, 2)
    with pytest.raises(SchemaMismatchError):
        qdf.write_qdf(iter(batches), b, row_group_size=1)
    assert b.getvalue() == b"keep" and b.tell() == 4
    with open(tmp_path / "f.qdf", "wb") as f:
        with pytest.raises(qdf.UnsupportedTypeError):
            qdf.write_qdf(pd.DataFrame({"c": [1 + 2j]}), f)
        assert f.tell() == 0
    assert (tmp_path / "f.qdf").read_bytes() == b""
    s = WriteOnly()
    with pytest.raises(SchemaMismatchError):
        qdf.write_qdf(iter(batches), s, row_group_size=1)
    assert s.parts == []


def _closed() -> io.BytesIO:
    f = io.BytesIO()
    f.close()
    return f


def _opened(path: Path, mode: str, content: bytes | None = None) -> Any:
    if content is not None:
        path.write_bytes(content)
    return open(path, mode)  # noqa: SIM115 - the test closes it


BAD_TARGETS: list[tuple[str, Callable[[Path], Any], str]] = [
    ("int", lambda t: 3, r"path must be a str or os.PathLike path, an fsspec URL, a writable binary file object or "
                         r"None, not int"),
    ("object", lambda t: object(), r"not object"),
    ("bytes", lambda t: b"x.qdf", r"cannot write a .qdf file into a bytes object; pass path=None"),
    ("bytearray", lambda t: bytearray(), r"into a bytearray object"),
    ("text file", lambda t: _opened(t / "x.txt", "w"), r"text mode; a .qdf file is binary, open it with mode 'wb'"),
    ("StringIO", lambda t: io.StringIO(), r"text mode"),
    ("read-only file", lambda t: _opened(t / "ro.qdf", "rb", b""), r"not open for writing \(open it with mode 'wb'\)"),
    ("closed file", lambda t: _closed(), r"the file object is closed"),
]


@pytest.mark.parametrize(("kind", "make", "match"), BAD_TARGETS, ids=[b[0] for b in BAD_TARGETS])
def test_targets_of_no_accepted_kind(kind: str, make: Callable[[Path], Any], match: str, tmp_path: Path,
                                     df: pd.DataFrame) -> None:
    target = make(tmp_path)
    with pytest.raises(qdf.InvalidPathError, match=match) as e:
        qdf.write_qdf(df, target)
    assert isinstance(e.value, TypeError) and isinstance(e.value, qdf.QdfError)
    with pytest.raises(qdf.InvalidPathError):
        df.to_qdf(target)
    if hasattr(target, "close"):
        target.close()


BAD_SOURCES: list[tuple[str, Callable[[Path], Any], str]] = [
    ("int", lambda t: 3, r"path must be a str or os.PathLike path, an fsspec URL, a readable binary file object or "
                         r"bytes, not int"),
    ("None", lambda t: None, r"not NoneType"),
    ("text file", lambda t: _opened(t / "x.txt", "r", b"hi"),
     r"text mode; a .qdf file is binary, open it with mode 'rb'"),
    ("StringIO", lambda t: io.StringIO("QDFC"), r"text mode"),
    ("write-only file", lambda t: _opened(t / "wo.qdf", "wb"), r"not open for reading"),
    ("closed file", lambda t: _closed(), r"the file object is closed"),
    ("strided memoryview", lambda t: memoryview(bytearray(64))[::2], r"must be C-contiguous"),
]


@pytest.mark.parametrize(("kind", "make", "match"), BAD_SOURCES, ids=[b[0] for b in BAD_SOURCES])
def test_sources_of_no_accepted_kind(kind: str, make: Callable[[Path], Any], match: str, tmp_path: Path) -> None:
    src = make(tmp_path)
    with pytest.raises(qdf.InvalidPathError, match=match) as e:
        qdf.read_qdf(src)
    assert isinstance(e.value, TypeError)
    with pytest.raises(qdf.InvalidPathError):
        qdf.QdfFile(src)
    if hasattr(src, "close"):
        src.close()


# ----------------------------------------------------------------------------- OS errors


def _no_temporaries(*dirs: Path) -> None:
    for d in dirs:
        if d.is_dir():
            assert not [p.name for p in d.iterdir() if p.name.endswith(".tmp")]


# name -> (tmp_path, home) -> (target as given, the path the message names, the missing directory)
MISSING_DIRS: dict[str, Callable[[Path, Path], tuple[Any, str, str]]] = {
    "str": lambda t, h: (str(t / "nope" / "x.qdf"), str(t / "nope" / "x.qdf"), str(t / "nope")),
    "pathlib.Path": lambda t, h: (t / "a" / "b" / "x.qdf", str(t / "a" / "b" / "x.qdf"), str(t / "a" / "b")),
    "~ str": lambda t, h: ("~/nope/x.qdf", str(h / "nope" / "x.qdf"), str(h / "nope")),
    "relative": lambda t, h: (os.path.join("nope", "x.qdf"), os.path.join("nope", "x.qdf"),
                              str(Path.cwd() / "nope")),
}


@pytest.mark.parametrize("kind", list(MISSING_DIRS))
@pytest.mark.parametrize("append", [False, True])
def test_write_into_a_missing_directory(kind: str, append: bool, tmp_path: Path, home: Path,
                                        df: pd.DataFrame) -> None:
    target, named, directory = MISSING_DIRS[kind](tmp_path, home)
    with pytest.raises(qdf.QdfFileNotFoundError) as e:
        qdf.write_qdf(df, target, append=append)
    err = e.value
    assert isinstance(err, FileNotFoundError) and isinstance(err, qdf.QdfIOError) and isinstance(err, qdf.QdfError)
    assert str(err) == f"cannot write {named!r}: the directory {directory!r} does not exist"
    assert ".tmp" not in str(err)
    assert err.errno == errno.ENOENT and err.filename == named and err.path == named
    with pytest.raises(FileNotFoundError, match="does not exist"):
        df.to_qdf(target)
    assert not Path(directory).exists()
    _no_temporaries(tmp_path, home, Path.cwd())


def _missing_url(t: Path, h: Path) -> tuple[str, str]:
    url = _memory_url("nope.qdf")
    return url, url


MISSING_FILES: dict[str, Callable[[Path, Path], tuple[Any, str]]] = {
    "str": lambda t, h: (str(t / "nope.qdf"), str(t / "nope.qdf")),
    "pathlib.Path": lambda t, h: (t / "nope.qdf", str(t / "nope.qdf")),
    "missing directory": lambda t, h: (t / "d" / "nope.qdf", str(t / "d" / "nope.qdf")),
    "~ str": lambda t, h: ("~/nope.qdf", str(h / "nope.qdf")),
    "memory:// URL": _missing_url,
}


@pytest.mark.parametrize("kind", list(MISSING_FILES))
def test_read_a_missing_file(kind: str, tmp_path: Path, home: Path) -> None:
    src, named = MISSING_FILES[kind](tmp_path, home)
    for read in (qdf.read_qdf, qdf.QdfFile):
        with pytest.raises(qdf.QdfFileNotFoundError) as e:
            read(src)
        assert isinstance(e.value, FileNotFoundError)
        assert str(e.value) == f"cannot read {named!r}: no such file"
        assert e.value.errno == errno.ENOENT and e.value.filename == named


def test_directories_are_not_files(tmp_path: Path, home: Path, df: pd.DataFrame) -> None:
    d = tmp_path / "adir"
    d.mkdir()
    for target, named in ((d, str(d)), (str(d) + os.sep, str(d) + os.sep), ("~", str(home))):
        with pytest.raises(qdf.QdfIsADirectoryError, match="it is a directory") as e:
            qdf.write_qdf(df, target)
        assert isinstance(e.value, IsADirectoryError) and isinstance(e.value, qdf.QdfIOError)
        assert str(e.value).startswith(f"cannot write {named!r}") and e.value.errno == errno.EISDIR
        with pytest.raises(qdf.QdfIsADirectoryError):
            qdf.write_qdf(df, target, append=True)
        with pytest.raises(qdf.QdfIsADirectoryError) as e:
            qdf.read_qdf(target)
        assert str(e.value) == f"cannot read {named!r}: it is a directory, not a .qdf file"
    assert not list(d.iterdir())
    url = _memory_url("sub/x.qdf")
    qdf.write_qdf(df, url)
    with pytest.raises(qdf.QdfIsADirectoryError, match="it is a directory"):
        qdf.read_qdf(url.rsplit("/", 1)[0])


def test_a_parent_that_is_a_file(tmp_path: Path, df: pd.DataFrame) -> None:
    (tmp_path / "plain").write_bytes(b"x")
    target = tmp_path / "plain" / "x.qdf"
    with pytest.raises(qdf.QdfIOError, match="is not a directory") as e:
        qdf.write_qdf(df, target)
    assert isinstance(e.value, OSError) and not isinstance(e.value, FileNotFoundError)
    assert e.value.errno == errno.ENOTDIR and str(target) in str(e.value)
    with pytest.raises(qdf.QdfIOError) as e:
        qdf.read_qdf(target)
    assert str(target) in str(e.value) and e.value.errno == errno.ENOTDIR


def test_permission_denied_is_typed(tmp_path: Path, df: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated (the suite may run as root, which no mode bit stops)."""
    from qdf_columnar.io import source

    target = tmp_path / "x.qdf"
    real_open = os.open

    def no_create(path: Any, flags: int, *args: Any) -> int:
        if str(path).endswith(".tmp"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", no_create)
    with pytest.raises(qdf.QdfPermissionError) as e:
        qdf.write_qdf(df, target)
    monkeypatch.undo()
    assert isinstance(e.value, PermissionError) and e.value.errno == errno.EACCES
    assert str(e.value) == f"cannot write {str(target)!r}: permission denied (no write access to {str(tmp_path)!r})"
    assert not list(tmp_path.iterdir())

    qdf.write_qdf(df, target)

    def denied(path: Any, *args: Any, **kw: Any) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied", path)

    monkeypatch.setattr(source, "open", denied, raising=False)
    with pytest.raises(qdf.QdfPermissionError) as e:
        qdf.read_qdf(target)
    assert str(e.value) == f"cannot read {str(target)!r}: permission denied"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores mode bits")
def test_permission_denied_for_real(tmp_path: Path, df: pd.DataFrame) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    qdf.write_qdf(df, ro / "x.qdf")
    (ro / "x.qdf").chmod(0)
    ro.chmod(0o500)
    try:
        with pytest.raises(qdf.QdfPermissionError, match="permission denied"):
            qdf.write_qdf(df, ro / "y.qdf")
        with pytest.raises(PermissionError):
            qdf.read_qdf(ro / "x.qdf")
    finally:
        ro.chmod(0o700)


def test_other_os_errors_while_writing_name_the_target(tmp_path: Path, df: pd.DataFrame,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "full.qdf"

    def full(*args: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(qdf.QdfIOError) as e:
        qdf.write_qdf(df, target)
    assert str(e.value) == f"cannot write {str(target)!r}: No space left on device"
    assert e.value.errno == errno.ENOSPC and type(e.value) is qdf.QdfIOError
    assert not list(tmp_path.iterdir())  # the temporary file is removed


def test_io_errors_pickle_and_keep_their_fields(tmp_path: Path) -> None:
    with pytest.raises(qdf.QdfFileNotFoundError) as e:
        qdf.read_qdf(tmp_path / "nope.qdf")
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is qdf.QdfFileNotFoundError and str(back) == str(e.value)
    assert back.errno == errno.ENOENT and back.filename == str(tmp_path / "nope.qdf")
    assert "QdfFileNotFoundError" in repr(back)


def test_new_errors_are_exported() -> None:
    for name in ("InvalidPathError", "QdfIOError", "QdfFileNotFoundError", "QdfIsADirectoryError",
                 "QdfPermissionError"):
        assert name in qdf.__all__ and issubclass(getattr(qdf, name), qdf.QdfError)
    assert issubclass(qdf.QdfFileNotFoundError, FileNotFoundError)
    assert issubclass(qdf.QdfIsADirectoryError, IsADirectoryError)
    assert issubclass(qdf.QdfPermissionError, PermissionError)
    assert issubclass(qdf.QdfIOError, OSError) and issubclass(qdf.InvalidPathError, TypeError)


def test_docstring_examples() -> None:
    from qdf_columnar.io import reader, writer

    for mod in (reader, writer, accessor):
        res = doctest.testmod(mod)
        assert res.failed == 0 and res.attempted > 0, mod.__name__
