"""Run the fuzz harnesses and report executions, coverage and findings per harness.

``python -m fuzz.run`` builds the seed corpora (fuzz/frames.py), runs every harness
in its own libFuzzer process and prints one line per harness: executions, ``cov:``
(coverage edges) and ``ft:`` (features) from libFuzzer's last status line, and the
findings (crash / timeout / oom reproducer files). The exit status is non-zero when
any harness found something or did not finish its runs.

Layout (all under ``--workdir``, default ``fuzz/work``, gitignored):
``seeds/<target>`` regenerated on every run, ``corpus/<target>`` the growing corpus
libFuzzer adds interesting inputs to (kept between runs, so long runs build on each
other; ``--fresh`` uses an empty one), ``findings/<target>/`` the reproducers,
``logs/<target>.log`` libFuzzer's output. Replay a reproducer with
``python -m fuzz.fuzz_<target> fuzz/work/findings/<target>/crash-...``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("decode", "loads", "read_qdf", "stream")
FINDING_PREFIXES = ("crash-", "timeout-", "oom-", "leak-")

_STATUS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)", re.MULTILINE)
_EXECUTED = re.compile(r"stat::number_of_executed_units: (\d+)")


@dataclass
class Result:
    target: str
    returncode: int
    executions: int
    cov: int
    ft: int
    seconds: float
    findings: list[Path] = field(default_factory=list)
    log: Path | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.findings


def build_seeds(seed_dir: Path, targets: list[str]) -> None:
    """Write the seed corpora in a separate process (the harnesses import an instrumented qdf_columnar)."""
    subprocess.run([sys.executable, "-m", "fuzz.frames", str(seed_dir), *targets], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)


def parse_log(text: str) -> tuple[int, int, int]:
    """(executions, cov, ft) from libFuzzer's output (the last status line and the final stats)."""
    status = _STATUS.findall(text)
    execs, cov, ft = (int(x) for x in status[-1]) if status else (0, 0, 0)
    done = _EXECUTED.findall(text)
    return (int(done[-1]) if done else execs), cov, ft


def run_target(target: str, workdir: Path, *, runs: int | None, max_time: int | None, timeout: int,
               rss_limit_mb: int, seed: int | None, corpus: Path) -> Result:
    """Run one harness to completion (or to its first finding)."""
    findings = workdir / "findings" / target
    logs = workdir / "logs"
    findings.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    corpus.mkdir(parents=True, exist_ok=True)
    before = set(findings.iterdir())
    cmd = [sys.executable, "-m", f"fuzz.fuzz_{target}", f"-timeout={timeout}", f"-rss_limit_mb={rss_limit_mb}",
           f"-artifact_prefix={findings}/", "-print_final_stats=1"]
    if runs is not None:
        cmd.append(f"-runs={runs}")
    if max_time is not None:
        cmd.append(f"-max_total_time={max_time}")
    if seed is not None:
        cmd.append(f"-seed={seed}")
    cmd += [str(corpus), str(workdir / "seeds" / target)]
    log = logs / f"{target}.log"
    t0 = time.perf_counter()
    with open(log, "wb") as out:
        rc = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode
    seconds = time.perf_counter() - t0
    execs, cov, ft = parse_log(log.read_text(errors="replace"))
    new = sorted(p for p in set(findings.iterdir()) - before if p.name.startswith(FINDING_PREFIXES))
    return Result(target, rc, execs, cov, ft, seconds, new, log)


def _runs_arg(text: str) -> dict[str, int] | int:
    """``250000`` (every harness) or ``decode=300000,read_qdf=50000`` (per harness)."""
    if "=" not in text:
        return int(text)
    runs = {}
    for item in text.split(","):
        name, _, n = item.partition("=")
        if name not in TARGETS:
            raise argparse.ArgumentTypeError(f"unknown harness {name!r} in --runs")
        runs[name] = int(n)
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated, from " + ", ".join(TARGETS))
    ap.add_argument("--runs", type=_runs_arg, help="executions per harness: N, or target=N,... (others unlimited)")
    ap.add_argument("--max-time", type=int, help="seconds per harness")
    ap.add_argument("--timeout", type=int, default=25, help="seconds one input may take (a hang)")
    ap.add_argument("--rss-limit-mb", type=int, default=3072, help="memory one process may use (a huge allocation)")
    ap.add_argument("--jobs", type=int, default=1, help="harnesses run at the same time")
    ap.add_argument("--seed", type=int, help="libFuzzer's random seed (default: random)")
    ap.add_argument("--workdir", type=Path, default=ROOT / "fuzz" / "work")
    ap.add_argument("--fresh", action="store_true", help="start from the seeds only, in a temporary corpus")
    args = ap.parse_args(argv)
    targets = [t for t in args.targets.split(",") if t]
    unknown = sorted(set(targets) - set(TARGETS))
    if unknown:
        ap.error(f"unknown targets {unknown}")
    if args.runs is None and args.max_time is None:
        ap.error("give --runs and/or --max-time")
    workdir = args.workdir.resolve()
    build_seeds(workdir / "seeds", targets)
    with tempfile.TemporaryDirectory(prefix="qdf-fuzz-corpus-") as tmp:
        def corpus(t: str) -> Path:
            return Path(tmp) / t if args.fresh else workdir / "corpus" / t

        def one(t: str) -> Result:
            runs = args.runs.get(t) if isinstance(args.runs, dict) else args.runs
            return run_target(t, workdir, runs=runs, max_time=args.max_time, timeout=args.timeout,
                              rss_limit_mb=args.rss_limit_mb, seed=args.seed, corpus=corpus(t))

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(one, targets))
    print(f"{'harness':<10} {'executions':>11} {'cov':>6} {'ft':>7} {'seconds':>8}  findings")
    for r in results:
        status = ", ".join(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p) for p in r.findings) or "none"
        if r.returncode and not r.findings:
            status = f"exit status {r.returncode}, see {r.log}"
        print(f"{r.target:<10} {r.executions:>11} {r.cov:>6} {r.ft:>7} {r.seconds:>8.1f}  {status}")
    total = sum(r.executions for r in results)
    bad = [r for r in results if not r.ok]
    print(f"total executions: {total}; harnesses with findings or errors: {len(bad)}")
    for r in bad:
        print(f"--- {r.target}: tail of {r.log}")
        print("\n".join(r.log.read_text(errors="replace").splitlines()[-40:]))
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
