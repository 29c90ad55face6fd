"""Crash safety of write_qdf (docs/FORMAT.md §4.6): a writer killed with SIGKILL mid-write
never leaves a truncated file under the target name.

Contract: after the kill the target is absent (first write) or holds exactly the
previous complete file (overwrite, append), which still reads back.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

# Streams row groups forever (one every few ms); prints once some are on disk.
WRITER = textwrap.dedent("""
    import sys, time
    import numpy as np, pandas as pd
    import qdf_columnar as qdf

    path, append = sys.argv[1], sys.argv[2] == "append"

    def batches():
        for i in range(10**6):
            if i == 5:
                print("writing", flush=True)
            yield pd.DataFrame({"x": np.arange(i * 500, (i + 1) * 500), "s": [f"v{i}"] * 500})
            time.sleep(0.002)

    qdf.write_qdf(batches(), path, row_group_size=500, append=append, mode="balanced")
""")


def _kill_mid_write(path, append: bool, delay: float) -> list[str]:
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "append" if append else "new"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "writing", proc.stderr.read()
        time.sleep(delay)
        temps = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    return temps


def _previous(path) -> pd.DataFrame:
    df = pd.DataFrame({"x": np.arange(1000), "s": ["old"] * 1000})
    qdf.write_qdf(df, path, row_group_size=300)
    return df


@pytest.mark.parametrize("delay", [0.0, 0.15])
def test_killed_first_write_leaves_no_file(tmp_path, delay):
    path = tmp_path / "new.qdf"
    temps = _kill_mid_write(path, append=False, delay=delay)
    assert temps, "the writer was killed before it started writing"
    assert not path.exists()


def test_killed_overwrite_keeps_the_previous_file(tmp_path):
    path = tmp_path / "over.qdf"
    df = _previous(path)
    before = path.read_bytes()
    assert _kill_mid_write(path, append=False, delay=0.1)
    assert path.read_bytes() == before
    pd.testing.assert_frame_equal(qdf.read_qdf(path), df)


def test_killed_append_keeps_the_previous_file(tmp_path):
    path = tmp_path / "app.qdf"
    df = _previous(path)
    before = path.read_bytes()
    assert _kill_mid_write(path, append=True, delay=0.1)
    assert path.read_bytes() == before
    pd.testing.assert_frame_equal(qdf.read_qdf(path), df)
    # The file still takes appends after the crash.
    qdf.write_qdf(pd.DataFrame({"x": [7], "s": ["new"]}), path, append=True)
    assert qdf.QdfFile(path).num_rows == 1001


def test_failed_write_removes_its_temporary_and_keeps_the_target(tmp_path):
    path = tmp_path / "t.qdf"
    _previous(path)
    before = path.read_bytes()

    def batches():
        yield pd.DataFrame({"x": np.arange(10), "s": ["a"] * 10})
        raise RuntimeError("source failed")

    with pytest.raises(RuntimeError):
        qdf.write_qdf(batches(), path, row_group_size=3)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.qdf"]
