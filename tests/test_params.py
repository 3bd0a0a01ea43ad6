"""The estimators' parameter checks (``mlneighbors._params``), and no private scikit-learn in the package."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

import mlneighbors
from mlneighbors._params import HasMethods, Instance, Integer, Options, RandomState, Real, check_param, describe
from mlneighbors.exceptions import InvalidParameterError

from .registry import models


@pytest.mark.parametrize(
    "constraint, admitted, refused, words",
    [
        (Integer(1), [1, 7, np.int64(3)], [0, -1, 2.5, True, np.bool_(True), "3", None],
         "an int in the range [1, inf)"),
        (Integer(), [0, -5, 10**20], [1.0, False], "an int"),
        (Real(0), [0, 0.0, 3, 1e300, np.inf, np.float32(2)], [-1e-9, np.nan, True, "1"],
         "a float in the range [0, inf)"),
        (Real(0, 1, closed="neither"), [0.5, 1e-9], [0, 1, 0.0, 1.0, np.nan], "a float in the range (0, 1)"),
        (Real(0, 1), [0, 1, 0.25], [1.5, -0.1], "a float in the range [0, 1]"),
        (Real(0, 1, closed="neither", integers=False), [0.5], [1, 0, np.int32(1)],
         "a float (not an int) in the range (0, 1)"),
        (Options("a", "b"), ["a", "b"], ["c", "A", "", 1, None], "one of 'a', 'b'"),
        (Instance(dict), [{}, {"x": 1}], [[], None, "d"], "a dict"),
        (HasMethods("build", "query"), [mlneighbors.neighbors.ExactIndex()], ["exact", object()],
         "an object with methods build and query"),
        (RandomState(), [0, 12, np.random.RandomState(0)], [None, 1.5, np.random.default_rng(0), True],
         "an int or a numpy.random.RandomState"),
    ],
)
def test_a_constraint_admits_what_it_says(constraint, admitted, refused, words):
    assert constraint.describe() == words
    assert all(constraint.admits(value) for value in admitted)
    assert not any(constraint.admits(value) for value in refused)


def test_the_error_names_the_parameter_the_estimator_what_it_must_be_and_what_it_got():
    with pytest.raises(InvalidParameterError) as info:
        check_param("MLkNN", "n_jobs", 2.5, [Integer(), None])
    assert str(info.value) == "The 'n_jobs' parameter of MLkNN must be an int or None; got 2.5."
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    check_param("MLkNN", "n_jobs", None, [Integer(), None])  # None admitted by the None alternative
    assert describe([Options("auto"), Real(0, closed="neither")]) == "one of 'auto' or a float in the range (0, inf)"
    with pytest.raises(InvalidParameterError, match=r"got \[1, 2\] \(a list\)\.$"):
        check_param("BKNN", "sigma", [1, 2], [Options("auto"), Real(0, closed="neither")])


@pytest.mark.parametrize("model", models())
def test_fit_refuses_a_value_of_the_wrong_kind_for_every_parameter(model, rng):
    """Every parameter of every model is checked first thing in fit, with a message naming it."""
    X = rng.normal(size=(20, 3))
    Y = (rng.random((20, 3)) < 0.5).astype(int)
    for name in clone(model).get_params(deep=False):
        bad = clone(model).set_params(**{name: object()})
        with pytest.raises(InvalidParameterError, match=f"^The '{name}' parameter of {type(model).__name__} "
                                                        r"must be .*; got <object object at .*> \(a object\)\.$"):
            bad.fit(X, Y)


def test_a_bad_value_on_the_command_line_is_one_line(capsys, shared_data):
    from mlneighbors.cli import main

    code = main(["evaluate", "emotions", "--model", "dmlknn", "--param", "delta=-1", "--split",
                 "--data-home", str(shared_data)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert "mlneighbors evaluate: The 'delta' parameter of DMLkNN must be an int in the range [0, inf); got -1." in err


def test_the_package_imports_no_private_scikit_learn():
    """A private scikit-learn module (``sklearn.utils._param_validation``) can change in any
    release: the package imports none, nor a private name of a public one."""
    src = Path(mlneighbors.__file__).parent
    private = re.compile(r"^\s*(from\s+sklearn(\.\w+)*\._\w*|import\s+sklearn(\.\w+)*\._\w*"
                         r"|from\s+sklearn(\.\w+)*\s+import\s+.*\b_[a-z]\w*)", re.MULTILINE)
    found = [f"{path.relative_to(src)}: {m.group(0).strip()}" for path in sorted(src.rglob("*.py"))
             for m in private.finditer(path.read_text(encoding="utf-8"))]
    assert not found
