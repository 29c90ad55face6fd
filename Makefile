# Two-command quick start: `make demo` and `make test`. Every target creates .venv
# and installs the project into it when missing (or when pyproject.toml changed).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: demo test bench bench-quick bench-compress bench-files bench-stream lint warmup clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The peers of the benchmark matrix (pylance, vortex-data, protobuf, ...) are only
# needed by `make bench`, so `make test` and `make demo` do not install them.
$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

demo: $(STAMP)
	$(PY) -m qdf_columnar.demo

test: $(STAMP)
	$(PY) -m ruff check qdf_columnar kernels tests bench
	$(PY) -m pytest -q --nbmake --nbmake-timeout=300 tests notebooks

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

lint: $(STAMP)
	$(PY) -m ruff check qdf_columnar kernels tests bench

warmup: $(STAMP)
	$(PY) -m qdf_columnar.cli warmup

clean:
	rm -rf $(VENV) build *.egg-info
