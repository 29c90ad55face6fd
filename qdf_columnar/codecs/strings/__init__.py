"""String-column body codecs: one unit per form, registered in :mod:`..registry`.

The contract is in :mod:`.unit`; the picker is :mod:`qdf_columnar.wire.strcol_write`
and the reader :mod:`qdf_columnar.wire.strcol_scan`, both going through the registry.
"""
