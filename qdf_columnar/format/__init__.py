"""Byte-level pieces of the qdf v1 wire format: tag constants, varints, header, bounds-checked reader."""
