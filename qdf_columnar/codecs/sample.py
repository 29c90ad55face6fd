"""Samples for codec choices: a few whole runs of consecutive rows, not scattered rows.

As in BtrBlocks and Vortex, a codec is judged on about 1% of a column taken as runs,
so that runs, sortedness and periodicity survive in the sample (a scattered sample of
a column sorted in long runs looks random). Deterministic: the same column always
gives the same sample, so encoding is reproducible.
"""

from __future__ import annotations

import numpy as np

#: Share of the rows a sample holds, with a floor so small columns are judged whole.
FRACTION = 0.01
MIN_SAMPLE = 1024
#: Runs per sample, evenly spread over the column.
RUNS = 16


def run_sample(n: int, *, fraction: float = FRACTION, min_sample: int = MIN_SAMPLE,
               runs: int = RUNS) -> np.ndarray | None:
    """Row numbers of a sample of ``n`` rows, or None when the sample is the whole column.

    ``runs`` runs of equal length, evenly spaced, the first at row 0, ``max(min_sample,
    fraction * n)`` rows in all.
    """
    size = max(min_sample, int(n * fraction))
    if size >= n:
        return None
    run_len = max(1, size // runs)
    starts = np.linspace(0, n - run_len, runs).astype(np.int64)
    return (starts[:, None] + np.arange(run_len, dtype=np.int64)[None, :]).ravel()


__all__ = ["run_sample"]
