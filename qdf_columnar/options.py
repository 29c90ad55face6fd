"""Encoder option bits (mirroring the Go ``Options`` bit-mask) and the mode presets.

Options are encode-side only and never written to the wire; the header flags say
what a decoder needs. ``mode=`` on :func:`qdf_columnar.encode` / :func:`dumps`
accepts a preset name or an :class:`Options` value, so every golden vector of the
reference can be produced through the public API.
"""

from __future__ import annotations

from enum import IntFlag

from .errors import InvalidOptionError


class Options(IntFlag):
    """The Go library's option bits, same positions (qdf-wire-v1.md §1.2)."""

    NONE = 0
    DENSE = 1 << 0  # inline intern table; prerequisite for shapes and columnar
    QPACK = 1 << 1  # numeric / bool slice codecs
    SHAPE_INTERN = 1 << 2  # struct shape interning; with DENSE gates columnar containers
    PAIR_PRED = 1 << 3  # Markov-1 predictor tag EA
    MTF = 1 << 4  # move-to-front rank refs E9
    GORILLA_FLOAT = 1 << 5  # float XOR / ALP codecs (compression tier; not implemented yet)
    RANS = 1 << 6  # whole-body entropy pass (compression tier; not implemented yet)
    COLUMN_INDEX = 1 << 7  # u32 column-length index in EF containers
    FSST = 1 << 8  # FSST string columns (compression tier; not implemented yet)
    MAP_SHAPE = 1 << 9  # key-set interning for dicts
    DELTA_NO_BASE_FINGERPRINT = 1 << 10
    CANONICAL = 1 << 11
    LOSSY_VEC = 1 << 12
    ZONE_MAP = 1 << 13  # F1 zone chunks (zone maps that let filters skip 256-row zones)
    STRING_ALPHABET = 1 << 14
    #: qdf_columnar's own engine on top of the reference picker, not a Go option:
    #: dictionary levels (columns of any type and cardinality stored as integer codes
    #: plus a dictionary level, docs/FORMAT.md Part 2 §2.4) in ``encode()``. The
    #: preset names include it; ``encode(..., go_compatible=True)`` clears it.
    CASCADE = 1 << 16
    #: qdf_columnar's own, not a Go option: integer bodies (FOR, Delta+FOR and ALP's
    #: integers) bit-packed at whole-byte widths (8, 16, 24, ... bits), so a byte-wise
    #: stage after them (the file container's zstd wrap, the tANS pass) sees every value
    #: in whole bytes. Still the reference's payloads, decoded by Go to the same values.
    #: Not in any preset: the .qdf writer tries it on each compression-mode column chunk
    #: and keeps it where the chunk comes out smaller (docs/FORMAT.md §4.2).
    ALIGNED = 1 << 17

    # Named presets, as in the reference.
    SPEED = 0
    BALANCED = DENSE | QPACK | SHAPE_INTERN | PAIR_PRED | MTF
    COMPRESSION = BALANCED | GORILLA_FLOAT | RANS | FSST


#: Bits that change what this implementation writes. The compression-tier bits
#: (GORILLA_FLOAT, RANS, FSST, ALIGNED) are "only if smaller" choices, as in the
#: reference: a column or buffer takes them only where they save bytes.
IMPLEMENTED = (
    Options.DENSE
    | Options.QPACK
    | Options.SHAPE_INTERN
    | Options.PAIR_PRED
    | Options.MTF
    | Options.COLUMN_INDEX
    | Options.GORILLA_FLOAT
    | Options.RANS
    | Options.FSST
    | Options.MAP_SHAPE
    | Options.ZONE_MAP
    | Options.CASCADE
    | Options.ALIGNED
)

#: The preset names. ``Options.BALANCED`` / ``Options.COMPRESSION`` are the reference's
#: bits exactly; the names add qdf_columnar's engine (:attr:`Options.CASCADE`).
PRESETS: dict[str, Options] = {
    "speed": Options.SPEED,
    "balanced": Options.BALANCED | Options.CASCADE,
    "compression": Options.COMPRESSION | Options.CASCADE,
}

Mode = str | Options | int


def parse_mode(mode: Mode, *, column_index: bool | None = None) -> Options:
    """Turn ``mode=`` (preset name or Options bits) into an :class:`Options` value.

    ``column_index`` (when not None) sets or clears :attr:`Options.COLUMN_INDEX`.
    """
    # Memoised: dumps() of a small message is a few microseconds, and the enum
    # arithmetic below costs about one of them. bool is excluded (True == 1 as a key).
    cacheable = type(mode) in _CACHEABLE
    if cacheable:
        hit = _PARSED.get((mode, column_index))
        if hit is not None:
            return hit
    opts = _parse_mode(mode, column_index)
    if cacheable and len(_PARSED) < 512:
        _PARSED[(mode, column_index)] = opts
    return opts


_CACHEABLE = (str, Options, int)
_PARSED: dict[tuple[Mode, bool | None], Options] = {}


def _parse_mode(mode: Mode, column_index: bool | None) -> Options:
    if isinstance(mode, str):
        try:
            opts = PRESETS[mode.lower()]
        except KeyError:
            raise InvalidOptionError(
                f"unknown mode {mode!r}; expected one of {sorted(PRESETS)} or a qdf.Options value"
            ) from None
    elif isinstance(mode, int) and not isinstance(mode, bool):
        if mode < 0 or mode >= (1 << 18):
            raise InvalidOptionError(f"mode bits {mode:#x} are outside the known Options bits")
        opts = Options(mode)
    else:
        raise InvalidOptionError(f"mode must be a preset name or qdf.Options, not {type(mode).__name__}")
    unknown = opts & ~IMPLEMENTED
    if unknown:
        raise InvalidOptionError(f"option bits {Options(unknown)!r} are not supported by this implementation yet")
    if column_index is not None:
        opts = (opts | Options.COLUMN_INDEX) if column_index else (opts & ~Options.COLUMN_INDEX)
    return Options(opts)


def header_flags(opts: Options) -> int:
    """Header flags implied by the options before any body is written (ColIndex is back-patched)."""
    return int(opts) & 0x03  # Options.DENSE is bit 0 and Options.QPACK bit 1, as FlagDense / FlagQPack


def columnar_enabled(opts: Options) -> bool:
    """Columnar containers need Dense and ShapeIntern (qdf-wire-v1.md §3.4)."""
    return bool(opts & Options.DENSE) and bool(opts & Options.SHAPE_INTERN)
