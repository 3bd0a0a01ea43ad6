"""What ``fit`` is given: the training rows and a target, validated, the target binarised.

Every estimator of the package takes the same targets: a 2-D 0/1 label indicator (dense or
sparse; kept sparse), or 1-D class labels (or a column vector that is not 0/1), binarised one
column per class as scikit-learn's one-vs-rest does.  :func:`validate_training_data` checks
``X`` and the target together and returns the binary ``Y`` every model learns from;
:func:`target_classes` gives ``classes_``.  A target that is neither (a label matrix coded
-1/+1, a list of label lists, continuous values) is refused with a message saying how to make an
indicator of it.  :func:`in_fit_order` matches a DataFrame's columns to those ``fit`` saw, by
name, for the queries of ``predict`` and ``transform``.

``X`` is held in memory here; a dask array ``X`` goes through ``mlneighbors._dask_estimators`` first,
which checks it lazily and hands this module the target with a stand-in of ``X``'s shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import validate_data

from .neighbors._internal import FLOAT_DTYPES, check_scale, finite_top, float_rows

__all__ = ["in_fit_order", "target_classes", "validate_training_data"]


def in_fit_order(estimator: Any, X: Any) -> Any:
    """A DataFrame holding the columns seen at fit in another order, reordered to fit's order.

    scikit-learn records a DataFrame's column names at fit (``feature_names_in_``) and refuses
    the same names in another order; the estimators of this package match them by name
    instead.  Names missing or unknown are left to scikit-learn's check, which lists them.

    >>> import pandas as pd
    >>> from mlneighbors import MLkNN
    >>> model = MLkNN(1).fit(pd.DataFrame({"a": [0.0, 1.0], "b": [0.0, 1.0]}), [[1, 0], [0, 1]])
    >>> list(in_fit_order(model, pd.DataFrame({"b": [1.0], "a": [0.9]})).columns)
    ['a', 'b']
    """
    names = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    if names is None or columns is None or isinstance(X, np.ndarray):
        return X
    columns = list(columns)
    fitted = list(names)
    if columns != fitted and len(columns) == len(fitted) and set(columns) == set(fitted):
        return X[fitted]
    return X


def target_classes(classes: np.ndarray | None, y_dtype: Any, n_labels: int) -> Any:
    """``classes_`` of every estimator of the package: the classes of a 1-D target, else
    scikit-learn's multi-output convention (``KNeighborsClassifier``): one array ``[0, 1]``
    per label, which scorers read to recognise a multi-label classifier."""
    if classes is not None:
        return classes
    # one shared (read-only) array: with 10^6 labels, a million small arrays took 117 MB and
    # most of the fit's time outside the neighbour search (benchmarks/labels.py)
    values = np.array([0, 1], dtype=y_dtype)
    values.flags.writeable = False
    return [values] * n_labels


def validate_training_data(
    estimator: Any, X: Any, y: Any, *, scale: bool = False
) -> tuple[Any, np.ndarray, np.ndarray | None, np.dtype | None]:
    """Validate ``X`` and a target; return ``(X, Y, classes, y_dtype)``.  ``scale``: check the
    scale of ``X``'s values too (:func:`~mlneighbors.neighbors.check_scale`), from the extremes
    that the fast path reads anyway.

    ``Y`` is an int8 (n, n_labels) 0/1 matrix, CSR when the target is sparse (the count
    models then never form an (n, n_labels) array). A 2-D 0/1 target is a label indicator:
    ``classes`` is None and ``y_dtype`` its dtype. A 1-D target (or a column vector that
    is not 0/1) is binarised one column per class as one-vs-rest does (two classes give
    two columns, one class a single column of ones): ``classes`` are the classes and
    ``y_dtype`` None. Anything else raises ``ValueError("Unknown label type: ...")``.
    """
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None"
        )
    _refuse_label_lists(y)
    top = _plain_top(X, y)
    if top is not None:  # as validation would leave them: what it records, without its cost
        estimator.__dict__.pop("feature_names_in_", None)
        estimator.n_features_in_ = X.shape[1]
    else:
        X, y = validate_data(
            estimator,
            X,
            y,
            accept_sparse="csr",
            dtype=FLOAT_DTYPES,  # dense float32 rows stay float32: held once, in the precision given
            multi_output=True,
            y_numeric=False,
            ensure_min_samples=2,
        )
    X = float_rows(X)
    if scale:
        check_scale(X, "X", top=top)
    if sp.issparse(y):
        y = sp.csr_matrix(y)
    if _is_indicator(y):
        if sp.issparse(y):  # kept sparse: the label side costs what Y holds
            Y = y.astype(np.int8)
            Y.eliminate_zeros()
            Y.sort_indices()
            return X, Y, None, y.dtype
        Y = np.asarray(y)
        return X, Y.astype(np.int8), None, Y.dtype
    if np.ndim(y) == 2:
        values = np.unique(y.data if sp.issparse(y) else np.asarray(y))
        if values.dtype.kind in "iuf" and set(values.tolist()) <= {-1, 0, 1} and -1 in values:
            raise ValueError(
                "y is a label matrix coded -1/+1; a label indicator holds 0 and 1: convert it "
                "with (y > 0).astype(int)"
            )
    target = type_of_target(y)
    if target not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type: {target!r}. y must be a binary label indicator of "
            "shape (n_samples, n_labels) or 1-D class labels"
            + (" (a 2-D y must hold only 0 and 1)" if np.ndim(y) == 2 else "")
        )
    y = np.ravel(y.toarray() if sp.issparse(y) else y)
    binarizer = LabelBinarizer().fit(y)
    Y = binarizer.transform(y).astype(np.int8)
    if len(binarizer.classes_) == 1:  # every row has the one class
        Y = np.ones((len(y), 1), dtype=np.int8)
    elif Y.shape[1] == 1:  # two classes: one column each, as one-vs-rest scores them
        Y = np.hstack([1 - Y, Y])
    return X, Y, binarizer.classes_, None


def plain_rows_top(X: Any, min_rows: int = 1) -> float | None:
    """The largest magnitude in ``X`` when ``X`` is a finite float array of at least
    ``min_rows`` rows and one column, as scikit-learn's validation would return it unchanged
    (tens of microseconds, a small job's share); else None."""
    if not (type(X) is np.ndarray and X.ndim == 2 and X.dtype in FLOAT_DTYPES and X.shape[0] >= min_rows
            and X.shape[1]):
        return None
    return finite_top(X)


def _plain_top(X: Any, y: Any) -> float | None:
    """:func:`plain_rows_top` of the training rows ``X`` (2 rows at least) when ``y`` is a finite
    numeric array of as many rows (1-D, or 2-D with a column at least); else None."""
    if not (type(X) is np.ndarray and X.ndim == 2 and type(y) is np.ndarray and y.dtype.kind in "biuf"
            and len(y) == len(X) and (y.ndim == 1 or (y.ndim == 2 and y.shape[1]))):
        return None
    top = plain_rows_top(X, 2)
    return top if top is not None and (y.dtype.kind != "f" or finite_top(y) is not None) else None


def _refuse_label_lists(y: Any) -> None:
    """A list of label lists (``[[0, 3], [2], []]``) is not an indicator: say how to make one."""
    if isinstance(y, (list, tuple)) and len(y) > 0:
        rows = [r for r in y if isinstance(r, (list, tuple, set, frozenset))]
        if len(rows) == len(y) and (any(isinstance(r, (set, frozenset)) for r in rows)
                                    or len({len(r) for r in rows}) > 1):
            raise ValueError(
                "y is a list of label lists, one per row; a label indicator matrix of shape "
                "(n_samples, n_labels) is needed: make one with "
                "sklearn.preprocessing.MultiLabelBinarizer().fit_transform(y)"
            )


def _is_indicator(y: Any) -> bool:
    """A 2-D target of 0/1 values (one column included) is a multi-label indicator."""
    if y.ndim != 2:
        return False
    values = y.data if sp.issparse(y) else np.asarray(y)
    if values.dtype.kind not in "biuf":
        return False
    # one pass, no sort (np.unique sorted every label value: a tenth of a fit on corel5k)
    return values.dtype.kind == "b" or bool(((values == 0) | (values == 1)).all())
