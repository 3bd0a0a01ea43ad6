"""A file's columns matched to a model's or a training set's: by name where both sides have
names, by position otherwise; and the check that no feature value is missing.

A file that names its columns (ARFF attributes, a CSV header) is matched by name, as
scikit-learn matches a DataFrame's columns to ``feature_names_in_``: the same names in another
order are reordered (and ``notes`` says so); a name missing from the file, or a column the
reference does not know, is an error that lists them.  libsvm, ``.mat`` and header-less CSV
files name nothing, and their columns are taken by position, the counts checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlneighbors.datasets._dataset import Dataset, DatasetError, shown_names
from mlneighbors.datasets._libsvm import base_advice

__all__ = ["Reference", "align", "refuse_missing"]

_IMPUTE_HINT = (
    "the estimators do not impute missing values: fill them in or drop those rows (in Python, "
    "load_file(..., missing='nan') keeps them as NaN for an imputer such as "
    "sklearn.impute.SimpleImputer)"
)


@dataclass(frozen=True)
class Reference:
    """The columns a file must match: a fitted model's features, or a training set's
    features and labels."""

    what: str  # "the model", "the training data train.arff"
    features: list[str] | None  # None: match by position
    n_features: int
    labels: list[str] | None  # known label names (dropped at predict; matched for a test file)
    n_labels: int | None
    predict: bool  # rows to predict: the file's labels, if any, are not read
    verb: str = "has"  # "the model was fitted on 5 features"
    sparse: bool | None = None  # a training set's storage, which a test part takes on
    index_base: int | None = None  # a libsvm training file's first feature index, for a libsvm file
    base_from: str = ""  # whose index base that is, for the message on a file that contradicts it

    @classmethod
    def of(cls, like: Any) -> Reference:
        """The reference ``like`` stands for: a :class:`Dataset` or a fitted estimator."""
        if isinstance(like, Dataset):
            what = f"the training data {like.source or like.name}".rstrip()
            return cls(
                what,
                list(like.feature_names) if like.named else None,
                like.n_features,
                list(like.label_names) if like.named else None,
                like.n_labels,
                predict=False,
                sparse=like.is_sparse,
                index_base=like.index_base,
                base_from=what,
            )
        try:
            n_features = int(like.n_features_in_)
        except (AttributeError, TypeError, ValueError):
            raise TypeError(
                "like must be a Dataset or a fitted estimator (one with n_features_in_), got "
                f"{type(like).__name__}"
            ) from None
        # the Pipeline that `mlneighbors fit` writes records feature_names_ (any input);
        # an estimator fitted on a DataFrame has scikit-learn's feature_names_in_
        features = getattr(like, "feature_names_", None)
        if features is None:
            features = getattr(like, "feature_names_in_", None)
        labels = getattr(like, "label_names_", None)
        return cls(
            "the model",
            None if features is None else [str(f) for f in features],
            n_features,
            None if labels is None else [str(name) for name in labels],
            None if labels is None else len(labels),
            predict=True,
            verb="was fitted on",
            # `mlneighbors fit` on a libsvm file records its base
            index_base=getattr(like, "libsvm_index_base_", None),
            base_from="the model's training file",
        )


def _by_name(
    names: Sequence[str], wanted: Sequence[str], origin: str, kind: str, what: str,
    ignore: Sequence[str] = (),
) -> tuple[np.ndarray, list[str]]:
    """Positions in ``names`` of each of ``wanted``; the names in neither list are refused,
    except those of ``ignore``, which are returned (they are dropped)."""
    where = {name: j for j, name in enumerate(names)}
    missing = [name for name in wanted if name not in where]
    known = set(wanted)
    extra = [name for name in names if name not in known]
    ignored = [name for name in extra if name in set(ignore)]
    unknown = [name for name in extra if name not in set(ignore)]
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"{len(missing)} {kind}(s) of {what} are not in the file: {shown_names(missing)}")
        if unknown:
            parts.append(
                f"{len(unknown)} {'column' if kind == 'feature' else kind}(s) of the file are not "
                f"{kind}s of {what}: {shown_names(unknown)}"
            )
        raise DatasetError(f"{origin}: {'; '.join(parts)} ({kind}s are matched by name)")
    return np.array([where[name] for name in wanted], dtype=np.intp), ignored


def _take_columns(A: Any, order: np.ndarray) -> Any:
    if sp.issparse(A):
        A = sp.csr_matrix(A)[:, order].tocsr()
        A.sort_indices()
        return A
    return np.ascontiguousarray(A[:, order])


def align(data: Dataset, ref: Reference, ignore_labels: Sequence[str] = ()) -> Dataset:
    """``data`` with the features (and, for a training set, the labels) of ``ref``, in its order.

    ``ignore_labels``: columns that may be in the file besides the features (label columns of
    rows to predict); they are dropped, and ``notes`` says so.
    """
    origin = data.source or "the data"
    notes = list(data.notes)
    X, feature_names = data.X, list(data.feature_names)
    by_name = ref.features is not None and data.named
    if by_name:
        ignore = list(ref.labels or ()) + list(ignore_labels) if ref.predict else ()
        order, dropped = _by_name(feature_names, ref.features, origin, "feature", ref.what, ignore)
        if dropped:
            notes.append(
                f"the file's label column(s) {shown_names(dropped)} are not read: rows to predict"
            )
        reordered = bool(np.any(np.diff(order) < 0))
        if reordered:
            notes.append(f"the file's features come in another order than those of {ref.what}: "
                         "reordered by name")
        if dropped or reordered:
            X = _take_columns(X, order)
        feature_names = list(ref.features)
    elif data.n_features != ref.n_features:
        if data.index_base is not None:  # libsvm: the labels are no columns, the index base may differ
            why = _other_index_base(data, ref)
        elif ref.predict and data.n_features > ref.n_features:
            why = ("; if the file holds label columns too, say which (label_columns= / --label-columns, "
                   "labels_last= / --labels-last)")
        else:
            why = ""
        raise DatasetError(
            f"{origin}: has {data.n_features} features; {ref.what} {ref.verb} {ref.n_features} features"
            + ("" if data.named or ref.features is None else " (matched by position: the file names none)") + why
        )
    elif ref.features is not None:  # matched by position: the columns are the reference's
        feature_names = list(ref.features)
    Y, label_names = data.Y, list(data.label_names)
    if ref.predict:
        Y, label_names = Y[:, :0], []
    elif ref.labels is not None and data.named:
        order, _ = _by_name(label_names, ref.labels, origin, "label", ref.what)
        if not np.array_equal(order, np.arange(order.size)):
            notes.append(f"the file's labels come in another order than those of {ref.what}: "
                         "reordered by name")
            Y = np.ascontiguousarray(Y[:, order])
        label_names = list(ref.labels)
    elif ref.n_labels is not None and data.n_labels != ref.n_labels:
        raise DatasetError(f"{origin}: has {data.n_labels} labels; {ref.what} {ref.verb} {ref.n_labels} labels")
    if ref.sparse is not None and sp.issparse(X) != ref.sparse:  # a libsvm test file of an ARFF set, ...
        X = sp.csr_matrix(X) if ref.sparse else X.toarray()
    return replace(data, X=X, Y=Y, feature_names=feature_names, label_names=label_names, notes=notes)


def _other_index_base(data: Dataset, ref: Reference) -> str:
    """Why a libsvm file, read from index 0 as its reference's training file was, is one feature
    wider than the reference where it uses no index 0: it is likely numbered from 1 ("" when
    that is not the case)."""
    if data.index_base != 0 or ref.index_base != 0 or data.n_features != ref.n_features + 1:
        return ""
    X = sp.csr_matrix(data.X)
    if not X.nnz or int(X.indices.min()) == 0:
        return ""
    return (
        f"; the index bases seem to differ: {ref.base_from} numbers its features from 0 (it uses index 0) and "
        f"this file is read the same way, but it uses no index 0 (its indices run from {int(X.indices.min())} to "
        f"{int(X.indices.max())}): numbered from 1, libsvm's convention, it has {ref.n_features} features; "
        f"{base_advice(1)}"
    )


def _first_missing(X: Any) -> tuple[int, int, int, int] | None:
    """(row, column) of the first value of X that is not finite in row order, with how many
    are missing (NaN) and how many infinite; None when every value is finite."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        at = np.flatnonzero(~np.isfinite(X.data))
        if not at.size:
            return None
        k = int(at[0])
        n_nan = int(np.isnan(X.data[at]).sum())
        return int(np.searchsorted(X.indptr, k, side="right") - 1), int(X.indices[k]), n_nan, at.size - n_nan
    if not X.size or np.isfinite(np.min(X)) and np.isfinite(np.max(X)):  # two passes, no temporary
        return None
    from .._counts import row_blocks

    first, n_nan, n_inf = None, 0, 0
    for rows in row_blocks(X.shape[0], X.shape[1]):
        block = X[rows]
        missing, infinite = np.isnan(block), np.isinf(block)
        n_nan += int(missing.sum())
        n_inf += int(infinite.sum())
        if first is None and n_nan + n_inf:
            r, c = np.argwhere(missing | infinite)[0]
            first = (rows.start + int(r), int(c))
    return None if first is None else (first[0], first[1], n_nan, n_inf)


def refuse_missing(
    data: Dataset, fmt: str, lines: Callable[[], Sequence[int]] | None = None
) -> None:
    """A DatasetError naming the file, the line and the feature of the first missing value,
    or infinite one (no estimator takes either).

    ``lines``: gives the line of each row where ``data.lines`` has none (libsvm files); it is
    called only when a value is missing.
    """
    found = _first_missing(data.X)
    if found is None:
        return
    row, column, n_nan, n_inf = found
    lines = data.lines if data.lines is not None or lines is None else lines()
    where = f", line {int(lines[row])}" if lines is not None else f", row {row}"
    name = data.feature_names[column]
    feature = f"feature {name!r}" if data.named else f"feature {name} (column {column} of X)"
    value = float(data.X[row, column])
    infinite = bool(np.isinf(value))
    others = []  # the values after this one, of each kind
    if n_nan - (not infinite):
        others.append(f"{n_nan - (not infinite)} {'' if infinite else 'more '}missing value(s)")
    if n_inf - infinite:
        others.append(f"{n_inf - infinite} {'more ' if infinite else ''}infinite value(s)")
    more = f" ({' and '.join(others)} in the file)" if others else ""
    if infinite:
        raise DatasetError(f"{data.source or 'the data'}{where}: {feature} is {value:g}{more}; the estimators "
                           "take finite numbers only: replace it, or drop the row")
    how = {
        "arff": "is missing ('?')",
        "csv": "is missing (an empty cell, or a line with fewer fields than the header)",
    }.get(fmt, "is NaN")
    raise DatasetError(f"{data.source or 'the data'}{where}: {feature} {how}{more}; {_IMPUTE_HINT}")
