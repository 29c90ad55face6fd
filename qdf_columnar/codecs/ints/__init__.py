"""The v1 integer codecs, one module per codec (docs/CODECS.md).

``unit`` holds the contract every codec follows (estimate / encode / read / skip) and
the helpers they share; ``raw``, ``frame`` (FOR), ``delta``, ``runs`` (RLE),
``dictionary``, ``patched`` (PFOR) and ``blocks`` (the F0 per-block container) are the
codecs. They are registered, in the picker's order, in :mod:`..registry`.
"""
