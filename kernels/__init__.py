"""qdf_kernels: the Numba kernels behind qdf_columnar (installed from the ``kernels/`` folder).

Conventions (docs/KERNELS.md has the reasoning and numbers):

* every kernel uses the one decorator :data:`qdf_kernels._jit.kernel` (njit, cache, nogil);
* no eager signatures and nothing compiles at import; :func:`warmup` compiles ahead of time;
* kernels take preallocated outputs and return an int status (``_status``), never raise;
* index arithmetic is unsigned (np.uint64) so LLVM vectorises the loops.
This package depends only on numpy and numba and never imports qdf_columnar.
"""

from __future__ import annotations

from ._warmup import warmup

__all__ = ["warmup"]
