"""The qdf command line, in-process and once as a subprocess."""

from __future__ import annotations

import subprocess
import sys

from qdf_columnar.cli import main


def test_warmup_in_process(capsys) -> None:
    assert main(["warmup"]) == 0
    out = capsys.readouterr().out
    assert "kernels ready" in out and "strings" in out


def test_version_subprocess() -> None:
    res = subprocess.run([sys.executable, "-m", "qdf_columnar.cli", "version"], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip()
