"""``df.to_qdf`` and ``df.qdf``: bytes vs file, explain columns, safe and idempotent registration.

Contract: ``df.to_qdf()`` is exactly ``qdf.encode(df)``, ``df.to_qdf(path)`` writes the
same data as ``qdf.write_qdf`` and returns None, ``df.qdf.explain()`` is ``qdf.explain``
of the encoded frame; registering twice changes nothing, a foreign attribute of the
same name is never replaced, and registering before pandas is imported costs no import.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import qdf_columnar as qdf
from qdf_columnar import accessor
from qdf_columnar.errors import InvalidOptionError, QdfWarning

accessor.register()


@pytest.fixture
def df() -> pd.DataFrame:
    n = 300
    return pd.DataFrame({
        "id": np.arange(n, dtype=np.int64),
        "level": pd.Categorical(["INFO", "WARN", "ERROR"] * (n // 3)),
        "msg": [f"message {i % 17}" for i in range(n)],
        "price": np.linspace(0, 10, n),
        "ok": np.arange(n) % 2 == 0,
    })


def test_registered_on_dataframe(df: pd.DataFrame) -> None:
    assert isinstance(df.qdf, accessor.QdfAccessor)
    assert isinstance(df.to_qdf, accessor.ToQdf)
    assert getattr(pd.DataFrame.to_qdf, "_qdf_columnar_accessor", False)


def test_to_qdf_without_path_is_encode(df: pd.DataFrame) -> None:
    buf = df.to_qdf()
    assert isinstance(buf, bytes) and buf[:4] == b"QDF\x01"
    assert buf == qdf.encode(df)
    assert qdf.decode(buf).equals(df)
    assert df.to_qdf(mode="speed") == qdf.encode(df, mode="speed")
    assert df.to_qdf(mode="compression", column_index=False) == qdf.encode(df, mode="compression", column_index=False)
    assert df.qdf.to_bytes() == buf
    assert df.qdf.to_bytes(mode="speed") == qdf.encode(df, mode="speed")


def test_to_qdf_with_path_writes_a_file(df: pd.DataFrame, tmp_path) -> None:
    path = tmp_path / "x.qdf"
    assert df.to_qdf(path, row_group_size=100) is None
    f = qdf.QdfFile(path)
    assert f.num_rows == len(df) and f.num_row_groups == 3
    f.close()
    pd.testing.assert_frame_equal(qdf.read_qdf(path), df)
    df.to_qdf(str(path), append=True)
    assert qdf.QdfFile(path).num_rows == 2 * len(df)
    # the same bytes as write_qdf with the same options
    other = tmp_path / "y.qdf"
    qdf.write_qdf(df, other, row_group_size=100)
    df.to_qdf(tmp_path / "z.qdf", row_group_size=100)
    assert (tmp_path / "z.qdf").read_bytes() == other.read_bytes()


@pytest.mark.parametrize("option", ["row_group_size", "append", "storage_options"])
def test_file_options_need_a_path(df: pd.DataFrame, option: str) -> None:
    with pytest.raises(InvalidOptionError, match=f"{option}= applies only when writing a .qdf file"):
        df.to_qdf(**{option: 1})


def test_bad_options_are_reported(df: pd.DataFrame) -> None:
    with pytest.raises(InvalidOptionError):
        df.to_qdf(mode="fastest")
    with pytest.raises(TypeError):
        df.to_qdf(level=3)


def test_explain_columns_and_shares(df: pd.DataFrame) -> None:
    out = df.qdf.explain()
    assert list(out.columns) == ["column", "kind", "nullable", "codec", "bytes", "share"]
    assert set(df.columns) <= set(out["column"])
    buf = qdf.encode(df, mode="compression")
    assert int(out["bytes"].sum()) == len(buf)
    assert out["share"].sum() == pytest.approx(1.0, abs=0.01)
    pd.testing.assert_frame_equal(out, qdf.explain(buf))
    balanced = df.qdf.explain(mode="balanced")
    assert int(balanced["bytes"].sum()) == len(qdf.encode(df))


def test_register_is_idempotent() -> None:
    before = pd.DataFrame.__dict__["qdf"], pd.DataFrame.__dict__["to_qdf"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        accessor.register()
        accessor.register(defer=False)
        accessor._done = False  # even a second full install leaves ours alone, without warnings
        try:
            accessor.register()
        finally:
            accessor._done = True
    assert (pd.DataFrame.__dict__["qdf"], pd.DataFrame.__dict__["to_qdf"]) == before


def test_foreign_attribute_is_not_clobbered(monkeypatch: pytest.MonkeyPatch) -> None:
    def foreign(self: pd.DataFrame) -> str:
        return "someone else's"

    monkeypatch.setattr(pd.DataFrame, "to_qdf", foreign)
    monkeypatch.setattr(accessor, "_done", False)
    with pytest.warns(QdfWarning, match="already has an attribute 'to_qdf'"):
        accessor.register()
    assert pd.DataFrame.to_qdf is foreign
    assert pd.DataFrame({"a": [1]}).to_qdf() == "someone else's"
    assert accessor.ToQdf(pd.DataFrame({"a": [1]}))() == qdf.encode(pd.DataFrame({"a": [1]}))


DEFERRED = """
import sys
import qdf_columnar.accessor as acc
acc.register(); acc.register()
assert "pandas" not in sys.modules, "register() imported pandas"
import pandas as pd
import qdf_columnar as qdf
df = pd.DataFrame({"a": [1, 2, 3]})
assert df.to_qdf() == qdf.encode(df)
assert list(df.qdf.explain()["column"])[1] == "a"
assert not any(type(f).__name__ == "_PandasImportHook" for f in sys.meta_path)
print("ok")
"""


def test_register_before_pandas_is_imported_costs_no_import() -> None:
    res = subprocess.run([sys.executable, "-c", DEFERRED], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"
