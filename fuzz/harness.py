"""What every fuzz harness shares: instrumented import of qdf_columnar, kernel warm-up, the rule.

The rule: decoding hostile bytes may only fail with a :class:`qdf_columnar.QdfError`
(a ``DecodeError`` subclass mostly, or a ``QueryError``). Any other exception that
escapes a target (IndexError, TypeError, a bare ValueError, pyarrow errors,
UnicodeDecodeError, MemoryError, SystemError, a Numba error, an IndexError raised by
a bounds-checked kernel under ``NUMBA_BOUNDSCHECK=1``...) reaches atheris, which
records the input as a crash. Hangs and huge allocations are caught by libFuzzer's
``-timeout=`` and ``-rss_limit_mb=``.

Only ``qdf_columnar`` is instrumented. ``qdf_kernels`` cannot be: its functions are
compiled by Numba from their bytecode, and atheris's inserted tracing calls would not
compile in nopython mode (and what runs is machine code anyway). numpy, pyarrow,
pandas and numba are left alone because instrumenting them makes every execution
several times slower without telling us anything about our decoder.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import warnings
from collections.abc import Callable
from types import ModuleType

import atheris

#: Submodules not imported under instrumentation: they pull in heavy optional
#: dependencies (dask) or are command-line front ends no harness calls.
_NOT_INSTRUMENTED = {"qdf_columnar.dask", "qdf_columnar.cli", "qdf_columnar.demo"}

#: Corpus files run once before fuzzing starts (kernels compile or load from the cache).
_WARM_FILES = 400


def import_qdf() -> ModuleType:
    """Import qdf_columnar and all its submodules with atheris coverage instrumentation.

    qdf_columnar imports most submodules lazily (on first attribute access or inside
    functions), so they are all imported here while the import hook is active; a
    module first imported later would run uninstrumented and guide nothing.
    """
    if "qdf_columnar" in sys.modules:
        raise RuntimeError("qdf_columnar was imported before instrumentation; import the harness first")
    with atheris.instrument_imports(include=["qdf_columnar"]):
        import qdf_columnar

        for info in pkgutil.walk_packages(qdf_columnar.__path__, "qdf_columnar."):
            if info.name in _NOT_INSTRUMENTED:
                continue
            try:
                importlib.import_module(info.name)
            except ImportError as exc:
                # A module no entry point reaches yet (work in progress) must not stop the
                # fuzzer; if a decoder does import it, that import fails there and is a finding.
                print(f"fuzz: not instrumenting {info.name}: {exc}", file=sys.stderr)
    return qdf_columnar


def _corpus_files(argv: list[str]) -> list[str]:
    files = []
    for arg in argv[1:]:
        if arg.startswith("-") or not os.path.isdir(arg):
            continue
        for name in sorted(os.listdir(arg)):
            files.append(os.path.join(arg, name))
    return files[:_WARM_FILES]


def warm_up(test_one_input: Callable[[bytes], None], argv: list[str]) -> None:
    """Compile (or load from the Numba cache) every kernel, then run some corpus inputs once.

    libFuzzer's ``-timeout`` also applies to the initial corpus, and a first call that
    compiles a kernel takes seconds: without this the first inputs would be reported
    as hangs. Failures here are ignored on purpose: libFuzzer runs the same inputs again
    right after and reports them properly, with a reproducer file.
    """
    from qdf_kernels import warmup

    warmup()
    for path in _corpus_files(argv):
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            test_one_input(data)
        except Exception:  # noqa: BLE001 - reported by libFuzzer on its own run of this input
            pass


def fuzz(test_one_input: Callable[[bytes], None]) -> None:
    """Warm up, then hand ``test_one_input`` to libFuzzer with the command-line flags."""
    # Decoders may warn (skipped row groups, performance notes); warnings are not findings.
    warnings.simplefilter("ignore")
    warm_up(test_one_input, sys.argv)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
