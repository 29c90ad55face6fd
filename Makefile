# Two-command quick start: `make demo` and `make test`. Every target creates .venv
# and installs the project into it when missing (or when pyproject.toml changed).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: demo test test-boundscheck fuzz bench bench-quick bench-compress bench-files bench-stream bench-real bench-first-use lint warmup clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@# bytecode for the editable sources, which pip does not compile: with
	@# PYTHONDONTWRITEBYTECODE set, every new process would otherwise compile them again
	$(PY) -m compileall -q qdf_columnar kernels
	touch $(STAMP)

# The peers of the benchmark matrix (pylance, vortex-data, protobuf, ...) are only
# needed by `make bench`, so `make test` and `make demo` do not install them.
$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

demo: $(STAMP)
	$(PY) -m qdf_columnar.demo

test: $(STAMP)
	$(PY) -m ruff check qdf_columnar kernels tests bench fuzz
	$(PY) -m pytest -q --nbmake --nbmake-timeout=300 tests notebooks

# The tests that feed hostile bytes (mutated, truncated, forged) to the decoders, with
# Numba's bounds checking on: a kernel indexing outside its buffer raises IndexError
# there instead of reading neighbouring memory, and every one of these tests treats an
# IndexError as a failure. A separate cache keeps the slower bounds-checked machine code
# out of the normal one (Numba's cache key does not include the boundscheck flag).
BOUNDSCHECK_CACHE := $(CURDIR)/.numba-boundscheck
BOUNDSCHECK_TESTS := tests/test_hostile.py tests/test_files_errors.py tests/test_fuzz_short.py \
	tests/test_fuzz_regressions.py tests/test_fast_dec.py tests/test_values.py tests/test_qpack.py \
	tests/test_floats.py tests/test_fsst.py tests/test_entropy.py tests/test_dense.py tests/test_hybrid.py \
	tests/test_stream.py tests/test_alprd.py tests/test_zones.py tests/test_messages.py tests/test_block_kernel.py \
	tests/test_block_encode_kernel.py tests/test_present_values.py \
	tests/test_late_ints.py tests/test_registry.py tests/test_dictionary_filter.py tests/test_dict_levels.py \
	tests/test_strcol.py tests/test_run_filter.py tests/test_coded_filter.py
test-boundscheck: $(STAMP)
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(BOUNDSCHECK_CACHE) $(PY) -m pytest -q $(BOUNDSCHECK_TESTS)

# Coverage-guided fuzzing of decode / loads / read_qdf / StreamReader (fuzz/README.md):
# FUZZ_RUNS executions per harness, 1,000,000 in all by default, shared by speed (a .qdf
# file read costs ~10x a loads), FUZZ_JOBS harnesses at a time: about 15 minutes on 2
# cores. Exits non-zero on any finding; reproducers go to fuzz/work/findings/ (gitignored).
FUZZ_RUNS ?= decode=300000,loads=400000,read_qdf=50000,stream=250000
FUZZ_JOBS ?= 2
fuzz: $(STAMP)
	$(PY) -m fuzz.run --runs $(FUZZ_RUNS) --jobs $(FUZZ_JOBS) $(ARGS)

bench: $(BENCH_STAMP)
	$(PY) bench/bench_core.py
	$(PY) bench/bench_matrix.py
	$(PY) bench/bench_compress.py
	$(PY) bench/bench_files.py
	$(PY) bench/bench_stream.py

bench-quick: $(BENCH_STAMP)
	$(PY) bench/bench_matrix.py --quick

# The compression-mode acceptance items, PASS/FAIL each (ARGS=--quick for 2 rounds).
bench-compress: $(BENCH_STAMP)
	$(PY) bench/bench_compress.py $(ARGS)

# Filtered reads of a 5M-row, 50-row-group .qdf file vs Parquet with the same row groups.
bench-files: $(BENCH_STAMP)
	$(PY) bench/bench_files.py $(ARGS)

# Messages and streams vs msgpack-python (size of a 10k-record stream, dumps/loads speed).
bench-stream: $(BENCH_STAMP)
	$(PY) bench/bench_stream.py $(ARGS)

# Real public tables (bench/bench_real.py): qdf vs Parquet / IPC / Vortex / Lance and the
# per-column best-of-peers floor. ~6-8 min; ARGS=--quick for 5 small tables (~1 min).
bench-real: $(BENCH_STAMP)
	$(PY) bench/bench_real.py $(ARGS)

# The first call of each public entry point in a new process, with an empty Numba cache
# and then a warm one (bench/bench_first_use.py). The empty-cache tour compiles
# everything it calls: minutes until first use is fast.
bench-first-use: $(STAMP)
	$(PY) bench/bench_first_use.py $(ARGS)

lint: $(STAMP)
	$(PY) -m ruff check qdf_columnar kernels tests bench fuzz

warmup: $(STAMP)
	$(PY) -m qdf_columnar.cli warmup

clean:
	rm -rf $(VENV) build *.egg-info $(BOUNDSCHECK_CACHE)
