"""Label propensities (Jain, Prabhu & Varma, KDD 2016), the weights of the propensity-scored
metrics at k.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._validation import MatrixLike, _BoolMatrix, _check_binary, _check_positive


def _label_counts_of(Yt: _BoolMatrix) -> NDArray[np.int64]:
    if sp.issparse(Yt):
        return np.bincount(Yt.indices, minlength=Yt.shape[1]).astype(np.int64)  # type: ignore[union-attr]
    return Yt.sum(axis=0, dtype=np.int64)  # type: ignore[union-attr,return-value]


def propensities(Y_train: MatrixLike, A: float = 0.55, B: float = 1.5) -> NDArray[np.float64]:
    """Label propensities of Jain, Prabhu & Varma (2016) from the training label frequencies.

    ``p_l = 1 / (1 + C exp(-A log(N_l + B)))`` with ``C = (log N - 1) (B + 1)^A``,
    N the number of training rows, N_l the number of them holding label l and
    log the natural logarithm. The propensity-scored metrics weight label l by
    ``1 / p_l``, so that rare labels count more.

    Parameters
    ----------
    Y_train : array-like or sparse matrix of shape (n_train, n_labels)
        Training binary label indicator (at least 3 rows).
    A : float, default=0.55
        Exponent of the propensity model (> 0).
    B : float, default=1.5
        Offset of the propensity model (> 0).

    Returns
    -------
    ndarray of shape (n_labels,)
        ``p_l`` in (0, 1); a label no training row holds gets the smallest value.

    Raises
    ------
    ValueError
        ``Y_train`` is not a binary indicator matrix or has fewer than 3 rows
        (``C`` is positive only for ``N > e``); ``A`` or ``B`` not positive.

    Notes
    -----
    A = 0.55 and B = 1.5 are the repository's values for every data set but
    Wikipedia (A = 0.5, B = 0.4) and Amazon (A = 0.6, B = 2.6).

    References
    ----------
    H. Jain, Y. Prabhu and M. Varma, "Extreme multi-label loss functions for
    recommendation, tagging, ranking & other missing label applications",
    KDD 2016.

    Examples
    --------
    >>> propensities([[1, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 0]]).round(4)
    array([0.7998, 0.7213, 0.6615])
    """
    A = _check_positive(A, "A")
    B = _check_positive(B, "B")
    Yt = _check_binary(Y_train, "Y_train")
    n = Yt.shape[0]
    if n < 3:
        raise ValueError(
            f"Y_train must have at least 3 rows to give propensities in (0, 1): "
            f"C = (log N - 1)(B + 1)^A is positive only for N > e; got N = {n}"
        )
    C = (np.log(n) - 1.0) * (B + 1.0) ** A
    return 1.0 / (1.0 + C * np.exp(-A * np.log(_label_counts_of(Yt) + B)))


def _inverse_propensities(p: ArrayLike | None, Y_train: MatrixLike | None, n_labels: int) -> NDArray[np.float64]:
    """``1 / p_l`` from the propensities given or from the training labels (exactly one of them)."""
    if p is None and Y_train is None:
        raise ValueError(
            "the propensity-scored metrics need the label propensities: pass Y_train (the "
            "training labels) or propensities (from mlneighbors.metrics.propensities)"
        )
    if p is not None and Y_train is not None:
        raise ValueError("pass either Y_train or propensities, not both")
    if Y_train is not None:
        p = propensities(Y_train)
        if p.shape[0] != n_labels:
            raise ValueError(
                f"Y_train must have the {n_labels} label columns of Y_true; got {p.shape[0]}"
            )
        return 1.0 / p
    P = np.asarray(p)
    if not np.issubdtype(P.dtype, np.number) or np.issubdtype(P.dtype, np.complexfloating):
        raise ValueError(f"propensities must be real numbers; got dtype {P.dtype}")
    if P.shape != (n_labels,):
        raise ValueError(f"propensities must have shape (n_labels,) = ({n_labels},); got shape {P.shape}")
    P = P.astype(np.float64)
    bad = ~(np.isfinite(P) & (P > 0))
    if bad.any():
        raise ValueError(
            f"propensities must be positive and finite; found {P[bad][:5].tolist()} "
            f"at label(s) {np.flatnonzero(bad)[:5].tolist()}"
        )
    return 1.0 / P
