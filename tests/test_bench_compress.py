"""Smoke and verdict tests for bench/bench_compress.py (the compression acceptance bench).

The verdict tests feed hand-made measurements to ``evaluate`` (no encoding), so a wrong
PASS/FAIL rule shows up without a benchmark run. The smoke test runs the real bench on
one tiny fixture; it needs the ``bench`` extra (vortex-data) and skips without it.
"""

from __future__ import annotations

import time

import pytest

bc = pytest.importorskip("bench.bench_compress")


def _row(key: str, scale: int, sizes: dict[str, int], ms: dict[tuple[str, str], float] | None = None,
         bad: dict[str, str] | None = None) -> bc.Row:
    row = bc.Row(key, scale, f"{key} x{scale}", 10)
    for c, n in sizes.items():
        row.bytes[c] = n
        row.status[c] = "ok"
    for c, why in (bad or {}).items():
        row.status[c] = why
    for op, v in (ms or {}).items():
        row.samples[" ".join(op)] = [v / 1e3, v / 1e3, v / 1e3]
        row.op_status[" ".join(op)] = "ok"
    return row


GOOD_SIZES = {bc.QDF_BAL: 90, bc.QDF_COMP: 80, bc.PQ_SNAPPY: 100, bc.PQ_ZSTD3: 95, bc.PQ_ZSTD19: 85,
              bc.VX_DEFAULT: 99, bc.VX_COMPACT: 70}
GOOD_MS = {bc.ENC_BAL: 10.0, bc.ENC_COMP: 25.0, bc.ENC_PQ: 10.0, bc.DEC_COMP: 5.0, bc.DEC_PQ: 10.0}


def _all_rows(**overrides: bc.Row) -> dict[tuple[str, int], bc.Row]:
    rows = {(k, s): _row(k, s, GOOD_SIZES, GOOD_MS) for k in bc.fx_mod.FIXTURES for s in bc.SCALES}
    for name, row in overrides.items():
        key, scale = name.rsplit("_", 1)
        rows[(key, int(scale))] = row
    return rows


def _verdicts(rows: dict[tuple[str, int], bc.Row]) -> dict[str, str]:
    return {it["id"]: it["verdict"] for it in bc.evaluate(rows)}


def test_all_good_passes() -> None:
    v = _verdicts(_all_rows())
    assert v == {"Z1": "PASS", "Z2": "PASS", "Z3a": "INFO", "Z3b": "INFO", "Z4": "PASS", "Z5": "PASS",
                 "T1": "PASS", "T2": "PASS", "T3": "PASS"}


def test_size_and_speed_failures() -> None:
    sizes = {**GOOD_SIZES, bc.QDF_COMP: 96}  # larger than zstd-3 and than balanced
    ms = {**GOOD_MS, bc.DEC_COMP: 6.0, bc.ENC_BAL: 11.0, bc.ENC_COMP: 31.0}
    v = _verdicts(_all_rows(rtb_100=_row("rtb", 100, sizes, ms)))
    assert v["Z1"] == "FAIL" and v["Z5"] == "FAIL"
    assert v["Z2"] == "PASS"  # one lost fixture of six still meets ">= 5 of 6"
    assert v["T1"] == v["T2"] == v["T3"] == "FAIL"


def test_speed_is_judged_on_100x_only() -> None:
    slow = {**GOOD_MS, bc.DEC_COMP: 9.0, bc.ENC_BAL: 20.0}
    v = _verdicts(_all_rows(logs_1=_row("logs", 1, GOOD_SIZES, slow)))
    assert v["T1"] == "PASS" and v["T2"] == "PASS"


def test_vortex_needs_five_fixtures_at_both_scales() -> None:
    big = {**GOOD_SIZES, bc.VX_DEFAULT: 79}
    v = _verdicts(_all_rows(rtb_1=_row("rtb", 1, big), iot_100=_row("iot", 100, big)))
    assert v["Z2"] == "FAIL"


def test_lossless_failure_is_a_fail_not_a_pass() -> None:
    row = _row("events", 1, GOOD_SIZES, GOOD_MS, bad={bc.QDF_COMP: "not lossless: column 'ts': values differ"})
    v = _verdicts(_all_rows(events_1=row))
    assert v["Z1"] == "FAIL" and v["Z5"] == "FAIL"
    assert v["Z4"] == "PASS"  # balanced is unaffected


def test_missing_cells_are_incomplete() -> None:
    rows = {(k, s): r for (k, s), r in _all_rows().items() if k == "rtb"}
    v = _verdicts(rows)
    assert v["Z1"] == v["Z4"] == v["Z5"] == v["T1"] == "INCOMPLETE"


def test_time_box() -> None:
    t0 = time.perf_counter()
    with pytest.raises(bc.CallTimeout):
        bc._bounded(lambda: time.sleep(5), 0.2)
    assert time.perf_counter() - t0 < 2


def test_smoke_one_fixture(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("vortex")
    assert bc.main(["--fixtures", "events", "--scales", "1", "--rounds", "1", "--no-save"]) == 0
    out = capsys.readouterr().out
    assert "## Summary" in out
    for ident in ("Z1", "Z2", "Z3a", "Z3b", "Z4", "Z5", "T1", "T2", "T3"):
        assert f"| {ident} |" in out
    assert "Events 1024" in out
