"""Coverage-guided fuzz harnesses (atheris / libFuzzer) for every qdf_columnar decoder entry point.

See fuzz/README.md: ``make fuzz`` for the long run, ``tests/test_fuzz_short.py`` for the
short one inside ``make test``. Importing this package imports nothing else.
"""
