"""The papers' tables and figures, recomputed on the real data beside the papers' own numbers.

One module per paper; each has ``reproduce(*, quick=False, out=None, data_home=None,
figures=True, progress=None, random_state=0)`` returning a :class:`Reproduction` (the tidy
table in ``.rows``) and, when ``out`` is given, writing ``<out>/<paper>/``: ``table.csv``
(one row per cell: ``table,dataset,method,metric,setting,ours,paper,diff``), ``table.md``
(laid out like the paper's tables), the figures as PNG and ``report.md`` (the protocol,
and every cell more than 0.02 from the paper with what was found about why).

=================  ==================================================  =======================
name               paper                                               reproduces
=================  ==================================================  =======================
spyromitros2008    Spyromitros, Tsoumakas & Vlahavas, SETN 2008        Tables 2-3, Fig. 1
laml2018           Wang, Wang, Hu, Li & Zhang (LAML-kNN), PAKDD 2018   Tables 1, 3, 4, Fig. 1-2
wang2010           Wang, Ding & Huang (BKNN, BLDA), AAAI 2010          Table 1
nedungadi          Nedungadi & Haripriya (hybrid kNN)                  Tables 1-2
=================  ==================================================  =======================

Each paper's full title is its module's ``TITLE``; ``docs/user_guide/reproducing.rst`` states each
protocol and what the reports find.

Examples
--------
>>> from mlneighbors.experiments import list_papers
>>> list_papers()
['spyromitros2008', 'laml2018', 'wang2010', 'nedungadi']
"""

from __future__ import annotations

import difflib
import os
from importlib import import_module
from typing import Any

from ._protocol import ProgressFactory
from ._report import COLUMNS, REPORT_THRESHOLD, Finding, Layout, Reproduction

__all__ = [
    "COLUMNS",
    "PAPERS",
    "REPORT_THRESHOLD",
    "Finding",
    "Layout",
    "Reproduction",
    "get_paper",
    "list_papers",
    "reproduce",
]

#: reproduction name -> module
PAPERS: dict[str, str] = {
    "spyromitros2008": "mlneighbors.experiments.spyromitros2008",
    "laml2018": "mlneighbors.experiments.laml2018",
    "wang2010": "mlneighbors.experiments.wang2010",
    "nedungadi": "mlneighbors.experiments.nedungadi",
}


def list_papers() -> list[str]:
    """The names of the reproductions, in the order ``reproduce all`` runs them."""
    return list(PAPERS)


def get_paper(name: str) -> Any:
    """The module of reproduction ``name``; ValueError naming the valid ones otherwise."""
    key = str(name).strip().lower()
    if key not in PAPERS:
        close = difflib.get_close_matches(key, list(PAPERS), n=2, cutoff=0.5)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"unknown paper {name!r}.{hint} Valid papers: {', '.join(PAPERS)} (or 'all').")
    return import_module(PAPERS[key])


def reproduce(
    name: str,
    *,
    quick: bool = False,
    out: str | os.PathLike[str] | None = None,
    data_home: Any = None,
    figures: bool = True,
    progress: ProgressFactory | None = None,
    random_state: int = 0,
    backend: Any = None,
    backend_params: dict | None = None,
) -> Reproduction:
    """Run reproduction ``name`` (see the module table above).

    ``out`` is created (with its parents) and proved writable before anything is computed; a
    run that fails or is interrupted (an exception from ``progress`` included) leaves none of
    the folders it created, and never a half-written ``<out>/<paper>/``.

    ``backend`` (with ``backend_params``) replaces every exact neighbour search of the run
    (:func:`mlneighbors.model_selection.evaluate_models`): the tables are the same with any
    exact backend.
    """
    from .._files import made_folder

    paper = get_paper(name)
    options = dict(quick=quick, data_home=data_home, figures=figures, progress=progress,
                   random_state=random_state, backend=backend, backend_params=backend_params)
    if out is None:
        return paper.reproduce(out=None, **options)
    with made_folder(out):
        return paper.reproduce(out=out, **options)
