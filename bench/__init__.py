"""Benchmarks for qdf_columnar (run with ``make bench``; never collected by pytest)."""
