"""The v1 integer-slice codec picker (Go pickI64Codec / pickU64Codec, qdf-wire-v1.md §3.1).

The candidates of :mod:`.registry` are tried in their registered order with the exact
byte costs of the reference; a candidate replaces the running best only if it is
*strictly* smaller, so ties keep the earlier codec and the output matches Go's choice
byte for byte. PFOR's cost is the reference's conservative upper bound.
"""

from __future__ import annotations

from ..errors import InvalidOptionError
from .ints.unit import Plan
from .registry import INT_BY_NAME, INT_CANDIDATES
from .stats import IntStats

#: The codec names ``force=`` accepts for a whole-column payload.
CODECS = tuple(c.name for c in INT_CANDIDATES)


def pick(s: IntStats) -> Plan:
    """Run the v1 picker over non-empty stats; returns the winning :class:`Plan`."""
    best: Plan | None = None
    for codec in INT_CANDIDATES:
        plan = codec.estimate(s, None if best is None else best.cost)
        if plan is not None and (best is None or plan.cost < best.cost):
            best = plan
    assert best is not None  # raw always applies
    return best


def forced(s: IntStats, codec: str) -> Plan:
    """The plan for ``codec`` if its picker gate allows it, else InvalidOptionError."""
    unit = INT_BY_NAME.get(codec)
    if unit is None or codec not in CODECS:
        raise InvalidOptionError(f"unknown integer codec {codec!r}; expected one of {CODECS}")
    plan = unit.estimate(s, None)
    if plan is None:
        raise InvalidOptionError(f"codec {codec!r} is not applicable to this column (its picker gate fails)")
    return plan
