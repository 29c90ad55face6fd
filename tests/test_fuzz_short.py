"""A short run of every fuzz harness (fuzz/): a few thousand executions each, and no finding.

Each harness runs in its own libFuzzer process from its seed corpus (valid encodings
in all three modes) with a fixed random seed, so the same inputs run every time. Any
exception other than a QdfError, a hang or a huge allocation fails the harness's test;
the reproducer is kept under the run's temporary directory (printed in the message).
Skipped where atheris is not installed (it has wheels for Linux x86_64 only).
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("atheris")

from fuzz.run import ROOT, TARGETS, Result, build_seeds, run_target  # noqa: E402 - only with atheris

RUNS = 3000


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Result]:
    """Run the harnesses two at a time (the suite runs on 2 cores) and keep each result."""
    workdir = tmp_path_factory.mktemp("fuzz")
    # Compile (or load) every kernel once, before two harness processes would both compile
    # them into an empty cache (the NUMBA_BOUNDSCHECK=1 pass starts from one).
    subprocess.run([sys.executable, "-m", "qdf_columnar.cli", "warmup"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    build_seeds(workdir / "seeds", list(TARGETS))

    def one(target: str) -> Result:
        return run_target(target, workdir, runs=RUNS, max_time=None, timeout=60, rss_limit_mb=3072, seed=1,
                          corpus=workdir / "corpus" / target)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(TARGETS, pool.map(one, TARGETS)))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("target", TARGETS)
def test_short_fuzz_run(results: dict[str, Result], target: str) -> None:
    r = results[target]
    tail = "\n".join(r.log.read_text(errors="replace").splitlines()[-60:])
    assert r.ok, f"fuzz_{target}: exit status {r.returncode}, reproducers {r.findings}\n{tail}"
    assert r.executions >= RUNS, tail
    assert r.cov > 0 and r.ft > 0, tail
