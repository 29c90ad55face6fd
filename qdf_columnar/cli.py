"""The ``qdf`` command line: ``qdf warmup`` compiles every kernel ahead of time.

More subcommands (inspect, head, convert) arrive with the .qdf file layer. The entry
point is ``main(argv)`` so tests can call it in-process.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="qdf", description="qdf v1 columnar batches for Python")
    sub = parser.add_subparsers(dest="command", required=True)
    warm = sub.add_parser("warmup", help="compile (or load from the on-disk cache) every Numba kernel")
    warm.add_argument("-q", "--quiet", action="store_true", help="print only the total time")
    sub.add_parser("version", help="print the package version")
    args = parser.parse_args(argv)

    if args.command == "version":
        from . import __version__

        print(__version__)
        return 0
    from qdf_kernels import warmup

    def progress(name: str, seconds: float) -> None:
        if not args.quiet:
            print(f"  {name:<12} {seconds:6.2f} s", flush=True)

    if not args.quiet:
        print("compiling qdf kernels (cached on disk after the first run)...", flush=True)
    total = warmup(progress)
    print(f"kernels ready in {total:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
