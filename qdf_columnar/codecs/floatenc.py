"""The float payload writer and picker (Go encodeSliceFloat64Lossless /
encodeSliceFloat32Lossless, qdf-wire-v1.md §3.2), over the codec units of :mod:`.registry`.

Without ``compress`` the payload is raw. Otherwise every registered candidate whose
gate passes is planned in order, and a later plan displaces the best so far by the
rule of :func:`.floats.unit.replaces` (smaller wins; exact beats an equal upper
bound; two upper bounds are written and measured). The result is never larger than
raw, and it is the Go encoder's choice byte for byte.

Deviation (documented in the report): the Go source stored for this port has no call
site of pickChimpF64; Chimp is attempted per the reference notes (gate < 58 bits/value)
and kept over Gorilla only when strictly smaller.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InvalidOptionError, UnsupportedTypeError
from .floats.unit import F32, F64, FloatPlan, Fmt, replaces
from .registry import FLOAT_BY_NAME, FLOAT_CANDIDATES

#: What ``force=`` accepts (None: the picker).
FORCE = (None, *(c.name for c in FLOAT_CANDIDATES))


def _measured(a: np.ndarray, f: Fmt, plan: FloatPlan) -> FloatPlan:
    """``plan`` with its payload written (the real size, where the cost was a bound)."""
    if plan.payload is not None:
        return plan
    buf = bytearray()
    FLOAT_BY_NAME[plan.codec].encode(buf, a, f, plan)
    return dataclasses.replace(plan, payload=bytes(buf))


def pick(a: np.ndarray, f: Fmt, *, light: bool = False, limit: int | None = None) -> FloatPlan:
    """The smallest plan for ``a`` among the candidates (``light``: memory-speed ones only).

    ``limit`` (``light`` only): the caller keeps the payload only when it is shorter than
    this many bytes, so a candidate that cannot be is not planned (the plan returned is
    then the best of the others); whenever the smallest plan is shorter, it is returned
    as without the limit."""
    best: FloatPlan | None = None
    cap = limit if light else None  # the bit-stream codecs' early stop is not a bound to cut
    for unit in FLOAT_CANDIDATES:
        if light and not unit.memory_speed:
            continue
        # An exact plan larger than the best cost is never kept (:func:`replaces`): the
        # bit-stream codecs stop writing as soon as they pass it.
        to_beat = None if best is None else best.cost if cap is None else min(best.cost, cap)
        plan = unit.estimate(a, f, to_beat=to_beat)
        if plan is None:
            continue
        kept = plan if best is None else replaces(plan, best, lambda p: _measured(a, f, p))
        if kept is not None:
            best = kept
    assert best is not None  # raw always applies
    return best


def encode_floats(out: bytearray, values: np.ndarray, *, compress: bool, force: str | None = None,
                  light: bool = False, aligned: bool = False, limit: int | None = None) -> None:
    """Append one float payload: raw E4 when not ``compress``, else the picker's choice.

    ``light`` keeps only the schemes that decode at memory speed (ALP, ALP-RD, raw):
    no Gorilla / Chimp128 bit streams, which decode one value after another.
    ``aligned`` (Options.ALIGNED) writes ALP, wherever it applies, with its integers at a
    whole-byte width, for a byte-wise stage after the payload; Gorilla / Chimp128 bit
    streams leave such a stage nothing to find.
    ``force`` ("raw", "gorilla", "chimp" (float64 only), "alp", "alprd" (float64 only))
    bypasses the picker for tests; forced codecs skip their planners' size gates.
    ``limit``: see :func:`pick`.
    """
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype not in (np.float64, np.float32):
        raise UnsupportedTypeError(f"expected a 1-D float32/float64 array, got {arr.dtype}")
    if force not in FORCE:
        raise InvalidOptionError(f"unknown float codec {force!r}; expected one of {FORCE[1:]}")
    f = F64 if arr.dtype == np.float64 else F32
    a = np.ascontiguousarray(arr, dtype=f.fdt)  # bit patterns kept (no value conversion)
    if force in ("chimp", "alprd") and f.width == 4:
        raise InvalidOptionError(f"{force} exists only for float64 on the v1 wire this port writes")
    if not compress:
        force = "raw"
    if force is not None:
        unit = FLOAT_BY_NAME[force]
        unit.encode(out, a, f, unit.force(a, f))
        return
    if aligned:
        alp = FLOAT_BY_NAME["alp"]
        plan = alp.estimate(a, f)
        if plan is not None:
            alp.encode(out, a, f, alp.byte_aligned(plan, int(a.shape[0])))
            return
    plan = pick(a, f, light=light, limit=limit)
    FLOAT_BY_NAME[plan.codec].encode(out, a, f, plan)
