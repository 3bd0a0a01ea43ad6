"""Explanations of predictions: the neighbours that voted and the model's decision quantities.

Every model has ``explain(X)`` (the :class:`Explainable` mixin of the estimator base): for each
row of ``X`` its neighbours (training identifiers, distances, label rows) and, per label, the
numbers the model's rule reads, from which its ``predict`` and ``predict_proba`` follow.  The
numbers are computed with the model's own fitted statistics and kernels, in the model's order of
operations, so a posterior equals ``predict_proba`` bit for bit (``tests/models/test_explain.py``
holds every model of the registry to it).

The quantities of each model are one function here (``_TERMS``, looked up along the class's
MRO), so the model modules stay as they are; a model without one is explained by its counts and
scores.  An :class:`Explanation` holds dense arrays: (rows x neighbours x labels) int8 for the
neighbours' labels, so it is meant for a few rows (tens, not millions).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["Explainable", "Explanation"]


def _plain(value: Any) -> Any:
    """A numpy scalar as a JSON value: ints and bools as such, a non-finite float as the
    string "inf", "-inf" or "nan" (JSON has no such numbers; the strings read back)."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _floats(values: Any) -> np.ndarray:
    """A nested list of numbers and "inf"/"-inf"/"nan" strings as a float array."""
    return np.asarray(values, dtype=object).astype(np.float64)


class Explanation:
    """The explanation of some rows' predictions: their neighbours and the model's decision terms.

    Made by a fitted model's ``explain(X)`` (or a :class:`~mlneighbors.Pipeline`'s).  Every
    array is dense and indexed by the explained rows first; ``n`` rows, ``L`` labels, ``k``
    neighbours (BKNN: ``b`` neighbours in each label).

    Parameters
    ----------
    model : str
        The model's class name.
    label_names : list of str
        The ``L`` label names (for a 1-D target, the classes).
    rule : str
        How the prediction follows from the terms, in one line.
    ids : ndarray of shape (n, k) or (n, L, b)
        The neighbours' training identifiers (the model's ``training_ids_``).
    rows : ndarray of shape (n, k) or (n, L, b)
        The neighbours' training row numbers; ``-1`` where BKNN's label has fewer than ``b``
        members (the id there is meaningless: -1 or "").
    distances : ndarray of shape (n, k) or (n, L, b)
        The distances of the model's metric, ascending (``inf`` where ``rows`` is -1).
    neighbor_labels : ndarray of shape (n, k, L) or (n, L, b, L)
        Each neighbour's 0/1 label row (int8; zeros where ``rows`` is -1).
    scores : ndarray of shape (n, L)
        ``predict_proba``.
    predictions : ndarray of shape (n, L)
        ``predict`` as booleans (for a 1-D target, the predicted class's column).
    terms : dict of str to ndarray of shape (n, L)
        The model's decision quantities per (row, label), in the order of its formula.
    row_terms : dict of str to ndarray of shape (n,), default=None
        Quantities of a whole row (BRkNN-b's ``m``, LAML-kNN's cluster).
    neighbor_terms : dict of str to ndarray, default=None
        Quantities of each neighbour, shaped as ``ids`` (LPkNN's label-set votes).

    Attributes
    ----------
    model : str
        The model's class name.
    label_names : list of str
        The label names.
    rule : str
        How the prediction follows from the terms.
    ids : ndarray of shape (n, k) or (n, L, b)
        The neighbours' training identifiers.
    rows : ndarray of shape (n, k) or (n, L, b)
        The neighbours' training row numbers (-1: none).
    distances : ndarray of shape (n, k) or (n, L, b)
        The neighbours' distances.
    neighbor_labels : ndarray of shape (n, k, L) or (n, L, b, L)
        The neighbours' label rows.
    scores : ndarray of shape (n, L)
        ``predict_proba``.
    predictions : ndarray of shape (n, L)
        ``predict`` as booleans.
    terms : dict of str to ndarray of shape (n, L)
        The decision quantities per label.
    row_terms : dict of str to ndarray of shape (n,)
        The decision quantities per row.
    neighbor_terms : dict of str to ndarray
        The quantities per neighbour.

    See Also
    --------
    mlneighbors.MLkNN.explain : How an explanation is made (every model has ``explain``).

    Notes
    -----
    ``to_frame()`` gives the terms as a long table (one row per explained row and label) and
    ``to_frame("neighbors")`` the neighbours (one row per explained row and neighbour);
    ``to_dict()`` / ``to_json()`` one record per explained row, which :meth:`from_dict` reads
    back.  ``explanation[i]`` is the explanation of row ``i`` alone (also a slice or a list of
    rows), ``str(explanation)`` a table per row.

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import BRkNN
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [0, 0]])
    >>> e = BRkNN(n_neighbors=3).fit(X, Y, ids=["a", "b", "c", "d", "e", "f"]).explain([[0.12]])
    >>> e.ids
    array([['b', 'c', 'a']], dtype='<U1')
    >>> e.terms["share"]
    array([[0.66666667, 0.33333333]])
    >>> e.predictions
    array([[ True, False]])
    """

    def __init__(self, model: str, label_names: list[str], rule: str, ids: np.ndarray, rows: np.ndarray,
                 distances: np.ndarray, neighbor_labels: np.ndarray, scores: np.ndarray,
                 predictions: np.ndarray, terms: dict[str, np.ndarray],
                 row_terms: dict[str, np.ndarray] | None = None,
                 neighbor_terms: dict[str, np.ndarray] | None = None) -> None:
        self.model = model
        self.label_names = [str(name) for name in label_names]
        self.rule = rule
        self.ids = ids
        self.rows = rows
        self.distances = distances
        self.neighbor_labels = neighbor_labels
        self.scores = scores
        self.predictions = predictions
        self.terms = dict(terms)
        self.row_terms = dict(row_terms or {})
        self.neighbor_terms = dict(neighbor_terms or {})

    # -- rows -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.scores)

    @property
    def per_label(self) -> bool:
        """Whether the neighbours are found per label (BKNN: arrays of shape (n, L, b))."""
        return self.ids.ndim == 3

    def __getitem__(self, key: Any) -> Explanation:
        """The explanation of some of the rows: an int (kept as one row), a slice or row numbers."""
        if isinstance(key, (int, np.integer)):
            i = range(len(self))[key]  # negative numbers and the bounds, as a list's
            key = slice(i, i + 1)
        elif not isinstance(key, slice):
            key = np.asarray(key)
        return Explanation(
            self.model, self.label_names, self.rule, self.ids[key], self.rows[key], self.distances[key],
            self.neighbor_labels[key], self.scores[key], self.predictions[key],
            {name: v[key] for name, v in self.terms.items()},
            {name: v[key] for name, v in self.row_terms.items()},
            {name: v[key] for name, v in self.neighbor_terms.items()},
        )

    def __repr__(self) -> str:
        shape = (f"{self.ids.shape[2]} neighbours in each label" if self.per_label
                 else f"{self.ids.shape[1]} neighbours")
        return (f"<Explanation of {len(self)} row(s) by {self.model}: {len(self.label_names)} labels, {shape}; "
                f"terms {', '.join(self.terms)}>")

    # -- records ------------------------------------------------------------------------------

    def row(self, i: int) -> dict[str, Any]:
        """Row ``i``'s record: what :meth:`to_dict` holds for it.

        Parameters
        ----------
        i : int
            The explained row (negative: from the end).

        Returns
        -------
        record : dict
            ``row``, ``predicted`` (the predicted label names), ``labels`` (one dict per label:
            ``label``, ``predicted``, ``score`` and every term), ``row_terms`` and ``neighbors``
            (one dict per neighbour, nearest first: ``rank``, ``id``, ``training_row``,
            ``distance``, ``labels`` (the names it carries), its neighbour terms, and for BKNN
            ``label``, the label whose member it is).
        """
        i = range(len(self))[i]
        names = self.label_names
        terms = {name: v[i].tolist() for name, v in self.terms.items()}
        scores, predicted = self.scores[i].tolist(), self.predictions[i].tolist()
        labels = [
            {"label": names[j], "predicted": bool(predicted[j]), "score": _plain(scores[j]),
             **{name: _plain(v[j]) for name, v in terms.items()}}
            for j in range(len(names))
        ]
        rows, ids, dist = self.rows[i], self.ids[i], self.distances[i]
        neighbor_terms = {name: v[i] for name, v in self.neighbor_terms.items()}
        neighbors = []
        for pos in zip(*np.nonzero(rows >= 0), strict=True):  # nearest first (per label for BKNN)
            record = {"rank": int(pos[-1]), "id": _plain(ids[pos]), "training_row": int(rows[pos]),
                      "distance": _plain(dist[pos]),
                      "labels": [names[j] for j in np.flatnonzero(self.neighbor_labels[i][pos])]}
            if self.per_label:
                record = {"label": names[pos[0]], **record}
            record.update({name: _plain(v[pos]) for name, v in neighbor_terms.items()})
            neighbors.append(record)
        return {
            "row": i,
            "predicted": [names[j] for j in np.flatnonzero(self.predictions[i])],
            "labels": labels,
            "row_terms": {name: _plain(v[i]) for name, v in self.row_terms.items()},
            "neighbors": neighbors,
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON values, one record per row (see :meth:`row`).

        Returns
        -------
        explanation : dict
            ``model``, ``rule``, ``label_names``, ``terms`` (the names of the per-label terms),
            ``neighbors_shape`` (``[k]``, or ``[L, b]`` for BKNN), ``id_type`` ("int" or "str")
            and ``rows`` (a list of :meth:`row` records).  Integer and string identifiers are
            kept as they are; a non-finite float is written "inf", "-inf" or "nan".
        """
        return {
            "model": self.model,
            "rule": self.rule,
            "label_names": list(self.label_names),
            "terms": list(self.terms),
            "neighbors_shape": list(self.ids.shape[1:]),
            "id_type": "str" if self.ids.dtype.kind == "U" else "int",
            "rows": [self.row(i) for i in range(len(self))],
        }

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as a JSON string.

        Parameters
        ----------
        **kwargs : dict
            Passed to ``json.dumps`` (``indent=2``, ...).

        Returns
        -------
        text : str
            Strict JSON (no NaN or Infinity literals).
        """
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Explanation:
        """The explanation that :meth:`to_dict` (or :meth:`to_json`, parsed) wrote.

        Parameters
        ----------
        data : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        explanation : Explanation
            Equal arrays (the neighbours' shape and identifier type come from ``data``).
        """
        names = list(data["label_names"])
        L, records = len(names), data["rows"]
        n, shape = len(records), (len(records), *data["neighbors_shape"])
        column = {name: j for j, name in enumerate(names)}
        rows = np.full(shape, -1, dtype=np.intp)
        ids = np.full(shape, "" if data["id_type"] == "str" else -1,
                      dtype=str if data["id_type"] == "str" else np.int64)
        if data["id_type"] == "str":  # wide enough for every identifier
            width = max([len(str(r["id"])) for rec in records for r in rec["neighbors"]] + [1])
            ids = ids.astype(f"<U{width}")
        distances = np.full(shape, np.inf)
        neighbor_labels = np.zeros((*shape, L), dtype=np.int8)
        keys = [key for rec in records[:1] for r in rec["neighbors"][:1] for key in r
                if key not in ("label", "rank", "id", "training_row", "distance", "labels")]
        neighbor_terms: dict[str, list] = {key: [] for key in keys}
        positions = []
        for i, rec in enumerate(records):
            for r in rec["neighbors"]:
                pos = (i, column[r["label"]], r["rank"]) if len(shape) == 3 else (i, r["rank"])
                positions.append(pos)
                rows[pos], ids[pos], distances[pos] = r["training_row"], r["id"], float(r["distance"])
                neighbor_labels[pos][[column[name] for name in r["labels"]]] = 1
                for key in keys:
                    neighbor_terms[key].append(r[key])
        nterms = {}
        for key, values in neighbor_terms.items():
            arr = np.asarray(values)
            out = np.zeros(shape, dtype=arr.dtype if arr.dtype.kind in "biu" else np.float64)
            if positions:
                out[tuple(np.array(positions).T)] = arr if arr.dtype.kind in "biu" else _floats(values)
            nterms[key] = out

        def table(get: Callable[[dict], Any]) -> np.ndarray:
            values = [[get(label) for label in rec["labels"]] for rec in records]
            arr = np.asarray(values).reshape(n, L)
            return arr if arr.dtype.kind in "biu" else _floats(values).reshape(n, L)

        terms = {name: table(lambda label, name=name: label[name]) for name in data["terms"]}
        row_keys = list(records[0]["row_terms"]) if records else []
        row_terms = {}
        for key in row_keys:
            arr = np.asarray([rec["row_terms"][key] for rec in records])
            row_terms[key] = arr if arr.dtype.kind in "biu" else _floats(arr.tolist())
        return cls(
            data["model"], names, data["rule"], ids, rows, distances, neighbor_labels,
            table(lambda label: label["score"]).astype(np.float64),
            table(lambda label: label["predicted"]).astype(bool), terms, row_terms, nterms,
        )

    def to_frame(self, what: str = "labels") -> Any:
        """The explanation as a long pandas DataFrame (pandas is imported here, not before).

        Parameters
        ----------
        what : {"labels", "neighbors"}, default="labels"
            "labels": one row per (explained row, label), columns ``row``, ``label``,
            ``predicted``, ``score``, every term, then the row terms (repeated on each of the
            row's labels).  "neighbors": one row per (explained row, neighbour), nearest first,
            columns ``row``, (BKNN: ``label``, the label whose member it is), ``rank``, ``id``,
            ``training_row``, ``distance``, ``labels`` (the names it carries, joined by ","), and
            the neighbour terms.

        Returns
        -------
        frame : pandas.DataFrame
            The ``labels`` frame has ``n * L`` rows.
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("Explanation.to_frame needs pandas: pip install 'mlneighbors[pandas]'") from exc
        n, L = self.scores.shape
        if what == "labels":
            columns: dict[str, Any] = {
                "row": np.repeat(np.arange(n), L),
                "label": np.tile(np.asarray(self.label_names, dtype=object), n),
                "predicted": self.predictions.ravel(),
                "score": self.scores.ravel(),
            }
            columns.update({name: v.ravel() for name, v in self.terms.items()})
            columns.update({name: np.repeat(v, L) for name, v in self.row_terms.items()})
            return pd.DataFrame(columns)
        if what != "neighbors":
            raise ValueError(f"what must be 'labels' or 'neighbors', got {what!r}")
        found = np.nonzero(self.rows >= 0)  # row-major: per row, nearest first (per label for BKNN)
        names = np.asarray(self.label_names, dtype=object)
        carried = self.neighbor_labels[found].astype(bool)
        columns = {"row": found[0]}
        if self.per_label:
            columns["label"] = names[found[1]]
        columns.update({
            "rank": found[-1],
            "id": self.ids[found],
            "training_row": self.rows[found],
            "distance": self.distances[found],
            "labels": [",".join(names[c]) for c in carried],
        })
        columns.update({name: v[found] for name, v in self.neighbor_terms.items()})
        return pd.DataFrame(columns)

    # -- text ---------------------------------------------------------------------------------

    def format(self, i: int | None = None, max_labels: int = 20, max_neighbors: int = 10) -> str:
        """A readable table per row: its labels (prediction, score, terms), then its neighbours.

        Parameters
        ----------
        i : int, default=None
            One row; None: every row, one after the other.
        max_labels : int, default=20
            Labels shown per row: the predicted ones and those of highest score first, the
            others counted in one line (all of them in label order when there are no more).
        max_neighbors : int, default=10
            Neighbours shown per row (BKNN: per label shown).

        Returns
        -------
        text : str
            Lines without trailing blanks.
        """
        which = range(len(self)) if i is None else [range(len(self))[i]]
        return "\n\n".join(self._format_row(r, max_labels, max_neighbors) for r in which)

    def __str__(self) -> str:
        return self.format()

    def _format_row(self, i: int, max_labels: int, max_neighbors: int) -> str:
        names, L = self.label_names, len(self.label_names)
        predicted = [names[j] for j in np.flatnonzero(self.predictions[i])]
        head = [f"row {i}: {self.model} predicts {{{', '.join(predicted)}}}", f"rule: {self.rule}"]
        head += [f"{name}: {_cell(v[i])}" for name, v in self.row_terms.items()]
        if L <= max_labels:
            shown = np.arange(L)
        else:  # the predicted labels, then the best scores, each group in score order
            shown = np.lexsort((np.arange(L), -self.scores[i], ~self.predictions[i]))[:max_labels]
        # the score column, unless a term is the score itself (ML-kNN's posterior, BRkNN's score)
        same = any(np.array_equal(v[i], self.scores[i]) for v in self.terms.values())
        header = ["label", "predicted", *([] if same else ["score"]), *self.terms]
        body = [[names[j], "yes" if self.predictions[i, j] else "no",
                 *([] if same else [_cell(self.scores[i, j])]),
                 *(_cell(v[i, j]) for v in self.terms.values())] for j in shown]
        lines = head + [""] + _table(header, body)
        if len(shown) < L:
            lines.append(f"... {L - len(shown)} more labels (max_labels={max_labels})")
        found = list(zip(*np.nonzero(self.rows[i] >= 0), strict=True))
        if self.per_label:  # the members of the labels shown
            keep = set(int(j) for j in shown)
            found = [pos for pos in found if pos[0] in keep and pos[1] < max_neighbors]
        header = (["label"] if self.per_label else []) + ["rank", "id", "distance", *self.neighbor_terms, "labels"]
        body = []
        for pos in found if self.per_label else found[:max_neighbors]:
            carried = [names[j] for j in np.flatnonzero(self.neighbor_labels[i][pos])]
            text = ", ".join(carried[:8]) + (f", ... ({len(carried)})" if len(carried) > 8 else "")
            body.append(([names[pos[0]]] if self.per_label else []) + [
                str(pos[-1] + 1), str(self.ids[i][pos]), _cell(self.distances[i][pos]),
                *(_cell(v[i][pos]) for v in self.neighbor_terms.values()), "{" + text + "}"])
        lines += ["", "neighbours" + (" (per label)" if self.per_label else "") + ":"] + _table(header, body)
        if not self.per_label and len(found) > max_neighbors:
            lines.append(f"... {len(found) - max_neighbors} more neighbours (max_neighbors={max_neighbors})")
        return "\n".join(line.rstrip() for line in lines)


def _cell(value: Any) -> str:
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _table(header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(row[c]) for row in [header, *body]) for c in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header), fmt.format(*("-" * w for w in widths))] + [fmt.format(*row) for row in body]


# -- the models' terms -------------------------------------------------------------------------
#
# Each function takes the fitted model, the validated queries and their neighbours (idx: the
# training rows, as kneighbors gives them) and returns (terms, raw scores, decisions, rule,
# row_terms, neighbor_terms): the raw scores and decisions are the model's ``_scores_and_decisions``
# (the scores before a 1-D target's normalisation).


def _counts(model: Any, idx: np.ndarray) -> np.ndarray:
    from ._counts import count_matrix

    C = count_matrix(idx, model._Y)
    return C.toarray() if sp.issparse(C) else C


def _mlknn(model: Any, X: Any, idx: np.ndarray) -> tuple:
    from ._counts import decide

    C = _counts(model, idx)
    cols = np.arange(C.shape[1])
    like1 = model.cond_prob_true_[cols, C]
    like0 = model.cond_prob_false_[cols, C]
    a = model.prior_ * like1  # the fit's table: prior[:, None] * cond_prob_true_, the same products
    b = (1.0 - model.prior_) * like0
    posterior, decisions = decide(a, b)
    terms = {"count": C, "prior": np.broadcast_to(model.prior_, C.shape).copy(),
             "likelihood_true": like1, "likelihood_false": like0, "a": a, "b": b, "posterior": posterior}
    return terms, posterior, decisions, "predicted where a >= b; posterior = a / (a + b)", {}, {}


def _lamlknn(model: Any, X: Any, idx: np.ndarray) -> tuple:
    from ._counts import decide

    C = _counts(model, idx)
    n, L = C.shape
    groups = model._groups(X)
    g = np.zeros(n, dtype=np.intp) if groups is None else np.asarray(groups, dtype=np.intp)
    g1, glike1, glike0 = model._global
    m = len(model.cluster_ids_)
    # the cluster tables, then the whole set's (queries in a cluster without members), whose
    # P(W) is 1: (1.0 * p) * like = p * like, the fit's product for that group
    pw = np.append(model.cluster_prior_, 1.0)[g][:, None]
    prior = np.vstack([model.prior_, g1[None]])[g]
    cols = np.arange(L)
    like1 = np.concatenate([model.cond_prob_true_, glike1[None]])[g[:, None], cols, C]
    like0 = np.concatenate([model.cond_prob_false_, glike0[None]])[g[:, None], cols, C]
    a = (pw * prior) * like1
    b = (pw * (1.0 - prior)) * like0
    posterior, decisions = decide(a, b)
    cluster = np.where(g < m, model.cluster_ids_[np.minimum(g, m - 1)], -1)
    terms = {"count": C, "cluster_prior": np.broadcast_to(pw, C.shape).copy(), "prior": prior,
             "likelihood_true": like1, "likelihood_false": like0, "a": a, "b": b, "posterior": posterior}
    rule = ("predicted where a >= b; a = P(W) P(H1 | W) P(E_count | H1, W), b likewise, in the query's "
            "cluster W (cluster -1: the whole training set, P(W) = 1); posterior = a / (a + b)")
    return terms, posterior, decisions, rule, {"cluster": cluster}, {}


def _brknn(model: Any, X: Any, idx: np.ndarray) -> tuple:
    from ._counts import vote_scores

    if not (isinstance(model.weights, str) and model.weights == "uniform"):
        return model._explain_weighted(X)  # weighted votes: the model's own terms, same names
    C = _counts(model, idx)
    k = model.n_neighbors_
    share = C / k
    threshold = np.full(C.shape, 0.5)
    decisions = share >= threshold
    terms = {"votes": C, "share": share, "threshold": threshold}
    row_terms: dict[str, np.ndarray] = {}
    rule = "predicted where share = votes / k >= threshold"
    if model.extension == "a":
        # no label at the threshold but some votes: the label of most votes (lowest index on ties)
        fallback = np.zeros(C.shape, dtype=bool)
        rows = np.flatnonzero(~decisions.any(axis=1) & (C.max(axis=1) > 0))
        fallback[rows, np.argmax(C[rows], axis=1)] = True
        terms["fallback"] = fallback
        decisions = decisions | fallback
        rule += ", or where fallback (the most voted label of a row that predicts none)"
    elif model.extension == "b":
        m = (2 * model._set_sizes[idx].sum(axis=1) + k) // (2 * k)
        order = np.argsort(-C, axis=1, kind="stable")
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(C.shape[1])[None, :], axis=1)
        terms["rank"] = rank + 1
        row_terms["m"] = m
        decisions = rank < m[:, None]
        rule = ("predicted where rank <= m: the m labels of most votes (ties: lower label), m the "
                "neighbours' mean label-set size rounded half up; threshold not used")
    terms["score"] = vote_scores(C, k)
    return terms, terms["score"], decisions, rule, row_terms, {}


def _lpknn(model: Any, X: Any, idx: np.ndarray) -> tuple:
    from ._counts import vote_scores

    if not (isinstance(model.weights, str) and model.weights == "uniform"):
        return model._explain_weighted(X)  # weighted votes: the model's own terms, same names
    C = _counts(model, idx)
    sets = model._set_of_row[idx]
    # each neighbour's label set and how many neighbours carry it; the first neighbour of
    # most votes holds the winning set (ties: the set met first, nearest)
    set_votes = (sets[:, :, None] == sets[:, None, :]).sum(axis=2)
    first = np.argmax(set_votes, axis=1)
    chosen = model.label_sets_[sets[np.arange(len(sets)), first]]
    decisions = chosen.toarray().astype(bool) if sp.issparse(chosen) else np.asarray(chosen).astype(bool)
    terms = {"votes": C, "score": vote_scores(C, model.n_neighbors_)}
    row_terms = {"winning_set_votes": set_votes[np.arange(len(sets)), first], "winning_rank": first + 1}
    rule = ("the label set carried by most neighbours (set_votes; ties: the nearest), i.e. that of the "
            "neighbour at winning_rank; score = (votes + 1) / (k + 1.5) ranks labels only")
    return terms, terms["score"], decisions, rule, row_terms, {"set_votes": set_votes}


def _dmlknn(model: Any, X: Any, idx: np.ndarray) -> tuple:
    from ._counts import decide

    C = _counts(model, idx)
    V1, V0, a, b = model._vote_terms(C)
    posterior, decisions = decide(a, b)
    terms = {"count": C, "similar_true": V1.astype(np.int64), "similar_false": V0.astype(np.int64),
             "prior": np.broadcast_to(model.prior_, C.shape).copy(), "a": a, "b": b, "posterior": posterior}
    rule = ("predicted where a >= b; a = prior (s + similar_true) / (s L + positives), b likewise; "
            "similar_*: training rows whose counts are within delta of the query's on every label and "
            "equal on this one, with and without the label")
    return terms, posterior, decisions, rule, {}, {}


def _hybrid(model: Any, X: Any, idx: np.ndarray) -> tuple:
    C = _counts(model, idx)
    mean_vote = C / model.n_neighbors_
    regression = model.label_intercept_ + mean_vote @ model.label_coef_.T
    score = np.clip(regression, 0.0, 1.0)
    threshold = np.full(C.shape, float(model.threshold))
    terms = {"mean_vote": mean_vote, "regression": regression, "score": score, "threshold": threshold}
    rule = ("predicted where score >= threshold; score = clip(intercept + coef @ mean_vote, 0, 1), "
            "the label model applied to the neighbours' mean label row")
    return terms, score, score >= threshold, rule, {}, {}


def _iblr(model: Any, X: Any, idx: np.ndarray) -> tuple:
    from .iblr import decide_logistic

    terms = model._margin_terms(_counts(model, idx), X)
    score, decisions = decide_logistic(terms["margin"])
    terms.update(score=score, threshold=np.full(score.shape, 0.5))
    rule = ("predicted where score >= threshold; score = 1 / (1 + exp(-margin)), margin = intercept + "
            "evidence_part" + (" + feature_part" if model.plus else "") + "; evidence_part = coef_[l, :L] @ "
            "evidence, the shares of the neighbours carrying each label" +
            ("; feature_part = coef_[l, L:] @ x" if model.plus else ""))
    return terms, score, decisions, rule, {}, {}


def _generic(model: Any, X: Any, idx: np.ndarray) -> tuple:
    """A model with no terms of its own here: its counts, scores and decisions."""
    C = _counts(model, idx)
    scores = np.empty(C.shape)
    decisions = np.empty(C.shape, dtype=bool)
    from ._counts import row_blocks

    for rows in row_blocks(len(C), C.shape[1] * idx.shape[1]):
        scores[rows], decisions[rows] = model._score_block(idx[rows], X[rows])
    return {"count": C, "score": scores}, scores, decisions, "the model's own rule", {}, {}


_TERMS: dict[str, Callable[..., tuple]] = {
    "mlneighbors.mlknn.MLkNN": _mlknn,
    "mlneighbors.lamlknn.LAMLkNN": _lamlknn,
    "mlneighbors.brknn.BRkNN": _brknn,
    "mlneighbors.lpknn.LPkNN": _lpknn,
    "mlneighbors.dmlknn.DMLkNN": _dmlknn,
    "mlneighbors.hybrid.HybridKNN": _hybrid,
    "mlneighbors.iblr.IBLRML": _iblr,
}


#: the models whose neighbours are found per label (shape (n, L, b)), explained by :func:`_bknn`
_PER_LABEL = {"mlneighbors.bknn.BKNN"}


def _neighbour_labels(model: Any, idx: np.ndarray) -> np.ndarray:
    """The label rows of the neighbours ``idx`` (any shape; -1: none, zeros), int8."""
    from ._config import check_fits

    check_fits(idx.size * model.n_labels_, "explain's neighbour label rows (rows x neighbours x labels, int8): "
               f"explain fewer rows than {idx.shape[0]}")
    flat = idx.reshape(-1)
    found = flat >= 0
    out = np.zeros((flat.size, model.n_labels_), dtype=np.int8)
    rows = model._Y[flat[found]]
    out[found] = rows.toarray() if sp.issparse(rows) else rows
    return out.reshape(*idx.shape, model.n_labels_)


def _bknn(model: Any, X: Any) -> tuple:
    """BKNN's neighbours (per label) and terms: its own index, blocks and kernel."""
    from .bknn import balanced_scores

    index = model._get_index()
    dist, idx = index.kneighbors(X)
    n, L = X.shape[0], model.n_labels_
    f = np.empty((n, L), dtype=np.float64)
    for rows in index.row_blocks(n):
        f[rows] = balanced_scores(index.sq_distances(X[rows]), model.sigma_)
    share = (f + 1.0) / L
    threshold = np.broadcast_to(model.thresholds_, f.shape).copy()
    terms = {"balanced_score": f, "threshold": threshold, "margin": f - threshold, "share": share}
    rule = ("predicted where balanced_score > threshold (the label's learned threshold); "
            "share = (balanced_score + 1) / L is predict_proba")
    return dist, idx, (terms, share, f > model.thresholds_, rule, {}, {})


class Explainable:
    """The ``explain`` method of every model (a mixin of the estimator base)."""

    def explain(self, X: Any, *, label_names: Any = None) -> Explanation:
        """Why the model predicts what it does for the rows ``X``: their neighbours and the
        model's decision quantities per label.

        For a few rows (the explanation holds each neighbour's label row: ``n k L`` bytes).
        The quantities are the model's own numbers: the score term equals ``predict_proba`` and
        the rule applied to the terms gives ``predict``, exactly.

        - ML-kNN: ``count`` (neighbours with the label), ``prior``, ``likelihood_true`` and
          ``likelihood_false`` (of that count), ``a``, ``b`` and ``posterior``; predicted where
          ``a >= b``.
        - LAML-kNN: the same in the query's cluster, and ``cluster_prior``; the row's
          ``cluster``.
        - DML-kNN: ``count``, ``similar_true`` and ``similar_false`` (MULAN's ``V1``, ``V0``),
          ``prior``, ``a``, ``b``, ``posterior``.
        - BRkNN: ``votes``, ``share`` and ``threshold`` (0.5), ``score``; -a adds ``fallback``,
          -b ``rank`` and the row's ``m``.
        - LPkNN: ``votes`` and ``score`` per label; each neighbour's ``set_votes`` (the
          neighbours carrying its label set) and the row's ``winning_rank``.
        - BKNN: ``balanced_score``, ``threshold``, ``margin`` and ``share``; its neighbours are
          the ``n_per_label`` nearest members of each label.
        - HybridKNN: ``mean_vote``, ``regression``, ``score`` and ``threshold``.
        - IBLRML: ``evidence`` (the share of neighbours with each label), ``evidence_part`` and,
          with ``plus``, ``feature_part`` (the coefficients' contributions), ``intercept``,
          ``margin``, ``score`` and ``threshold`` (0.5).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
            The rows to explain.
        label_names : list of str, default=None
            Names of the labels; None: the classes for a 1-D target, else ``label0``,
            ``label1``, ...

        Returns
        -------
        explanation : Explanation
            Its ``ids``, ``distances`` and ``neighbor_labels`` (the neighbours), ``scores``
            (``predict_proba``), ``predictions`` (``predict``, as booleans per label),
            ``terms`` and a one-line ``rule``; ``to_frame()``, ``to_json()``, ``str()``.

        Examples
        --------
        >>> import numpy as np
        >>> from mlneighbors import MLkNN
        >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [1.0], [1.1], [1.2], [1.3]])
        >>> Y = np.array([[1, 0], [1, 0], [1, 1], [1, 0], [0, 1], [0, 1], [1, 1], [0, 1]])
        >>> e = MLkNN(n_neighbors=3).fit(X, Y).explain([[0.05]])
        >>> e.ids
        array([[0, 1, 2]])
        >>> e.terms["count"]
        array([[3, 1]], dtype=int32)
        >>> e.terms["posterior"].round(3)
        array([[0.854, 0.226]])
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "_fit_X")
        Xv = self._validate_queries(X)
        name = type(self).__name__
        paths = [f"{cls.__module__}.{cls.__name__}" for cls in type(self).__mro__]
        if any(path in _PER_LABEL for path in paths):  # BKNN: the nearest members of every label
            dist, idx, found = _bknn(self, Xv)
        else:
            hook = next((_TERMS[path] for path in paths if path in _TERMS), _generic)
            dist, idx = self._query(Xv, self.n_neighbors_)
            found = hook(self, Xv, idx)
        terms, raw, decisions, rule, row_terms, neighbor_terms = found
        if self._multilabel:
            scores, predictions = raw, np.asarray(decisions, dtype=bool)
        else:  # the classes are the binarised columns: predict_proba normalises, predict takes the best
            total = raw.sum(axis=1, keepdims=True)
            scores = np.divide(raw, total, out=np.full_like(raw, 1.0 / raw.shape[1]), where=total > 0)
            predictions = np.zeros(raw.shape, dtype=bool)
            predictions[np.arange(len(raw)), np.argmax(raw, axis=1)] = True
            rule = f"the class of highest score (multi-label rule, not used: {rule})"
        if label_names is None:
            label_names = ([str(c) for c in self.classes_] if not self._multilabel
                           else [f"label{j}" for j in range(self.n_labels_)])
        elif len(label_names) != self.n_labels_:
            raise ValueError(f"label_names has {len(label_names)} names for the model's {self.n_labels_} labels")
        safe = np.where(idx >= 0, idx, 0)
        ids = np.where(idx >= 0, self.training_ids_[safe], "" if self.training_ids_.dtype.kind == "U" else -1)
        return Explanation(name, list(label_names), rule, ids.astype(self.training_ids_.dtype, copy=False),
                           idx, dist, _neighbour_labels(self, idx), scores, predictions, terms, row_terms,
                           neighbor_terms)
