"""BKNN: class-balanced k-nearest neighbours with learned per-label thresholds.

Wang, Ding & Huang, Multi-label classification: inconsistency and class balanced k-nearest
neighbor (AAAI 2010); the formulas are in the user guide, :doc:`/user_guide/bknn_blda`.

Three kernels are public because they are the method's formulas and the tests hold
loop twins against them: :func:`balanced_scores` (the decision score ``f`` from the
per-label neighbour distances, in log space), :func:`signal_pvalues` (whether a label's
leave-one-out scores rank its members above the other rows more than chance would: a one-sided
Mann-Whitney test per label) and :func:`learn_thresholds` (the adaptive decision boundary: one
F-alpha-optimal threshold per label, O(n log n), capped at the label's member count for a
label without signal).

The per-label neighbours come from the base's index through
:class:`mlneighbors.neighbors.LabelRestrictedIndex` (the exact engine's masked global search,
or one index per label for any other backend); see that module for the measured comparison.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtr

from ._base import KNeighborsMultilabelBase
from ._config import block_rows
from ._dask_estimators import lazy_on_dask
from ._docstrings import fill_doc
from ._params import HasMethods, Instance, Integer, Options, Real
from .neighbors import LabelRestrictedIndex
from .neighbors._internal import blas_single_thread, each_block, resolve_n_jobs

__all__ = ["BKNN", "balanced_scores", "learn_thresholds", "signal_pvalues"]

#: the threshold given to a label whose F-alpha is best when every training row is
#: predicted: below BKNN's lowest possible score (f >= -1), so the label is always predicted
_PREDICT_ALL = -2.0
#: bytes of temporaries per (row, label) cell of the threshold and signal kernels (sorting
#: order, sorted scores, cumulated counts, ranks, masks): they work on blocks of labels within
#: ``working_memory``
_CELL_BYTES = 64


def _label_blocks(n_rows: int, n_labels: int) -> list[slice]:
    """Blocks of labels whose (n_rows, labels) temporaries fit the working memory."""
    step = block_rows(_CELL_BYTES * max(n_rows, 1))
    return [slice(start, min(start + step, n_labels)) for start in range(0, n_labels, step)]


def balanced_scores(sq_dist: np.ndarray, sigma: float) -> np.ndarray:
    """BKNN decision scores ``f`` from the squared distances to each label's neighbours.

    ``W = exp(-d^2 / (2 sigma))``, ``s_l = sum of W over the label's b neighbours``,
    ``sbar = mean over labels of s_l``, ``f_l = (s_l - sbar) / sbar``.

    Each label's weights are summed in ascending order of distance: the same distances in any
    order give the same scores bit for bit, so two labels whose ``b`` nearest members are the
    same rows tie exactly, whatever order a search returned them in.

    Computed in log space: every exponent of a query is shifted by the query's
    largest one (its nearest neighbour over all labels), which multiplies every
    ``s_l`` and ``sbar`` of that query by the same factor and leaves ``f`` unchanged.
    The shifted nearest term is ``exp(0) = 1``, so ``sbar >= 1 / n_labels`` and the
    ratio is never 0/0, however large the distances (with d ~ 1000 every unshifted
    ``W`` underflows to 0 in float64).  A term whose weight is below 1e-308 of the
    nearest one underflows to 0, which changes ``f`` by less than that relative amount.

    Parameters
    ----------
    sq_dist : ndarray of shape (n_queries, n_labels, b)
        Squared distances; ``inf`` where a label has fewer than ``b`` members.
    sigma : float
        Bandwidth, ``> 0``.

    Returns
    -------
    f : ndarray of shape (n_queries, n_labels)
        In ``[-1, n_labels - 1]``.  A label with no neighbour at all has ``s_l = 0`` and
        ``f_l = -1``.  A query with no neighbour in any label (possible only during
        leave-one-out fitting, or when no label has a member) gets ``f = 0`` for every
        label: all labels are equally (un)supported.

    Examples
    --------
    A query near label 0's neighbours and far from label 1's:

    >>> import numpy as np
    >>> from mlneighbors.bknn import balanced_scores
    >>> balanced_scores(np.array([[[0.1, 0.2], [4.0, 5.0]]]), sigma=1.0).round(3)
    array([[ 0.79, -0.79]])
    """

    q, n_labels, _ = sq_dist.shape
    f = np.zeros((q, n_labels), dtype=np.float64)
    if q == 0 or n_labels == 0:
        return f
    nearest = sq_dist.reshape(q, -1).min(axis=1)
    ok = np.isfinite(nearest)
    if not ok.any():
        return f
    d2 = np.sort(sq_dist[ok], axis=2)  # ascending: order-free sums (see above)
    weights = np.exp((nearest[ok, None, None] - d2) * (0.5 / sigma))  # exp(-inf) = 0
    s = weights.sum(axis=2)
    sbar = s.mean(axis=1, keepdims=True)
    f[ok] = s / sbar - 1.0
    return f


def signal_pvalues(scores: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Whether each label's scores rank its members above the other rows more than chance
    would: the p-value of a one-sided Mann-Whitney test per label, vectorised over labels.

    For label ``l`` with ``m`` members among ``n`` rows (``n0 = n - m`` others) and ``r_i``
    the ascending rank of ``scores[i, l]`` in its column (ties get their average rank),

    ``U = sum of r_i over the members - m (m + 1) / 2``, the number of (member, other) pairs
    in which the member scores higher (a tie counts 1/2); ``AUC = U / (m n0)``.

    If the scores carry no information about the label, the members are a random ``m``-subset
    of the rows, whatever the scores are: ``U`` then has mean ``m n0 / 2`` and variance
    ``m n0 / 12 (n + 1 - T / (n (n - 1)))``, ``T`` the sum of ``t^3 - t`` over the runs of
    ``t`` tied scores.  The p-value is the normal approximation with continuity correction,
    ``1 - Phi((U - m n0 / 2 - 1/2) / sd)``: what ``scipy.stats.mannwhitneyu(members, others,
    alternative="greater", method="asymptotic")`` returns for each label, computed from one sort
    of every column at once (the tests hold it against that and against a loop over pairs).
    No permutation is drawn: the null distribution depends on ``n``, ``m`` and the ties only.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_labels)
        BKNN's leave-one-out scores (any real scores: only their order within a column counts).
    Y : ndarray of shape (n_samples, n_labels)
        Binary label indicator.

    Returns
    -------
    pvalues : ndarray of shape (n_labels,)
        Small when the members score high.  1 for a label with no member, one carried by every
        row, or a column of equal scores (nothing to compare).

    Examples
    --------
    The two members hold the two highest of four scores (``U = 4``, ``AUC = 1``), which a
    random pair does once in six (the normal approximation says 0.123 for 1/6; it is meant
    for the tens of rows and more that a fit has):

    >>> import numpy as np
    >>> from mlneighbors.bknn import signal_pvalues
    >>> signal_pvalues(np.array([[0.9], [0.8], [0.3], [0.1]]), np.array([[1], [1], [0], [0]])).round(3)
    array([0.123])
    """
    scores = np.asarray(scores, dtype=np.float64)
    Y = np.asarray(Y)
    n, n_labels = scores.shape
    pvalues = np.ones(n_labels)
    if n < 2:
        return pvalues
    for cols in _label_blocks(n, n_labels):
        pvalues[cols] = _signal_pvalues_block(scores[:, cols], Y[:, cols])
    return pvalues


def _signal_pvalues_block(scores: np.ndarray, Y: np.ndarray) -> np.ndarray:
    n, n_labels = scores.shape
    order = np.argsort(scores, axis=0)
    s = np.take_along_axis(scores, order, axis=0)  # ascending
    members = np.take_along_axis(Y.astype(bool), order, axis=0)
    del order
    pos = np.arange(n)[:, None]
    first = np.ones((n, n_labels), dtype=bool)
    first[1:] = s[1:] != s[:-1]
    last = np.ones((n, n_labels), dtype=bool)
    last[:-1] = first[1:]
    start = np.maximum.accumulate(np.where(first, pos, 0), axis=0)  # where each one's run starts
    end = np.minimum.accumulate(np.where(last, pos, n - 1)[::-1], axis=0)[::-1]  # ... and ends
    m = members.sum(axis=0).astype(np.float64)
    n0 = n - m
    u = np.where(members, (start + end) / 2.0 + 1.0, 0.0).sum(axis=0) - m * (m + 1) / 2
    t = (end - start + 1).astype(np.float64)
    ties = (t * t - 1.0).sum(axis=0)  # sum over runs of t^3 - t: each of a run's t rows adds t^2 - 1
    sd = np.sqrt(m * n0 / 12.0 * ((n + 1) - ties / (n * (n - 1.0))))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (u - m * n0 / 2.0 - 0.5) / sd  # sd = 0 (nothing to compare): -0.5 / 0 = -inf, p = 1
    return ndtr(-z)


def learn_thresholds(
    scores: np.ndarray, Y: np.ndarray, alpha: float = 0.5, *, no_signal: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-label thresholds maximising F-alpha on training scores (BKNN's adaptive boundary),
    among the thresholds that do better than chance; for the labels without signal, capped at
    the label's member count.

    For label ``l`` and threshold ``h`` the rows with ``scores[:, l] > h`` are predicted;
    ``F_alpha = 1 / (alpha / P + (1 - alpha) / R) = TP / (alpha (TP + FP) + (1 - alpha) n_pos)``
    (0 when TP = 0).  Only the cuts between distinct score values change the prediction,
    so every column is sorted once (O(n log n)) and F is evaluated at each distinct value.

    **Better than chance.**  A threshold is admissible only if the rows it predicts carry
    the label more often than the training rows do (precision above the label's frequency
    ``n_pos / n``); predicting every row (precision equal to the frequency) is admissible
    only for a label carried by at least half of the training rows.  When no threshold is
    admissible the scores hold no evidence for the label and it is decided by its prior:
    never predicted (its frequency is below one half).  Without this rule a label with a
    handful of members, whose leave-one-out scores are at the bottom (a single member has
    no other member to be near: ``f = -1``), is best served by F when predicting *every*
    row (TP > 0, so F > 0), and would be predicted on every query: 20 of the 45 labels of
    ``medical``, Hamming loss 0.50 instead of 0.06 (``benchmarks/bknn.py --figures``).

    **Labels without signal** (``no_signal``, decided by BKNN with :func:`signal_pvalues`).
    Precision above the frequency is a weak bar: with 2 members among 60 rows, predicting
    59 of them passes it (2/59 > 2/60) whenever the lowest score is not a member's, and it
    is then F's best cut (F1 = 4/61, against 2/(r + 2) for a cut at the first member's rank
    r).  For scores that carry no information F always favours such cuts: predicting a
    random fraction ``q`` of the rows has precision ``p`` (the frequency), recall ``q`` and
    ``F1 = 2 p q / (p + q)``, largest at ``q = 1``.  So for a label flagged in ``no_signal``
    the threshold is raised, where it predicts more training rows than carry the label, to
    the one that predicts the label's ``n_pos`` highest-scored rows (fewer when ties straddle
    the cut; none when the highest score alone is shared by more than ``n_pos`` rows): the
    label is predicted as often as it occurs, where it scores highest.  A flagged label whose
    F-optimal threshold already predicts no more rows keeps it, a label with no admissible
    threshold stays never predicted, and one carried by at least half the rows may still be
    predicted on every row (its prior, as above).

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_labels)
    Y : ndarray of shape (n_samples, n_labels)
        Binary label indicator.
    alpha : float, default=0.5
        Weight of precision, in (0, 1); 0.5 gives F1.
    no_signal : array-like of bool of shape (n_labels,), default=None
        The labels whose thresholds are capped at their member count (see above); None: none.

    Returns
    -------
    thresholds : ndarray of shape (n_labels,)
        The midpoint between the lowest predicted score and the highest unpredicted one
        (the widest margin on both sides; when the two are adjacent floats, the lower).
        Ties in F: the highest threshold (fewest predicted rows).  When predicting every
        row is best (and admissible), ``min(-2, lowest score - 1)``: below every training
        score and, for BKNN's scores (``f >= -1``), below every possible score, so the label
        is always predicted.  A label with no admissible threshold (no positive row
        included) gets ``+inf``: never predicted.
    fscores : ndarray of shape (n_labels,)
        The F-alpha of the chosen threshold on the training scores (0 when ``+inf``).

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.array([[0.9], [0.8], [0.3], [0.1]])
    >>> Y = np.array([[1], [1], [0], [0]])
    >>> h, best = learn_thresholds(scores, Y)
    >>> h, best
    (array([0.55]), array([1.]))

    A label without signal is predicted on as many rows as carry it, where it scores highest:
    here the top row of 6, where F1 alone predicts five (the member is fifth: F1 = 1/3):

    >>> scores = np.array([[0.9], [0.8], [0.7], [0.6], [0.5], [0.1]])
    >>> Y = np.array([[0], [0], [0], [0], [1], [0]])
    >>> learn_thresholds(scores, Y)[0], learn_thresholds(scores, Y, no_signal=[True])[0]
    (array([0.3]), array([0.85]))
    """
    scores = np.asarray(scores, dtype=np.float64)
    Y = np.asarray(Y)
    n, n_labels = scores.shape
    if no_signal is not None:
        no_signal = np.asarray(no_signal, dtype=bool)
        if no_signal.shape != (n_labels,):
            raise ValueError(f"no_signal must have shape ({n_labels},), got {no_signal.shape}")
    h, best = np.empty(n_labels), np.empty(n_labels)
    for cols in _label_blocks(n, n_labels):
        h[cols], best[cols] = _thresholds_block(
            scores[:, cols], Y[:, cols], alpha, None if no_signal is None else no_signal[cols]
        )
    return h, best


def _thresholds_block(
    scores: np.ndarray, Y: np.ndarray, alpha: float, no_signal: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    Y = Y.astype(bool)
    n, n_labels = scores.shape
    cols = np.arange(n_labels)
    order = np.argsort(-scores, axis=0, kind="stable")
    s = np.take_along_axis(scores, order, axis=0)  # descending
    tp = np.cumsum(np.take_along_axis(Y, order, axis=0), axis=0, dtype=np.int64)
    n_pos = Y.sum(axis=0)
    n_pred = np.arange(1, n + 1, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        F = tp / (alpha * n_pred + (1.0 - alpha) * n_pos)
    # a cut is possible only after the last row of a run of equal scores, and it must
    # select positives more precisely than their frequency: tp / n_pred > n_pos / n, in
    # integers; predicting every row only for a label at least half the rows carry
    last_of_run = np.ones((n, n_labels), dtype=bool)
    last_of_run[:-1] = s[1:] != s[:-1]
    better = tp * n > n_pos[None, :] * np.arange(1, n + 1, dtype=np.int64)[:, None]
    better[n - 1] = 2 * n_pos >= n
    F = np.where(last_of_run & better, F, -np.inf)
    j = np.argmax(F, axis=0)  # the first maximum: the highest threshold
    best = F[j, cols]
    if no_signal is not None:
        # the last cut that predicts at most n_pos rows (the cut after sorted row k predicts k + 1)
        within = last_of_run & (np.arange(1, n + 1)[:, None] <= n_pos[None, :])
        has_cap = within.any(axis=0)
        cap = (n - 1) - np.argmax(within[::-1], axis=0)
        # predicting every row stays: it is admissible only as the prior of a label at least
        # half the rows carry
        over = no_signal & np.isfinite(best) & ((j > cap) | ~has_cap) & (j < n - 1)
        j = np.where(over & has_cap, cap, j)
        capped_f = tp[cap, cols] / (alpha * (cap + 1.0) + (1.0 - alpha) * np.maximum(n_pos, 1))
        best = np.where(over, np.where(has_cap, capped_f, -np.inf), best)
    above = s[j, cols]
    below = s[np.minimum(j + 1, n - 1), cols]
    h = below + (above - below) / 2
    h = np.where((h > below) & (h < above), h, below)
    everything = j == n - 1
    h[everything] = np.minimum(_PREDICT_ALL, s[n - 1, everything] - 1.0)
    never = np.isneginf(best)  # no admissible threshold (a label without members included)
    h[never] = np.inf
    best[never] = 0.0
    return h, best


@fill_doc
class BKNN(KNeighborsMultilabelBase):
    """Class-balanced k-nearest neighbours (BKNN) with learned per-label thresholds.

    For a query ``x`` and every label ``l``, the ``b`` nearest training instances among
    those carrying ``l`` give ``s_l(x) = sum exp(-||x - z||^2 / (2 sigma))``; with
    ``sbar`` the mean of ``s_l`` over labels, the decision score is
    ``f_l = (s_l - sbar) / sbar``.  Label ``l`` is predicted when ``f_l > h_l``, the
    threshold ``h_l`` maximising F-alpha on the leave-one-out scores of the training set;
    for a label whose leave-one-out scores do not rank its members above the other rows
    better than chance, no lower than the threshold that predicts as many training rows as
    carry it (``signal_level``).

    Parameters
    ----------
    n_per_label : int, default=5
        ``b``, neighbours taken in every label (the paper's setting).  A label with fewer
        members uses all of them (leave-one-out: all but the row itself).
    sigma : "auto" or float, default="auto"
        Bandwidth of ``W = exp(-d^2 / (2 sigma))`` (the paper divides by ``2 sigma``, not
        ``2 sigma^2``).  "auto": the mean, over the (row, label) pairs with the row
        carrying the label, of the squared distance from the row to its ``b``-th nearest
        other member of that label (its farthest, when fewer), so that ``W`` is about
        ``exp(-1/2)`` at the typical ``b``-th neighbour: neither all 0 nor all 1.
    alpha : float, default=0.5
        Weight of precision in ``F_alpha = 1 / (alpha / P + (1 - alpha) / R)``, in (0, 1);
        0.5 gives F1 (the paper's setting).
    signal_level : float or None, default=0.01
        Level of the test that a label's leave-one-out scores rank its members above the other
        rows (one-sided Mann-Whitney, :func:`signal_pvalues`).  A label whose p-value exceeds
        it has no detectable signal: its threshold is raised, where needed, so that it predicts
        no more training rows than carry the label (its prevalence; see Notes).  A label
        without signal passes the test by chance with probability about ``signal_level``.
        None: no test, the F-alpha-optimal thresholds of the paper (with the better-than-chance
        rule of :func:`learn_thresholds`).
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``d`` in ``W``; for "cosine" ``d = 1 - cos(x, z)`` (a zero row is at distance 1).  Prefer
        "cosine" for sparse text (bag of words), where Euclidean distances mostly measure
        document length.
    backend : str or index object, default="exact"
        The neighbour index (``mlneighbors.neighbors``), asked for the nearest members of
        every label through :class:`~mlneighbors.neighbors.LabelRestrictedIndex`: "exact"
        gets the vectorised global search with masking (the faster by measurement, see
        Notes); any other registered backend name or an object with ``build(X)`` and
        ``query(Q, k)`` is copied once per label.
    {backend_params_parameter}
    {n_jobs_parameter}

    Attributes
    ----------
    sigma_ : float
        The bandwidth used.
    thresholds_ : ndarray of shape (n_labels,)
        ``h_l``; ``-2`` for a label best predicted always, ``+inf`` for a label never
        predicted (no training members, or no threshold better than chance on the
        leave-one-out scores and fewer than half the rows carry it).  See
        :func:`learn_thresholds`.
    train_fscores_ : ndarray of shape (n_labels,)
        The F-alpha each threshold reaches on the leave-one-out training scores.
    signal_pvalues_ : ndarray of shape (n_labels,)
        The p-value of each label's leave-one-out scores under "no signal"
        (:func:`signal_pvalues`); the labels above ``signal_level`` are the capped ones.
    {target_attributes}

    Notes
    -----
    *Log space.*  Scores are computed with the exponents shifted by each query's largest
    (see :func:`balanced_scores`): finite for any distances, where the literal formula
    gives 0/0 as soon as every ``W`` underflows (high-dimensional data, small sigma).

    *Search.*  With ``backend="exact"`` one distance block per block of queries is
    masked per label (vectorised over labels through a handful of label size classes);
    this measured 1.6x (yeast) to 9.7x (emotions) faster than one exact index per label
    (8.4x on corel5k, 374 labels), so it is the default; see
    :class:`~mlneighbors.neighbors.LabelRestrictedIndex` and ``benchmarks/bknn.py``.
    :meth:`kneighbors` returns the per-label neighbours.  Distances
    come from ``||q||^2 - 2 q.x + ||x||^2`` on data centred at the training mean (dense)
    in float64; ties at the ``b``-th neighbour do not matter (equal distances, equal
    weights).  Leave-one-out excludes the row itself by index; its duplicates stay.

    *Choices the paper leaves open.*  ``sbar`` averages over all labels, a label without
    members included (its ``s_l = 0``, ``f_l = -1``).  A query with no neighbour in any
    label gets ``f = 0``.  Thresholds are midpoints between consecutive distinct training
    scores; ties in F go to the higher threshold; see :func:`learn_thresholds`.

    *Scores.*  ``predict_proba`` is ``(f_l + 1) / L = s_l / sum_m s_m``, the query's share
    of similarity mass held by label ``l``: a strictly increasing map of ``f`` that is the
    same for every label, so scores compare across labels and rank them as ``f`` does (a
    map of the margin ``f - h`` would shift each label by its own threshold and rank worse
    than the labels' training frequencies on most data).  Its values lie in [0, 1] and sum
    to 1 over the labels; 0 for a label without members.  A predicted label is one with
    ``f > h``, not one scoring above 0.5.  ``decision_function`` returns the margin ``f - h``
    (scikit-learn's multilabel contract: positive exactly where predicted).  For a 1-D
    target (classes) the classes are labels, ``predict`` returns the class of largest ``f``
    (the balanced vote; ties: the first class) and ``predict_proba`` the same shares; the
    thresholds are then not used.

    *Many labels.*  Every query is compared with the members of every label: the fit holds
    (n, L, b) squared distances and predictions (n, L) scores, whatever ``Y`` is (a fit
    that would not fit in memory fails at once, naming its estimate).

    *Thresholds.*  Rare labels: a threshold must do better than chance on the
    leave-one-out scores, else the label follows its prior (see :func:`learn_thresholds`).

    *Labels without signal* (a departure from the paper, which maximises F-alpha for every
    label).  For scores that say nothing about a label, F-alpha is largest when the label is
    predicted on (nearly) every row, and the F-optimal threshold predicts a label held by 2
    random rows of 60 on most new rows.  So each label's leave-one-out scores are tested
    first: ``U``, the number of (member, other row) pairs in which the member scores higher,
    against its distribution when the members are a random subset of the rows (mean
    ``m n0 / 2``, variance ``m n0 (n + 1 - T / (n (n - 1))) / 12`` for ``m`` members,
    ``n0`` others and ties ``T``; normal approximation, no permutations).  A label with
    p-value above ``signal_level`` is predicted on no more training rows than carry it, those
    where it scores highest; see :func:`signal_pvalues` and :func:`learn_thresholds`.  With
    ``n_per_label`` members or fewer a member's leave-one-out score sums one weight fewer than
    another row's (its own is left out), so such labels' members score low and most of them
    are capped: the cap, rather than "never", keeps them where their scores on new rows are
    highest.  ``benchmarks/bknn.py --figures`` gives the effect on every shared dataset.

    {wang2010_references}

    Examples
    --------
    >>> import numpy as np
    >>> from mlneighbors import BKNN
    >>> X = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> Y = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]])
    >>> BKNN(n_per_label=2).fit(X, Y).predict([[0.05], [1.15]])
    array([[1, 0],
           [0, 1]])
    """

    _constraints: dict = {
        "n_per_label": [Integer(1)],
        "sigma": [Options("auto"), Real(0, closed="neither")],
        "alpha": [Real(0, 1, closed="neither")],
        "signal_level": [Real(0, 1, closed="neither"), None],
        "metric": [Options("euclidean", "cosine")],
        "backend": [Instance(str), HasMethods("build", "query")],
        "backend_params": [Instance(dict), None],
        "n_jobs": [Integer(), None],
    }

    def __init__(
        self,
        n_per_label: int = 5,
        *,
        sigma: Any = "auto",
        alpha: float = 0.5,
        signal_level: float | None = 0.01,
        metric: str = "euclidean",
        backend: Any = "exact",
        backend_params: dict | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_per_label = n_per_label
        self.sigma = sigma
        self.alpha = alpha
        self.signal_level = signal_level
        self.metric = metric
        self.backend = backend
        self.backend_params = backend_params
        self.n_jobs = n_jobs

    #: partial_fit and forget refit on the rows now: its thresholds and bandwidth are learnt
    #: from every row's scores at once
    update_rule = "refit"

    def _set_n_neighbors(self, n: int) -> None:
        """No global k: a label with fewer than ``n_per_label`` members gives all of them."""

    def _check_params(self, n_samples: int) -> None:
        if not isinstance(self.sigma, str) and not np.isfinite(self.sigma):
            raise ValueError(f"sigma must be 'auto' or a finite number > 0, got {self.sigma!r}")

    def _build_index(self, X: Any, Y: np.ndarray) -> Any:
        return LabelRestrictedIndex(self._make_index(), self.n_per_label).build(X, Y)

    def _fit_labels(self, X: Any, Y: Any) -> None:
        index = self._get_index()
        n = X.shape[0]
        # one search per label: the leave-one-out distances are (n, L, b) whatever Y is
        Y = self._dense_labels("leave-one-out distances (n x L x b)", n * self.n_labels_ * self.n_per_label)
        sq = np.empty((n, self.n_labels_, self.n_per_label), dtype=np.float64)

        def block(rows: slice) -> None:  # leave-one-out: each row's own index left out
            sq[rows] = index.sq_distances(X[rows], exclude=np.arange(n)[rows])

        each_block(block, index.row_blocks(n), self._block_threads(index))
        self.sigma_ = _auto_sigma(sq, Y) if isinstance(self.sigma, str) else float(self.sigma)
        scores = balanced_scores(sq, self.sigma_)
        self.signal_pvalues_ = signal_pvalues(scores, Y)
        no_signal = None if self.signal_level is None else self.signal_pvalues_ > self.signal_level
        self.thresholds_, self.train_fscores_ = learn_thresholds(scores, Y, self.alpha, no_signal=no_signal)

    def kneighbors(self, X: Any = None, n_neighbors: int | None = None, return_distance: bool = True) -> Any:
        """The ``n_per_label`` nearest members of every label, for every query.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features), default=None
            Queries; None: the training rows, each row's own index left out.
        n_neighbors : None
            Must be None: the number per label is ``n_per_label``.
        return_distance : bool, default=True

        Returns
        -------
        dist : ndarray of shape (n_queries, n_labels, n_per_label)
            Distances ascending within each label; ``inf`` where a label has fewer members.
        idx : ndarray of shape (n_queries, n_labels, n_per_label)
            Training row numbers; ``-1`` where a label has fewer members.
        """
        if n_neighbors is not None:
            raise ValueError("BKNN takes n_per_label neighbours in every label; pass n_neighbors=None")
        exclude = None
        if X is None:
            X = self._fit_X
            exclude = np.arange(X.shape[0])
        else:
            X = self._validate_queries(X)
        with blas_single_thread():  # the numbers of _decision_scores' search
            dist, idx = self._get_index().kneighbors(X, exclude=exclude)
        return (dist, idx) if return_distance else idx

    def _decision_scores(self, X: Any) -> np.ndarray:
        X = self._validate_queries(X)
        index = self._get_index()
        n = X.shape[0]
        f = np.empty((n, self.n_labels_), dtype=np.float64)

        def block(rows: slice) -> None:
            f[rows] = balanced_scores(index.sq_distances(X[rows]), self.sigma_)

        each_block(block, index.row_blocks(n), self._block_threads(index))
        return f

    def _block_threads(self, index: Any) -> int:
        """Threads for the blocks of queries: the machine's (``n_jobs``) for the exact engine's
        masked search, one for another index per label (a library's own threads).  Every
        product runs on one BLAS thread (``each_block``), so the scores do not depend on the
        number of threads: a threshold learnt on nearly tied scores would otherwise move with
        it (36 of the reference benchmark's 1,540 rows did between 1 and 2 threads)."""
        return resolve_n_jobs(self.n_jobs) if index.masked else 1

    @lazy_on_dask
    @fill_doc
    def decision_function(self, X: Any) -> np.ndarray:
        """The margins ``f - thresholds_`` of shape (n_samples, n_labels): positive exactly
        where a label is predicted (scikit-learn's multilabel contract).

        The balanced scores themselves are ``decision_function(X) + thresholds_`` (for a
        label without training members the margin is ``-inf``).  For a 1-D target the
        scores ``f`` of the classes, shape (n_samples, n_classes); for two classes
        ``f[:, 1] - f[:, 0]`` of shape (n_samples,), positive when the second is predicted.

        {x_samples_sections}
        margins : ndarray of shape (n_samples, n_labels)
            A lazy ``dask.array.Array`` for a dask array ``X`` (see the Dask backend).
        """
        f = self._decision_scores(X)
        if not self._multilabel:
            return f[:, -1] - f[:, 0] if f.shape[1] <= 2 else f
        return f - self.thresholds_

    def _scores_and_decisions(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        f = self._decision_scores(X)
        shares = (f + 1.0) / f.shape[1]
        if not self._multilabel:
            return shares, np.zeros(f.shape, dtype=bool)
        return shares, f > self.thresholds_

    @fill_doc
    def predict(self, X: Any) -> np.ndarray:
        """Predicted label indicator (n_samples, n_labels): ``f > thresholds_``; for a 1-D
        target the class of largest ``f``.

        {x_samples_sections}
        Y_pred : ndarray of shape (n_samples, n_labels)
        """
        return super().predict(X)

    @fill_doc
    def predict_proba(self, X: Any) -> np.ndarray:
        """Scores of shape (n_samples, n_labels): ``(f + 1) / n_labels = s_l / sum s``, the
        share of the query's similarity mass held by each label (in [0, 1], summing to 1,
        comparable across labels; 0 for a label without training members).  For a 1-D
        target the same shares, one per class.

        {x_samples_sections}
        scores : ndarray of shape (n_samples, n_labels)
        """

        return super().predict_proba(X)


def _auto_sigma(sq: np.ndarray, Y: np.ndarray) -> float:
    """Mean squared distance from each row to its b-th nearest other member of each of
    its labels (the farthest available when fewer); 1.0 when that is undefined or 0."""
    finite = np.where(np.isfinite(sq), sq, -np.inf).max(axis=2)  # (n, L); -inf: none
    pairs = Y.astype(bool) & np.isfinite(finite)
    if not pairs.any():  # no label has two members: fall back to every label's b-th
        pairs = np.isfinite(finite)
    value = float(finite[pairs].mean()) if pairs.any() else 0.0
    return value if value > 0 and np.isfinite(value) else 1.0
