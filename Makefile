# Two-command quick start: `make demo` and `make test`. Every target creates .venv
# and installs the project into it when missing (or when pyproject.toml changed).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint warmup clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m qdf_columnar.demo

test: $(STAMP)
	$(PY) -m ruff check qdf_columnar kernels tests bench
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/bench_core.py

lint: $(STAMP)
	$(PY) -m ruff check qdf_columnar kernels tests bench

warmup: $(STAMP)
	$(PY) -m qdf_columnar.cli warmup

clean:
	rm -rf $(VENV) build *.egg-info
