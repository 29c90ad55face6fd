"""The v1 float codecs, one module per codec (docs/CODECS.md).

``unit`` holds the contract every float codec follows (estimate / encode / read / skip)
and the helpers they share; ``raw`` (E4 0B / 0A), ``alp`` (F4 PackALP), ``alprd`` (F4
0F ALP-RD) and ``xor`` (E7 PackGorilla and Chimp128) are the codecs. They are
registered, in the picker's order, in :mod:`..registry`.
"""
