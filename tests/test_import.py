"""Importing qdf_columnar compiles no kernel, and a warm-cache process round-trips quickly."""

from __future__ import annotations

import subprocess
import sys
import time

CHECK_NO_COMPILE = """
import qdf_columnar, qdf_columnar.api, qdf_columnar.wire.values
import qdf_kernels, qdf_kernels._jit as j, importlib
for m in qdf_kernels._warmup.KERNEL_MODULES:
    importlib.import_module('qdf_kernels.' + m)
assert j.REGISTRY, 'no kernels registered'
compiled = [d.py_func.__name__ for d in j.REGISTRY if d.signatures]
assert not compiled, compiled
print(len(j.REGISTRY))
"""

ROUND_TRIP = """
import pandas as pd, qdf_columnar as qdf
df = pd.DataFrame({"a": range(100), "s": ["x", "yy"] * 50, "f": [0.5] * 100})
out = qdf.decode(qdf.encode(df))
assert out.equals(df), out
"""


def test_import_compiles_nothing() -> None:
    res = subprocess.run([sys.executable, "-c", CHECK_NO_COMPILE], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert int(res.stdout.strip()) > 5


def test_warm_cache_round_trip_under_2_5_s() -> None:
    subprocess.run([sys.executable, "-c", ROUND_TRIP], check=True, timeout=300)  # fills the cache
    best = float("inf")
    for _ in range(2):  # the machine is shared: take the better of two runs
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-c", ROUND_TRIP], capture_output=True, text=True, timeout=120)
        best = min(best, time.perf_counter() - t0)
        assert res.returncode == 0, res.stderr
    assert best < 2.5, f"warm-cache import + round trip took {best:.2f} s"
