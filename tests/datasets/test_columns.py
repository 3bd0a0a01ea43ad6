"""load_file for rows to predict and test parts: features only in every format, columns
matched by name (or by position where a side names none), missing values and empty files
refused with the file, the line and the column."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

from mlneighbors import MLkNN
from mlneighbors.datasets import DatasetError, load_file

from .files import write_arff, write_csv, write_mat, write_svm, write_xml

FEATURES = ["a", "b", "c", "d"]
LABELS = ["y1", "y2", "y3"]
SHUFFLED = [2, 0, 3, 1]  # c, a, d, b

# reading CSV needs pandas (an optional extra): those cases are skipped without it
needs_pandas = pytest.mark.requires("pandas")
CSV = pytest.param("csv", marks=needs_pandas)
CSV_NO_HEADER = pytest.param("csv-no-header", marks=needs_pandas)


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(7)
    X = np.round(rng.uniform(0.1, 2.0, size=(30, 4)), 3)  # no zeros: every format stores every value
    Y = (X[:, :3] + rng.normal(scale=0.4, size=(30, 3)) > 1.0).astype(np.int8)
    return X, Y


def _named_pipeline(X, Y):
    """What `mlneighbors fit` writes for a file that names its columns."""
    model = Pipeline([("scale", MinMaxScaler()), ("model", MLkNN(3))]).fit(X, Y)
    model.label_names_, model.feature_names_ = list(LABELS), list(FEATURES)
    return model


@pytest.fixture(scope="module")
def named(problem):
    return _named_pipeline(*problem)


@pytest.fixture(scope="module")
def unnamed(problem):
    return Pipeline([("scale", MinMaxScaler()), ("model", MLkNN(3))]).fit(*problem)


# ---------------------------------------------------------------------------
# features only, in every format that has such a form


def _features_only_files(folder, X):
    return {
        "arff": write_arff(folder / "new.arff", FEATURES, X),
        "arff-sparse": write_arff(folder / "new-sparse.arff", FEATURES, X, sparse=True),
        "csv": write_csv(folder / "new.csv", FEATURES, X),
        "csv-no-header": write_csv(folder / "bare.csv", None, X),
        "libsvm": write_svm(folder / "new.svm", X),
        "mat": write_mat(folder / "new.mat", data=X),
        "mat-one-matrix": write_mat(folder / "rows.mat", X=X),
    }


@pytest.mark.parametrize("kind", ["arff", "arff-sparse", CSV, CSV_NO_HEADER, "libsvm", "mat", "mat-one-matrix"])
def test_features_only_in_every_format(kind, problem, tmp_path):
    X, _ = problem
    path = _features_only_files(tmp_path, X[:6])[kind]
    options = {"header": False} if kind == "csv-no-header" else {}
    data = load_file(path, features_only=True, **options)
    got = data.X.toarray() if sp.issparse(data.X) else data.X
    np.testing.assert_array_equal(got, X[:6])
    assert data.Y.shape == (6, 0) and data.label_names == []
    assert data.source == str(path)
    assert data.named == (kind in ("arff", "arff-sparse", "csv"))


@pytest.mark.parametrize("kind", ["arff", "arff-sparse", CSV, CSV_NO_HEADER, "libsvm", "mat", "mat-one-matrix"])
@pytest.mark.parametrize("model", ["named", "unnamed"])
def test_features_only_files_predict_as_the_model_s_own_rows(kind, model, problem, tmp_path, request):
    """load_file(path, like=model) gives exactly the rows the model was asked about."""
    X, _ = problem
    fitted = request.getfixturevalue(model)
    path = _features_only_files(tmp_path, X[:6])[kind]
    options = {"header": False} if kind == "csv-no-header" else {}
    data = load_file(path, like=fitted, **options)
    np.testing.assert_array_equal(fitted.predict(np.asarray(data.X.todense() if sp.issparse(data.X) else data.X)),
                                  fitted.predict(X[:6]))


def test_a_libsvm_file_with_labels_gives_its_features_and_a_note(problem, tmp_path):
    X, Y = problem
    data = load_file(write_svm(tmp_path / "l.svm", X[:5], Y[:5]), features_only=True)
    np.testing.assert_array_equal(data.X.toarray(), X[:5])
    assert data.Y.shape == (5, 0) and any("labels that start the lines are not read" in n for n in data.notes)


def test_a_mat_file_with_targets_gives_its_rows_without_them(problem, tmp_path):
    X, Y = problem
    data = load_file(write_mat(tmp_path / "t.mat", data=X, target=Y.T), features_only=True)
    np.testing.assert_array_equal(data.X, X)
    assert data.Y.shape == (30, 0) and any("target(s) are not read" in n for n in data.notes)


def test_a_mat_file_of_several_matrices_says_which_it_needs(problem, tmp_path):
    X, _ = problem
    with pytest.raises(DatasetError, match=r"m\.mat: expected a matrix 'data' .* holds \['A', 'B'\]"):
        load_file(write_mat(tmp_path / "m.mat", A=X, B=X), features_only=True)


def test_features_only_excludes_the_label_options(problem, tmp_path):
    X, _ = problem
    path = write_csv(tmp_path / "n.csv", FEATURES, X)
    with pytest.raises(ValueError, match="features_only reads no labels"):
        load_file(path, features_only=True, label_columns="a")


# ---------------------------------------------------------------------------
# rows to predict, matched to a model's features


@pytest.mark.parametrize("fmt", [CSV, "arff", "arff-sparse"])
def test_named_columns_in_another_order_are_reordered(fmt, named, problem, tmp_path):
    X, _ = problem
    names = [FEATURES[j] for j in SHUFFLED]
    if fmt == "csv":
        path = write_csv(tmp_path / "r.csv", names, X[:8, SHUFFLED])
    else:
        path = write_arff(tmp_path / "r.arff", names, X[:8, SHUFFLED], sparse=fmt == "arff-sparse")
    data = load_file(path, like=named)
    got = data.X.toarray() if sp.issparse(data.X) else data.X
    np.testing.assert_array_equal(got, X[:8])
    assert data.feature_names == FEATURES
    assert any("another order than those of the model: reordered by name" in n for n in data.notes)
    np.testing.assert_array_equal(named.predict(got), named.predict(X[:8]))


def test_a_model_fitted_on_a_dataframe_matches_by_its_feature_names_in(problem, tmp_path):
    pd = pytest.importorskip("pandas")
    X, Y = problem
    model = MLkNN(3).fit(pd.DataFrame(X, columns=FEATURES), Y)
    path = write_csv(tmp_path / "r.csv", [FEATURES[j] for j in SHUFFLED], X[:4, SHUFFLED])
    np.testing.assert_array_equal(load_file(path, like=model).X, X[:4])


@pytest.mark.parametrize("fmt", [CSV, "arff"])
@pytest.mark.parametrize(
    "columns, message",
    [
        (["a", "b", "c"], r"1 feature\(s\) of the model are not in the file: 'd'"),
        (["a", "b", "c", "d", "e"], r"1 column\(s\) of the file are not features of the model: 'e'"),
        (["a", "b", "x", "z"], r"2 feature\(s\) of the model are not in the file: 'c', 'd'; 2 column\(s\) "
                               r"of the file are not features of the model: 'x', 'z'"),
    ],
)
def test_missing_and_unknown_names_are_listed(fmt, columns, message, named, tmp_path):
    rows = np.ones((3, len(columns)))
    path = (write_csv(tmp_path / "r.csv", columns, rows) if fmt == "csv"
            else write_arff(tmp_path / "r.arff", columns, rows))
    with pytest.raises(DatasetError, match=rf"r\.{fmt}: {message} \(features are matched by name\)"):
        load_file(path, like=named)


@needs_pandas
@pytest.mark.parametrize("like", ["model", "training-set", "training-set-rows"])
def test_a_header_less_csv_matched_by_name_gets_the_no_header_hint(like, named, problem, tmp_path):
    """Its line 1 of numbers, read as the header, names no column of the reference: the error
    says how to read the file without a header (and reading it so works)."""
    X, Y = problem
    Y = Y[:, :1]  # one label: line 1 repeats no value (values that repeat are refused earlier, with the hint)
    train = load_file(write_csv(tmp_path / "train.csv", FEATURES + ["y1"], np.hstack([X, Y])), labels_last=1)
    reference, rows, options = {
        "model": (named, X[:4], {}),
        "training-set": (train, np.hstack([X[:4], Y[:4]]), {"labels_last": 1}),
        "training-set-rows": (train, X[:4], {"features_only": True}),
    }[like]
    path = write_csv(tmp_path / "bare.csv", None, rows)
    with pytest.raises(DatasetError, match=r"bare\.csv: 4 feature\(s\) of .* \(features are matched by name\); line 1 "
                                           r"of \S*bare\.csv holds only numbers: if the file has no header line, pass "
                                           r"header=False \(--no-header\)$"):
        load_file(path, like=reference, **options)
    if like == "model":  # a file named by position is matched by position: all its rows
        np.testing.assert_array_equal(load_file(path, like=reference, header=False).X, X[:4])


@needs_pandas
def test_a_named_csv_that_does_not_match_gets_no_header_hint(named, tmp_path):
    path = write_csv(tmp_path / "r.csv", ["a", "b", "c", "x"], np.ones((3, 4)))
    with pytest.raises(DatasetError, match=r"\(features are matched by name\)$"):
        load_file(path, like=named)


@pytest.mark.parametrize("fmt", [CSV, "arff"])
def test_label_columns_of_rows_to_predict_are_dropped_with_a_note(fmt, named, problem, tmp_path):
    X, Y = problem
    rows = np.hstack([Y[:5], X[:5]])  # labels first, as a MEKA file has them
    names = LABELS + FEATURES
    path = (write_csv(tmp_path / "l.csv", names, rows) if fmt == "csv"
            else write_arff(tmp_path / "l.arff", names, rows, labels=LABELS, relation="l: -C 3"))
    data = load_file(path, like=named)
    np.testing.assert_array_equal(data.X, X[:5])
    assert any("label column(s) 'y1', 'y2', 'y3' are not read" in n for n in data.notes)


def test_an_arff_file_whose_xml_names_labels_the_model_does_not_know(problem, tmp_path):
    """A plain estimator has no label names: the file's own XML says which columns are labels."""
    pd = pytest.importorskip("pandas")
    X, Y = problem
    model = MLkNN(3).fit(pd.DataFrame(X, columns=FEATURES), Y)
    write_xml(tmp_path / "own.xml", ["p", "q"])
    rows = np.hstack([X[:4], np.array([[0, 1]] * 4)])
    path = write_arff(tmp_path / "own.arff", FEATURES + ["p", "q"], rows, labels=["p", "q"])
    np.testing.assert_array_equal(load_file(path, like=model).X, X[:4])


@needs_pandas
def test_label_options_say_where_the_labels_of_rows_to_predict_are(named, problem, tmp_path):
    X, Y = problem
    path = write_csv(tmp_path / "l.csv", ["u", "v", "w"] + FEATURES, np.hstack([Y[:4], X[:4]]))
    data = load_file(path, like=named, label_columns=":3")
    np.testing.assert_array_equal(data.X, X[:4])
    assert any("labels 'u', 'v', 'w' are not read" in n for n in data.notes)


@pytest.mark.parametrize("model", ["named", "unnamed"])
@pytest.mark.parametrize("fmt", [CSV_NO_HEADER, "mat", "libsvm-wider"])
def test_a_wrong_width_names_the_file_and_both_counts(fmt, model, problem, tmp_path, request):
    X, _ = problem
    wide = np.hstack([X[:3], X[:3, :1]])  # five columns
    path, options = {
        "csv-no-header": lambda: (write_csv(tmp_path / "w.csv", None, wide), {"header": False}),
        "mat": lambda: (write_mat(tmp_path / "w.mat", data=wide), {}),
        "libsvm-wider": lambda: (write_svm(tmp_path / "w.svm", wide), {}),
    }[fmt]()
    with pytest.raises(DatasetError, match=rf"{path.name}: has 5 features; the model was fitted on 4 features"):
        load_file(path, like=request.getfixturevalue(model), **options)


@needs_pandas
def test_a_named_file_for_a_model_without_names_is_taken_by_position(unnamed, problem, tmp_path):
    X, Y = problem
    path = write_csv(tmp_path / "p.csv", ["p", "q", "r", "s"], X[:3])
    np.testing.assert_array_equal(load_file(path, like=unnamed).X, X[:3])
    with pytest.raises(DatasetError, match=r"p5\.csv: has 5 features; the model was fitted on 4 features"):
        load_file(write_csv(tmp_path / "p5.csv", list("pqrst"), np.ones((2, 5))), like=unnamed)


def test_a_training_arff_file_for_a_model_without_names_loses_its_labels(unnamed, problem, tmp_path):
    X, Y = problem
    path = write_arff(tmp_path / "t.arff", FEATURES + LABELS, np.hstack([X, Y]), labels=LABELS,
                      relation="t: -C -3")
    data = load_file(path, like=unnamed)
    np.testing.assert_array_equal(data.X, X)
    assert any("labels 'y1', 'y2', 'y3' are not read" in n for n in data.notes)


def test_a_narrower_libsvm_file_is_padded_with_zero_features(unnamed, problem, tmp_path):
    X, _ = problem
    rows = X[:3].copy()
    rows[:, 3] = 0  # the largest index of the file is 3: its width reads as 3
    data = load_file(write_svm(tmp_path / "n.svm", rows), like=unnamed)
    assert data.X.shape == (3, 4)
    np.testing.assert_array_equal(data.X.toarray(), rows)


# ---------------------------------------------------------------------------
# libsvm rows read with their training file's index base, not a guess per file


def _libsvm_references(problem, folder, base):
    """The three things a libsvm file of new rows is read like: the training Dataset (as a test
    part, or as rows to predict) and a fitted model that records the base, as `fit` writes."""
    X, Y = problem
    train = load_file(write_svm(folder / "train.svm", X, Y, base=base))
    assert train.index_base == base  # every training row uses the first feature: no guess
    model = Pipeline([("model", MLkNN(3))]).fit(train.X, train.Y)
    model.libsvm_index_base_ = base
    return {"test-part": (train, {}), "rows-of-the-set": (train, {"features_only": True}),
            "model": (model, {})}


@pytest.mark.parametrize("like", ["test-part", "rows-of-the-set", "model"])
@pytest.mark.parametrize("base", [0, 1])
@pytest.mark.parametrize("first_feature", ["used", "unused"])
def test_a_libsvm_file_is_numbered_as_its_training_file(like, base, first_feature, problem, tmp_path):
    """A file whose rows never use the first feature has no index 0 whatever its base: read on
    its own it would be taken as 1-based; read like its training file it keeps its columns."""
    X, Y = problem
    reference, options = _libsvm_references(problem, tmp_path, base)[like]
    rows = X[:5].copy()
    if first_feature == "unused":
        rows[:, 0] = 0
    data = load_file(write_svm(tmp_path / "new.svm", rows, Y[:5], base=base), like=reference, **options)
    assert data.index_base == base
    np.testing.assert_array_equal(data.X.toarray(), rows)


@pytest.mark.parametrize("like", ["test-part", "rows-of-the-set", "model"])
def test_index_0_where_the_training_file_was_1_based_names_the_file_and_line(like, problem, tmp_path):
    X, Y = problem
    reference, options = _libsvm_references(problem, tmp_path, 1)[like]
    path = write_svm(tmp_path / "new.svm", X[:4], Y[:4], base=0)
    whose = "the model's training file" if like == "model" else r"the training data \S*train\.svm"
    with pytest.raises(DatasetError, match=rf"new\.svm, line 1: feature index 0, but {whose} numbers the features "
                                           "from 1"):
        load_file(path, like=reference, **options)


_AGREE = (r"make the two agree: write one file again numbered as the other \(scikit-learn's "
          r"dump_svmlight_file\(\.\.\., zero_based=True\) numbers from 0, zero_based=False from 1\), or read this "
          r"one alone with load_libsvm\(path, index_base={}\)$")


@pytest.mark.parametrize("like", ["test-part", "rows-of-the-set", "model"])
def test_a_1_based_file_one_wider_than_its_0_based_training_file_names_both_bases(like, problem, tmp_path):
    """Read from 0 as its training file was, a 1-based file that uses the last feature is one
    feature wider: the error says the bases seem to differ, and how to make them agree."""
    X, Y = problem
    reference, options = _libsvm_references(problem, tmp_path, 0)[like]
    path = write_svm(tmp_path / "new.svm", X[:4], Y[:4], base=1)
    whose = "the model's training file" if like == "model" else r"the training data \S*train\.svm"
    what = "the model was fitted on" if like == "model" else r"the training data \S*train\.svm has"
    message = (rf"new\.svm: has 5 features; {what} 4 features; the index bases seem to differ: {whose} numbers its "
               r"features from 0 \(it uses index 0\) and this file is read the same way, but it uses no index 0 \(its "
               r"indices run from 1 to 4\): numbered from 1, libsvm's convention, it has 4 features; "
               + _AGREE.format(1))
    with pytest.raises(DatasetError, match=message):
        load_file(path, like=reference, **options)
    # what the message says works: the file read alone from 1 has the training file's columns
    from mlneighbors.datasets import load_libsvm

    np.testing.assert_array_equal(load_libsvm(path, index_base=1).X.toarray(), X[:4])


@pytest.mark.parametrize("like", ["test-part", "model"])
def test_a_file_wider_in_the_same_base_gets_no_base_hint(like, problem, tmp_path):
    X, Y = problem
    reference, options = _libsvm_references(problem, tmp_path, 0)[like]
    path = write_svm(tmp_path / "wide.svm", np.hstack([X[:3], X[:3, :1]]), Y[:3], base=0)  # uses index 0
    with pytest.raises(DatasetError, match=r"wide\.svm: has 5 features; [^;]* 4 features$"):
        load_file(path, like=reference, **options)


def test_index_0_against_a_1_based_training_file_says_how_to_make_them_agree(problem, tmp_path):
    X, Y = problem
    reference, _ = _libsvm_references(problem, tmp_path, 1)["test-part"]
    with pytest.raises(DatasetError, match=r"new\.svm, line 1: .* and this file numbers its features from 0; "
                                           + _AGREE.format(0)):
        load_file(write_svm(tmp_path / "new.svm", X[:4], Y[:4], base=0), like=reference)


def test_a_model_that_records_no_base_leaves_the_guess_to_the_file(unnamed, problem, tmp_path):
    """A model fitted in Python on arrays knows no libsvm base: the file's own rule applies."""
    X, _ = problem
    np.testing.assert_array_equal(load_file(write_svm(tmp_path / "n0.svm", X[:3], base=0), like=unnamed).X.toarray(),
                                  X[:3])
    np.testing.assert_array_equal(load_file(write_svm(tmp_path / "n1.svm", X[:3]), like=unnamed).X.toarray(), X[:3])


def test_like_must_be_fitted_or_a_dataset(problem, tmp_path):
    X, _ = problem
    with pytest.raises(TypeError, match="like must be a Dataset or a fitted estimator"):
        load_file(write_csv(tmp_path / "n.csv", FEATURES, X), like=MLkNN())


# ---------------------------------------------------------------------------
# a test part, matched to a training set's features and labels


def test_test_labels_in_another_order_are_matched_by_name(problem, tmp_path):
    X, Y = problem
    train = load_file(write_arff(tmp_path / "train.arff", FEATURES + LABELS, np.hstack([X, Y]),
                                 labels=LABELS, relation="t: -C -3"))
    order = [2, 0, 1]
    test_path = write_arff(tmp_path / "test.arff", [FEATURES[j] for j in SHUFFLED] + [LABELS[j] for j in order],
                           np.hstack([X[:7, SHUFFLED], Y[:7, order]]), labels=LABELS, relation="t: -C -3")
    test = load_file(test_path, like=train)
    np.testing.assert_array_equal(test.X, X[:7])
    np.testing.assert_array_equal(test.Y, Y[:7])
    assert test.label_names == LABELS and test.feature_names == FEATURES
    assert any("labels come in another order" in n for n in test.notes)
    assert any("features come in another order" in n for n in test.notes)


@needs_pandas
@pytest.mark.parametrize(
    "labels, message",
    [
        (["y1", "y2"], r"1 label\(s\) of the training data \S*train\.csv are not in the file: 'y3'"),
        (["y1", "y2", "y3", "y4"], r"1 label\(s\) of the file are not labels of the training data "
                                   r"\S*train\.csv: 'y4'"),
    ],
)
def test_a_training_label_absent_from_the_test_file_or_an_extra_one_is_named(labels, message, problem, tmp_path):
    X, Y = problem
    train = load_file(write_csv(tmp_path / "train.csv", FEATURES + LABELS, np.hstack([X, Y])), labels_last=3)
    rows = np.hstack([X[:4], np.ones((4, len(labels)))])
    test_path = write_csv(tmp_path / "test.csv", FEATURES + labels, rows)
    with pytest.raises(DatasetError, match=r"test\.csv: " + message):
        load_file(test_path, like=train, labels_last=len(labels))


def test_unnamed_test_parts_are_matched_by_position_and_counted(problem, tmp_path):
    X, Y = problem
    train = load_file(write_svm(tmp_path / "train.svm", X, Y))
    assert not train.named
    Y_test = Y[:6].copy()
    Y_test[:, 2] = 0  # the test file never uses label 2: libsvm reads two label columns
    test = load_file(write_svm(tmp_path / "test.svm", X[:6], Y_test), like=train)
    assert test.Y.shape == (6, 3) and test.X.shape == (6, 4)
    np.testing.assert_array_equal(test.Y, Y_test)
    wide = write_mat(tmp_path / "wide.mat", data=np.ones((2, 6)), target=np.ones((3, 2)))
    with pytest.raises(DatasetError, match=r"wide\.mat: has 6 features; the training data \S*train\.svm has 4"):
        load_file(wide, like=train)


@needs_pandas
def test_a_dense_training_set_gets_a_dense_test_part(problem, tmp_path):
    X, Y = problem
    train = load_file(write_csv(tmp_path / "train.csv", FEATURES + LABELS, np.hstack([X, Y])), labels_last=3)
    test = load_file(write_svm(tmp_path / "test.svm", X[:5], Y[:5]), like=train)
    assert isinstance(test.X, np.ndarray)
    np.testing.assert_array_equal(test.X, X[:5])


# ---------------------------------------------------------------------------
# missing values and empty files


def _written_as(fmt, tmp_path, rows):
    """``rows`` written as a features-only file of format ``fmt`` named ``g.*``; (path, the
    options ``load_file`` needs to read it)."""
    return {
        "arff": lambda: (write_arff(tmp_path / "g.arff", FEATURES, rows), {}),
        "arff-sparse": lambda: (write_arff(tmp_path / "g.arff", FEATURES, rows, sparse=True), {}),
        "csv": lambda: (write_csv(tmp_path / "g.csv", FEATURES, rows), {}),
        "csv-no-header": lambda: (write_csv(tmp_path / "g.csv", None, rows), {"header": False}),
        "libsvm": lambda: (write_svm(tmp_path / "g.svm", rows), {}),
        "mat": lambda: (write_mat(tmp_path / "g.mat", data=rows), {}),
    }[fmt]()


def _with_gap(X):
    rows = X[:4].copy()
    rows[2, 1] = np.nan  # row 2, feature 'b'
    return rows


@pytest.mark.parametrize(
    "fmt, where",
    [
        ("arff", r"g\.arff, line 9: feature 'b' is missing \('\?'\)"),
        ("arff-sparse", r"g\.arff, line 9: feature 'b' is missing \('\?'\)"),
        pytest.param("csv", r"g\.csv, line 4: feature 'b' is missing \(an empty cell", marks=needs_pandas),
        pytest.param("csv-no-header", r"g\.csv, line 3: feature f1 \(column 1 of X\) is missing", marks=needs_pandas),
        ("libsvm", r"g\.svm, line 3: feature f1 \(column 1 of X\) is NaN"),
        ("mat", r"g\.mat, row 2: feature f1 \(column 1 of X\) is NaN"),
    ],
)
def test_a_missing_value_names_the_file_the_line_and_the_column(fmt, where, problem, tmp_path):
    X, _ = problem
    rows = _with_gap(X)
    path, options = _written_as(fmt, tmp_path, rows)
    with pytest.raises(DatasetError, match=where + r".*the estimators do not impute"):
        load_file(path, features_only=True, **options)
    kept = load_file(path, features_only=True, missing="nan", **options)
    got = kept.X.toarray() if sp.issparse(kept.X) else kept.X
    assert np.isnan(got[2, 1]) and np.isnan(got).sum() == 1


@pytest.mark.parametrize(
    "fmt, where",
    [
        ("arff", r"g\.arff, line 9: feature 'b' is -inf"),
        ("arff-sparse", r"g\.arff, line 9: feature 'b' is -inf"),
        pytest.param("csv", r"g\.csv, line 4: feature 'b' is -inf", marks=needs_pandas),
        pytest.param("csv-no-header", r"g\.csv, line 3: feature f1 \(column 1 of X\) is -inf", marks=needs_pandas),
        ("libsvm", r"g\.svm, line 3: feature f1 \(column 1 of X\) is -inf"),
        ("mat", r"g\.mat, row 2: feature f1 \(column 1 of X\) is -inf"),
    ],
)
def test_an_infinite_value_names_the_file_the_line_and_the_column(fmt, where, problem, tmp_path):
    """No estimator takes an infinity: refused at reading, where the file and line are known
    (scikit-learn's "Input X contains infinity" named neither), and kept with missing='nan'."""
    X, _ = problem
    rows = X[:4].copy()
    rows[2, 1] = -np.inf
    rows[3, [0, 2]] = np.inf, np.nan
    path, options = _written_as(fmt, tmp_path, rows)
    with pytest.raises(DatasetError, match=where + r" \(1 missing value\(s\) and 1 more infinite value\(s\) in "
                                                   r"the file\); the estimators take finite numbers only"):
        load_file(path, features_only=True, **options)
    kept = load_file(path, features_only=True, missing="nan", **options)
    got = kept.X.toarray() if sp.issparse(kept.X) else kept.X
    np.testing.assert_array_equal(got, rows)


def test_a_file_with_no_feature_left_says_what_was_dropped(tmp_path):
    path = tmp_path / "s.arff"
    path.write_text("@relation r\n@attribute note string\n@attribute day date\n@attribute y {0,1}\n@data\n"
                    "'a','2020-01-01',1\n'b','2020-01-02',0\n")
    with pytest.raises(DatasetError, match=r"s\.arff: has no feature to use \(dropped string attribute\(s\) 'note'"
                                           r".*date attribute\(s\) 'day'.*\); expected at least one numeric"):
        load_file(path, labels_last=1)


@needs_pandas
def test_a_short_csv_line_is_a_missing_value(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("a,b,c\n1,2,3\n4,5\n")
    with pytest.raises(DatasetError, match=r"s\.csv, line 3: feature 'c' is missing"):
        load_file(path, features_only=True)


def test_missing_values_of_dropped_label_columns_do_not_count(named, problem, tmp_path):
    X, _ = problem
    rows = np.hstack([X[:3], np.full((3, 3), np.nan)])  # rows to predict: labels unknown ('?')
    path = write_arff(tmp_path / "u.arff", FEATURES + LABELS, rows, labels=LABELS)
    np.testing.assert_array_equal(load_file(path, like=named).X, X[:3])


@needs_pandas
def test_missing_values_are_counted_in_the_message(problem, tmp_path):
    X, _ = problem
    rows = _with_gap(X)
    rows[3, 3] = np.nan
    with pytest.raises(DatasetError, match=r"\(1 more missing value\(s\) in the file\)"):
        load_file(write_csv(tmp_path / "g.csv", FEATURES, rows), features_only=True)


@pytest.mark.parametrize("fmt", [CSV, "arff"])
def test_a_file_without_rows_says_so(fmt, tmp_path):
    if fmt == "csv":
        path = tmp_path / "h.csv"
        path.write_text("a,b,y\n")
        options = {"labels_last": 1}
    else:
        path = write_arff(tmp_path / "h.arff", ["a", "y"], np.empty((0, 2)), labels=["y"])
        options = {"labels_last": 1}
    with pytest.raises(DatasetError, match=rf"h\.{fmt}: has no data rows"):
        load_file(path, **options)


@needs_pandas
def test_a_csv_without_a_header(problem, tmp_path):
    X, Y = problem
    path = write_csv(tmp_path / "bare.csv", None, np.hstack([X, Y]))
    data = load_file(path, header=False, label_columns="-3:")
    np.testing.assert_array_equal(data.X, X)
    np.testing.assert_array_equal(data.Y, Y)
    assert not data.named and data.feature_names == ["f0", "f1", "f2", "f3"]
    with pytest.raises(DatasetError, match="without a header line the columns have no names"):
        load_file(path, header=False, label_columns="y1")
    with pytest.raises(DatasetError, match=r"line 1: column names appear twice: .*pass header=False"):
        load_file(path, label_columns="-3:")  # line 1 read as a header: its 0/1 labels repeat
    numbers = tmp_path / "numbers.csv"
    numbers.write_text("0.5,1.5,0\n2.5,3.5,1\n")
    read = load_file(numbers, label_columns="-1:")  # line 1 read as a header, and a note says so
    assert read.n_samples == 1 and any("line 1 holds only numbers" in n for n in read.notes)
    with pytest.raises(ValueError, match="header=False applies to CSV files"):
        load_file(write_arff(tmp_path / "x.arff", FEATURES, X), header=False, features_only=True)


def test_a_mat_file_s_own_split(problem, tmp_path):
    X, Y = problem
    path = write_mat(tmp_path / "s.mat", train_data=X[:20], train_target=Y[:20].T,
                     test_data=X[20:], test_target=Y[20:].T)
    train = load_file(path, split="train")
    test = load_file(path, split="test", like=train)
    np.testing.assert_array_equal(train.X, X[:20])
    np.testing.assert_array_equal(test.Y, Y[20:])
    with pytest.raises(DatasetError, match="holds no train/test split"):
        load_file(write_mat(tmp_path / "a.mat", data=X, target=Y.T), split="train")
    with pytest.raises(ValueError, match=r"split='test' applies to \.mat files"):
        load_file(write_csv(tmp_path / "c.csv", FEATURES, X), split="test", features_only=True)
