"""Row-major qdf v1 values (the msgpack-shaped tag table) plus :func:`dumps` / :func:`loads`.

This module is a facade: encoding lives in :mod:`.values_write` (``write_*``, ``dumps``) and
decoding in :mod:`.values_read` (``read_*``, ``loads``); the public names are re-exported here.

Python mapping (encode):

==============================  =====================================================
``None``                        ``C0``
``bool`` / ``np.bool_``         ``C1`` / ``C2``
``int`` / ``np.integer``        narrowest form, exactly as Go ``WriteInt`` / ``WriteUint``;
                                outside [-2**63, 2**64) -> :class:`UnsupportedTypeError`
``float`` / ``np.float64``      ``CC`` float64 (bit exact: NaN payloads, -0.0, inf)
``np.float32`` / ``np.float16`` ``CB`` float32 (float16 widened exactly)
``str``                         fixstr / str8 / str16 / str32 (UTF-8); Dense: interned
``bytes`` / ``bytearray`` /     bin8 / bin16 / bin32 (no fixbin); Dense: interned (``E2``)
``memoryview``
``list`` / ``tuple``            array header + elements (tuples decode as lists)
``dict`` (str keys)             ``D5/D6/D7`` map; with Dense + ShapeIntern (or MapShape) an
                                ``EC`` map shape, declared once per ordered key tuple
``datetime`` / ``pd.Timestamp``  ``F3`` timestamp: zigzag-uvarint(sec), uvarint(nsec).
/ ``np.datetime64``             Naive datetimes / Timestamps are taken to be UTC.
``np.ndarray``                  Options.QPACK: 1-D bool/int/float arrays become QPack payloads
                                (``qdf_columnar.codecs.qpack``); otherwise an array of
                                per-element values. N-d arrays nest as arrays of rows.
==============================  =====================================================

Decode: ints come back as ``int`` (uint64 above int64 max included), ``CB`` as
``np.float32`` (so re-encoding reproduces the bytes), ``CC`` as ``float``,
strings as ``str`` and bins as ``bytes``, arrays as ``list``, maps / shapes as
``dict`` (insertion order = wire order), QPack payloads as numpy arrays and
``F3`` as a timezone-aware UTC ``datetime`` -- or a UTC ``pd.Timestamp`` when the
nanoseconds are not a whole number of microseconds (a datetime would drop them).

Dense caveat: strings and bytes share one intern table keyed on raw bytes (as in
Go), so a ``bytes`` value equal to an earlier interned ``str`` (or vice versa) is
written as a reference and decodes with the type of the first occurrence.
"""

from __future__ import annotations

from .values_read import loads, read_string, read_value
from .values_write import COLUMNAR_MIN_ROWS, dumps, write_int, write_string, write_timestamp, write_value

__all__ = [
    "write_value",
    "read_value",
    "write_string",
    "read_string",
    "write_int",
    "write_timestamp",
    "dumps",
    "loads",
    "COLUMNAR_MIN_ROWS",
]
