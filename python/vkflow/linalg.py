"""The array API's linalg extension (``vkflow.array_api.linalg``)."""

from ._linalg_spectral import (eigh, eigvalsh, matrix_norm, matrix_rank, pinv,  # noqa: F401
                               svd, svdvals, vector_norm)
