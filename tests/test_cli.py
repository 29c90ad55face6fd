"""The qdf command line: every command in-process through ``main(argv)`` and once as a subprocess.

Contract: ``inspect`` describes .qdf files and single v1 buffers; ``head`` prints the
first matching rows and reads no row group it does not need; ``convert`` streams
between .qdf, Parquet, Arrow IPC, CSV/TSV and JSON lines without changing the data;
the progress bar shows only on a terminal or with ``--progress``; expected failures
print one line and exit with status 2, never a traceback.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.json as pjson
import pyarrow.parquet as pq
import pytest

import qdf_columnar as qdf
from qdf_columnar import cli
from qdf_columnar.cli import main

N = 1000


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame({
        "code": rng.choice([200, 301, 404, 500, 503], N).astype(np.int64),
        "level": pd.Categorical(rng.choice(["ERROR", "WARN", "INFO", "DEBUG"], N)),
        "msg": [f"request {i}" for i in range(N)],
        "user_id": pd.array([None if i % 7 == 0 else i for i in range(N)], dtype="Int64"),
        "ts": pd.date_range("2026-01-01", periods=N, freq="s", tz="UTC"),
        "lat": rng.random(N),
    })


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli")
    df = _frame()
    qdf.write_qdf(df, d / "logs.qdf", row_group_size=250)
    (d / "logs.bin").write_bytes(qdf.encode(df))
    table = pa.Table.from_pandas(df, preserve_index=False)
    plain = table.set_column(1, "level", table.column("level").cast(pa.string()))
    pcsv.write_csv(plain, d / "logs.csv")
    with open(d / "logs.jsonl", "w") as fh:
        text = df.assign(ts=df["ts"].dt.strftime("%Y-%m-%dT%H:%M:%S"), level=df["level"].astype(str))
        for r in text.to_dict("records"):
            fh.write(json.dumps({k: (None if v is pd.NA else v) for k, v in r.items()}) + "\n")
    with pa.ipc.new_file(d / "logs.arrow", table.schema) as w:
        for batch in table.to_batches(max_chunksize=300):
            w.write_batch(batch)
    return {"dir": d, "qdf": d / "logs.qdf", "bin": d / "logs.bin", "csv": d / "logs.csv",
            "jsonl": d / "logs.jsonl", "arrow": d / "logs.arrow"}


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(rc: int, err: str, *fragments: str) -> None:
    assert rc == 2
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for f in fragments:
        assert f in lines[0], lines[0]


# ----------------------------------------------------------------------------- warmup / version


def test_warmup_in_process(capsys) -> None:
    assert main(["warmup"]) == 0
    out = capsys.readouterr().out
    assert "kernels ready" in out and "strings" in out


def test_version_in_process(capsys) -> None:
    rc, out, _ = run(capsys, "version")
    assert rc == 0 and out.strip() == qdf.__version__


def test_version_subprocess() -> None:
    res = subprocess.run([sys.executable, "-m", "qdf_columnar.cli", "version"], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip()


def test_warmup_subprocess() -> None:
    res = subprocess.run([sys.executable, "-m", "qdf_columnar.cli", "warmup", "-q"], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("kernels ready")


# ----------------------------------------------------------------------------- inspect


def test_inspect_qdf_file(files, capsys) -> None:
    rc, out, err = run(capsys, "inspect", files["qdf"])
    assert rc == 0 and not err
    size = files["qdf"].stat().st_size
    assert f"qdf file, container v2.0, {size:,} bytes, 1,000 rows in 4 row groups" in out
    for section in ("schema (6 columns):", "row groups (4):", "columns:"):
        assert section in out
    for name in ("code", "level", "msg", "user_id", "ts", "lat", "timestamp[us, tz=UTC]"):
        assert name in out
    assert "Pack" in out and "ColStr" in out and "share" in out


def test_inspect_lists_first_and_last_row_groups(files, capsys) -> None:
    rc, out, _ = run(capsys, "inspect", files["qdf"], "--row-groups", "2")
    assert rc == 0
    groups = out.split("row groups (4):")[1].split("columns:")[0]
    assert "..." in groups and len(groups.strip().splitlines()) == 4  # header, first, ..., last


def test_inspect_json(files, capsys) -> None:
    rc, out, _ = run(capsys, "inspect", files["qdf"], "--json", "--sample", "1")
    assert rc == 0
    info = json.loads(out)
    assert info["format"] == "qdf" and info["rows"] == N and len(info["row_groups"]) == 4
    assert [c["column"] for c in info["columns"]] == list(_frame().columns)
    assert "first 1 row groups" in info["summary"]


def test_inspect_v1_buffer(files, capsys) -> None:
    rc, out, err = run(capsys, "inspect", files["bin"])
    assert rc == 0 and not err
    assert f"qdf v1 buffer, {files['bin'].stat().st_size:,} bytes, 1,000 rows" in out
    assert "col_index" in out and "(header + shape)" in out and "row groups" not in out


def test_inspect_errors(files, capsys) -> None:
    rc, _, err = run(capsys, "inspect", files["csv"])
    assert_one_line_error(rc, err, "qdf inspect: error: DecodeError", "neither a .qdf file")
    rc, _, err = run(capsys, "inspect", files["dir"] / "missing.qdf")
    assert_one_line_error(rc, err, "No such file or directory")


def test_inspect_subprocess(files) -> None:
    script = Path(sys.executable).with_name("qdf")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "qdf_columnar.cli"]
    res = subprocess.run([*argv, "inspect", str(files["qdf"])], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "row groups (4)" in res.stdout
    bad = subprocess.run([*argv, "inspect", str(files["csv"])], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- head


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.strip().splitlines()]


def test_head_with_columns_and_where(files, capsys) -> None:
    rc, out, err = run(capsys, "head", files["qdf"], "-n", "5", "--columns", "code,level,msg",
                       "--where", "code >= 500 and level == 'ERROR'")
    assert rc == 0 and not err
    df = _frame()
    want = df[(df["code"] >= 500) & (df["level"] == "ERROR")].head(5)
    rows = _rows(out)
    assert rows[0] == ["code", "level", "msg"]
    assert [r[0] for r in rows[1:]] == [str(v) for v in want["code"]]
    assert [" ".join(r[2:]) for r in rows[1:]] == list(want["msg"])


def test_head_default_ten_rows(files, capsys) -> None:
    rc, out, _ = run(capsys, "head", files["qdf"])
    assert rc == 0 and len(out.strip().splitlines()) == 11


def test_head_no_match_and_zero_rows(files, capsys) -> None:
    rc, out, _ = run(capsys, "head", files["qdf"], "--where", "code > 1000", "--columns", "code,msg")
    assert rc == 0 and out.strip().splitlines() == ["code  msg", "(0 rows)"]
    rc, out, _ = run(capsys, "head", files["qdf"], "-n", "0")
    assert rc == 0 and "(0 rows)" in out


@pytest.mark.parametrize("kind", ["bin", "csv", "jsonl", "arrow"])
def test_head_other_formats(files, capsys, kind: str) -> None:
    rc, out, err = run(capsys, "head", files[kind], "-n", "3", "--columns", "msg,code", "--where",
                       "code = 404 and user_id is not null")
    assert rc == 0, err
    df = _frame()
    want = df[(df["code"] == 404) & df["user_id"].notna()].head(3)
    assert [" ".join(r[:-1]) for r in _rows(out)[1:]] == list(want["msg"])


def test_head_reads_only_the_row_groups_it_needs(files, tmp_path, capsys) -> None:
    path = tmp_path / "damaged.qdf"
    data = bytearray(files["qdf"].read_bytes())
    last = qdf.QdfFile(files["qdf"]).row_groups[-1]
    data[last.offset + last.length // 2] ^= 0xFF  # the last row group no longer matches its CRC
    path.write_bytes(bytes(data))
    rc, out, err = run(capsys, "head", path, "-n", "3")
    assert rc == 0 and len(out.strip().splitlines()) == 4, err
    rc, _, err = run(capsys, "head", path, "-n", str(N))
    assert_one_line_error(rc, err, "qdf head: error: CorruptDataError", "checksum mismatch")
    # statistics prune the damaged group: a filter that only the first group can match still works
    rc, out, err = run(capsys, "head", path, "-n", str(N), "--where", "ts < timestamp '2026-01-01T00:01:00Z'")
    assert rc == 0 and len(out.strip().splitlines()) == 61, err


@pytest.mark.parametrize(("argv", "fragments"), [
    (["--where", "code >> 3"], ["QueryError", "position 6"]),
    (["--where", "code == 'x'"], ["QueryError", "cannot be compared with a int column"]),
    (["--columns", "code,nope"], ["QueryError", "unknown column 'nope'"]),
    (["--columns", "code,"], ["QueryError", "empty name"]),
    (["--where", "nope > 1"], ["QueryError", "unknown column 'nope'"]),
    (["-n", "-1"], ["InvalidOptionError", "-n must be >= 0"]),
])
def test_head_errors(files, capsys, argv: list[str], fragments: list[str]) -> None:
    rc, _, err = run(capsys, "head", files["qdf"], *argv)
    assert_one_line_error(rc, err, *fragments)


def test_head_subprocess(files) -> None:
    res = subprocess.run([sys.executable, "-m", "qdf_columnar.cli", "head", str(files["qdf"]), "-n", "2",
                          "--where", "level in ('WARN')"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.strip().splitlines()) == 3 and "WARN" in res.stdout


# ----------------------------------------------------------------------------- convert


def _convert(capsys, *argv: object) -> str:
    rc, out, err = run(capsys, "convert", *argv)
    assert rc == 0, err
    assert not out
    return err


def test_qdf_parquet_qdf_round_trip(files, tmp_path, capsys) -> None:
    _convert(capsys, files["qdf"], tmp_path / "x.parquet")
    _convert(capsys, tmp_path / "x.parquet", tmp_path / "back.qdf", "--row-group-size", "400", "--mode", "balanced")
    df = _frame()
    pd.testing.assert_frame_equal(pq.read_table(tmp_path / "x.parquet").to_pandas(), df)
    pd.testing.assert_frame_equal(qdf.read_qdf(tmp_path / "back.qdf"), df)
    with qdf.QdfFile(tmp_path / "back.qdf") as f:
        assert [g.num_rows for g in f.row_groups] == [400, 400, 200]


def test_qdf_arrow_qdf_round_trip(files, tmp_path, capsys) -> None:
    _convert(capsys, files["qdf"], tmp_path / "x.feather", "--compression", "zstd")
    _convert(capsys, tmp_path / "x.feather", tmp_path / "back.qdf")
    pd.testing.assert_frame_equal(qdf.read_qdf(tmp_path / "back.qdf"), _frame())


@pytest.mark.parametrize("kind", ["csv", "jsonl", "arrow", "bin"])
def test_to_qdf_keeps_the_data(files, tmp_path, capsys, kind: str) -> None:
    out = tmp_path / "out.qdf"
    _convert(capsys, files[kind], out)
    got = qdf.read_qdf(out, output="arrow")
    src = files[kind]
    want = {
        "csv": lambda: pcsv.read_csv(src),
        "jsonl": lambda: pjson.read_json(src),
        "arrow": lambda: pa.ipc.open_file(src).read_all(),
        "bin": lambda: qdf.decode(src.read_bytes(), output="arrow"),
    }[kind]()
    assert got.equals(want.cast(got.schema)) if kind == "bin" else got.equals(want)


def test_small_text_blocks_stream_in_many_batches(files, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(cli, "_TEXT_BLOCK", 4096)
    for kind in ("csv", "jsonl"):
        out = tmp_path / f"{kind}.qdf"
        err = _convert(capsys, files[kind], out, "--row-group-size", "300", "--progress")
        assert "wrote 1,000 rows" in err
        want = pcsv.read_csv(files[kind]) if kind == "csv" else pjson.read_json(files[kind])
        assert qdf.read_qdf(out, output="arrow").equals(want)
        assert qdf.QdfFile(out).num_row_groups == 4


@pytest.mark.parametrize("name", ["x.csv", "x.tsv", "x.csv.gz", "x.jsonl", "x.ndjson.gz", "x.arrow", "x.parquet"])
def test_from_qdf_to_every_format(files, tmp_path, capsys, name: str) -> None:
    out = tmp_path / name
    _convert(capsys, files["qdf"], out, "--columns", "code,msg,user_id,lat", "--where", "user_id is not null")
    df = _frame()
    want = df[df["user_id"].notna()][["code", "msg", "user_id", "lat"]].reset_index(drop=True)
    back = tmp_path / "back.qdf"
    _convert(capsys, out, back)
    got = qdf.read_qdf(back)
    assert len(got) == len(want) and list(got.columns) == list(want.columns)
    assert got["code"].tolist() == want["code"].tolist()
    assert got["msg"].tolist() == want["msg"].tolist()
    assert got["user_id"].astype("int64").tolist() == want["user_id"].astype("int64").tolist()
    np.testing.assert_allclose(got["lat"].to_numpy(), want["lat"].to_numpy())


def test_json_lines_output(files, tmp_path, capsys) -> None:
    t = pa.table({"ts": pa.array([0, 1_500_000, None], pa.timestamp("us", "UTC")), "f": [1.5, float("nan"), None],
                  "b": pa.array([b"\x00ab", None, b""]), "d": pa.array([1, 2, 3]).dictionary_encode()})
    qdf.write_qdf(t, tmp_path / "t.qdf")
    _convert(capsys, tmp_path / "t.qdf", tmp_path / "t.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert lines == [
        {"ts": "1970-01-01T00:00:00Z", "f": 1.5, "b": "AGFi", "d": 1},
        {"ts": "1970-01-01T00:00:01.5Z", "f": None, "b": None, "d": 2},
        {"ts": None, "f": None, "b": "", "d": 3},
    ]


def test_parquet_dictionaries_that_change_per_batch_to_arrow(tmp_path, capsys) -> None:
    t1 = pa.table({"c": pa.array(["a", "b", "a"]).dictionary_encode(), "x": [1, 2, 3]})
    t2 = pa.table({"c": pa.array(["c", "a", None]).dictionary_encode(), "x": [4, 5, 6]})
    with pq.ParquetWriter(tmp_path / "d.parquet", t1.schema) as w:
        w.write_table(t1)
        w.write_table(t2)
    _convert(capsys, tmp_path / "d.parquet", tmp_path / "d.arrow", "--row-group-size", "2")
    got = pa.ipc.open_file(tmp_path / "d.arrow").read_all()
    assert got.column("c").to_pylist() == ["a", "b", "a", "c", "a", None]
    assert got.column("x").to_pylist() == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("name", ["none.qdf", "none.parquet", "none.arrow", "none.csv"])
def test_empty_result_keeps_the_schema(files, tmp_path, capsys, name: str) -> None:
    out = tmp_path / name
    _convert(capsys, files["qdf"], out, "--where", "code > 1000", "--columns", "code,msg")
    back = tmp_path / "back.qdf"
    if not name.endswith(".csv"):  # a CSV header alone has no types
        _convert(capsys, out, back)
        got = qdf.read_qdf(back, output="arrow")
        assert got.num_rows == 0 and got.column_names == ["code", "msg"]
    else:
        assert out.read_text().strip() == '"code","msg"'


def test_progress_only_when_asked_or_on_a_terminal(files, tmp_path, capsys) -> None:
    assert _convert(capsys, files["qdf"], tmp_path / "a.parquet") == ""
    err = _convert(capsys, files["qdf"], tmp_path / "b.parquet", "--progress")
    assert "convert: 1,000 / 1,000 rows  100% |####################|" in err and "rows/s" in err
    assert "wrote 1,000 rows to" in err
    err = _convert(capsys, files["csv"], tmp_path / "c.parquet", "--progress")
    assert "convert: 1,000 rows  100%" in err


def test_progress_bar_redraws_in_place_on_a_terminal() -> None:
    inp = cli._Input(None, total_rows=1000)
    stream = io.StringIO()
    bar = cli._Progress(inp, enabled=True, tty=True, stream=stream)
    bar.update(final=True)
    assert stream.getvalue() == ""  # a run that ends within half a second prints nothing
    bar.t0 -= 10
    bar.last -= 10
    inp.rows_in = 250
    bar.update()
    assert stream.getvalue().startswith("\rconvert: 250 / 1,000 rows   25% |#####               |")
    assert "ETA 0:30" in stream.getvalue() and "\n" not in stream.getvalue()
    inp.rows_in = 1000
    bar.update(final=True)
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\r") == 2
    off = cli._Progress(inp, enabled=False, tty=True, stream=stream)
    off.t0 -= 10
    off.update(final=True)
    assert stream.getvalue().count("\r") == 2


@pytest.mark.parametrize(("argv", "fragments"), [
    (["{qdf}", "{tmp}/x.txt"], ["InvalidOptionError", "pass --to"]),
    (["{qdf}", "{tmp}/x.parquet", "--mode", "speed"], ["--mode applies only to .qdf output"]),
    (["{qdf}", "{tmp}/x.csv", "--compression", "zstd"], ["--compression applies only"]),
    (["{qdf}", "{tmp}/x.jsonl", "--row-group-size", "10"], ["--row-group-size applies only"]),
    (["{qdf}", "{qdf}"], ["same file"]),
    (["{tmp}/missing.csv", "{tmp}/x.qdf"], ["No such file or directory"]),
    (["{qdf}", "{tmp}/x.parquet", "--where", "code >="], ["QueryError", "position 7"]),
    (["{qdf}", "{tmp}/x.parquet", "--columns", "nope"], ["QueryError", "unknown column 'nope'"]),
    (["{csv}", "{tmp}/x.parquet", "--from", "arrow"], ["qdf convert: error: Arrow"]),
    (["{qdf}", "{tmp}/x.arrow", "--compression", "gzip"], ["lz4 or zstd"]),
    (["{qdf}", "memory://cli-test/x.parquet"], ["only .qdf output may be a URL"]),
    (["memory://cli-test/x.csv", "{tmp}/x.qdf"], ["only .qdf files may be URLs"]),
    (["memory://cli-test/missing.qdf", "{tmp}/x.parquet"], ["FileNotFoundError"]),
])
def test_convert_errors(files, tmp_path, capsys, argv: list[str], fragments: list[str]) -> None:
    subs = {"qdf": files["qdf"], "csv": files["csv"], "tmp": tmp_path}
    rc, _, err = run(capsys, "convert", *(a.format(**subs) for a in argv))
    assert_one_line_error(rc, err, *fragments)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no temporary file left behind


def test_usage_errors_exit_2(capsys) -> None:
    for argv in (["convert", "x.qdf"], ["head"], ["convert", "a.qdf", "b.parquet", "--compression", "bogus"], []):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
    assert "usage: qdf" in capsys.readouterr().err


def test_qdf_urls_through_fsspec(files, capsys) -> None:
    _convert(capsys, files["qdf"], "memory://cli-test/logs.qdf", "--where", "code = 500", "--row-group-size", "50")
    rc, out, _ = run(capsys, "head", "memory://cli-test/logs.qdf", "-n", "2", "--columns", "code")
    assert rc == 0 and _rows(out) == [["code"], ["500"], ["500"]]
    rc, out, _ = run(capsys, "inspect", "memory://cli-test/logs.qdf")
    assert rc == 0 and "memory://cli-test/logs.qdf: qdf file" in out


def test_failed_conversion_leaves_no_output(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(cli, "_TEXT_BLOCK", 1024)  # the bad value comes after the block that fixed the types
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n" + "3,4\n" * 5000 + "x,5\n")
    rc, _, err = run(capsys, "convert", tmp_path / "bad.csv", tmp_path / "bad.parquet")
    assert_one_line_error(rc, err, "qdf convert: error:", "CSV conversion error")
    assert not (tmp_path / "bad.parquet").exists()
    assert os.listdir(tmp_path) == ["bad.csv"]


def test_convert_subprocess(files, tmp_path) -> None:
    res = subprocess.run([sys.executable, "-m", "qdf_columnar.cli", "convert", str(files["qdf"]),
                          str(tmp_path / "x.parquet"), "--progress"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "wrote 1,000 rows" in res.stderr and not res.stdout
    pd.testing.assert_frame_equal(pq.read_table(tmp_path / "x.parquet").to_pandas(), _frame())


def test_inspect_stream(tmp_path, capsys) -> None:
    import qdf_columnar as qdf

    for name in ("events.qdfs", "events.bin"):  # by extension, or found out after a failed buffer read
        path = tmp_path / name
        with qdf.StreamWriter(path) as w:
            for i in range(5):
                w.write({"id": i, "level": "INFO"})
            w.write([{"id": 9, "level": "WARN", "extra": 1.5}])
        rc, out, _ = run(capsys, "inspect", path)
        assert rc == 0
        assert "qdf stream" in out and "6 messages (5 records, 1 list of records), 6 rows" in out
        assert "extra" in out and "double" in out
    with qdf.StreamWriter(tmp_path / "values.qdfs") as w:
        w.write("text")
        w.write([1, 2])
    rc, out, _ = run(capsys, "inspect", tmp_path / "values.qdfs")
    assert rc == 0
    assert "2 messages" in out and "schema (0 columns)" in out
