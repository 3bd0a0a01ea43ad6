"""MEKA's -C and the Weka filters a relation records after it: followed where the relation
states exactly where the labels went, refused (naming the filter) where it does not; label
attributes that are not 0/1 are never taken as labels."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from mlneighbors.datasets import DatasetError, DatasetWarning, load_file, load_meka, load_mulan
from mlneighbors.datasets._relation import c_labels

from .files import write_arff, write_xml

REORDER = "weka.filters.unsupervised.attribute.Reorder"
REMOVE = "weka.filters.unsupervised.attribute.Remove"


@pytest.fixture
def rows():
    """Six rows: features f1..f4 (numbers that are not 0/1) and labels L1, L2 (0/1)."""
    rng = np.random.default_rng(3)
    return np.round(rng.uniform(2, 9, size=(6, 4)), 2), np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]])


def _file(tmp_path, names, columns, relation, labels=("L1", "L2")):
    return write_arff(tmp_path / "m.arff", names, np.column_stack(columns), labels=labels, relation=relation)


@pytest.mark.parametrize(
    "relation, names, where",
    [
        # the labels were first (-C 2) and a Reorder moved them to the end
        (f"m: -C 2-{REORDER}-R3-last,first-2", ["f1", "f2", "f3", "f4", "L1", "L2"], "last"),
        (f"m: -C 2-{REORDER}-Rlast-first", ["f4", "f3", "f2", "f1", "L2", "L1"], "last"),
        # into the middle: the labels are wherever the list put them
        (f"m: -C 2-{REORDER}-R3,1,4,2,5-last", ["f1", "L1", "f2", "L2", "f3", "f4"], "middle"),
        # -C -2 (the last two), then features removed before them: the labels stay last
        (f"m: -C -2-{REMOVE}-R1,3", ["f1", "f2", "f3", "f4", "L1", "L2"], "last"),
        # -C 2, then features removed after the labels: the labels stay first
        (f"m: -C 2-{REMOVE}-R4-5", ["L1", "L2", "f1", "f2", "f3", "f4"], "first"),
        # -V keeps only the listed attributes
        (f"m: -C 2-{REMOVE}-V-R1-2,5-8", ["L1", "L2", "f1", "f2", "f3", "f4"], "first"),
        # instance filters and filters that change values in place move no attribute
        ("m: -C 2 -I 0-weka.filters.unsupervised.instance.Randomize-S42"
         "-weka.filters.unsupervised.attribute.NumericToNominal-Rfirst-2", ["L1", "L2", "f1", "f2", "f3", "f4"],
         "first"),
    ],
)
def test_filters_that_say_where_the_labels_went_are_followed(relation, names, where, rows, tmp_path):
    X, Y = rows
    values = {"L1": Y[:, 0], "L2": Y[:, 1], **{f"f{j + 1}": X[:, j] for j in range(4)}}
    path = _file(tmp_path, names, [values[n] for n in names], relation)
    data = load_meka(path)
    assert sorted(data.label_names) == ["L1", "L2"]
    np.testing.assert_array_equal(data.Y[:, data.label_names.index("L1")], Y[:, 0])
    np.testing.assert_array_equal(data.Y[:, data.label_names.index("L2")], Y[:, 1])
    assert sorted(data.feature_names) == ["f1", "f2", "f3", "f4"]
    if f"{REORDER}" in relation or f"{REMOVE}" in relation:
        assert any("were moved by the filter(s)" in note for note in data.notes)
    assert load_file(path).label_names == data.label_names  # load_file's -C path is the same


@pytest.mark.parametrize(
    "relation, problem",
    [
        (f"m: -C 2-{REMOVE}-R1", f"the filter {REMOVE}-R1 removes label attributes"),
        (f"m: -C 2-{REMOVE}-R5-last", f"the number of attributes before the filter {REMOVE}-R5-last cannot be told"),
        (f"m: -C 2-{REORDER}-R1,1,2-last", f"the filter {REORDER}-R1,1,2-last copies label attributes"),
        ("m: -C 2-weka.filters.unsupervised.attribute.NominalToBinary-Rfirst-last",
         "the filter weka.filters.unsupervised.attribute.NominalToBinary-Rfirst-last may have moved, "
         "removed or added attributes"),
        ("m: -C 2-meka.filters.multilabel.SuperNodeFilter-P0",
         "the filter meka.filters.multilabel.SuperNodeFilter-P0 may have moved"),
        (f"m: -C 2-{REORDER}-R9-last,first-8", f"the filter {REORDER}-R9-last,first-8 does not fit"),
    ],
)
def test_filters_that_do_not_say_where_the_labels_went_are_refused_by_name(relation, problem, rows, tmp_path):
    X, Y = rows
    path = _file(tmp_path, ["L1", "L2", "f1", "f2", "f3", "f4"], [Y[:, 0], Y[:, 1], *X.T], relation)
    message = (r"m\.arff: -C 2 in the @relation \(line 1\) is followed by filters Weka recorded after it, and "
               + re.escape(problem) + r".*give the Mulan XML naming the labels \(xml=, --xml\) or "
               r"labels_first=N / labels_last=N \(--labels-first N / --labels-last N\)")
    for load in (load_meka, load_file):
        with pytest.raises(DatasetError, match=message):
            load(path)


def test_an_unfollowable_c_is_only_noted_where_the_xml_or_a_count_decides(rows, tmp_path):
    X, Y = rows
    names = ["f1", "f2", "f3", "f4", "L1", "L2"]
    path = _file(tmp_path, names, [*X.T, Y[:, 0], Y[:, 1]], f"m: -C 2-{REMOVE}-R1")
    xml = write_xml(tmp_path / "m.xml", ["L1", "L2"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DatasetWarning)  # it contradicts nothing: no warning
        for data in (load_file(path), load_meka(path, xml), load_mulan(path, xml), load_file(path, labels_last=2)):
            np.testing.assert_array_equal(data.Y, Y)
    assert any("written before filters the @relation records after it" in n for n in load_mulan(path, xml).notes)


def test_the_issue_s_langlog_header_is_followed(tmp_path):
    """-C 75 then Reorder -R 76-last,first-75: the 75 labels went to the end, after the
    features (numbers, not 0/1), which used to be read as the labels."""
    rng = np.random.default_rng(0)
    X, Y = rng.uniform(2, 5, size=(4, 10)), rng.integers(0, 2, size=(4, 75))
    names = [f"w{j}" for j in range(10)] + [f"label{j}" for j in range(75)]
    path = write_arff(tmp_path / "langlog.arff", names, np.hstack([X, Y]), labels=names[10:],
                      relation=f"langlog: -C 75-{REORDER}-R76-last,first-75")
    data = load_file(path)
    assert data.label_names == names[10:]
    np.testing.assert_array_equal(data.Y, Y)


def test_c_labels_counts_without_listing_every_attribute():
    """The size before a filter is solved from the range list, not found by trying sizes."""
    found = c_labels(f"m: -C -3-{REMOVE}-R1-1000000", 10)
    assert found.positions.tolist() == [7, 8, 9]
    assert c_labels("plain", 5) is None


@pytest.mark.parametrize(
    "declaration, values, problem",
    [
        ("{0,1,2}", "0", r"attribute 'L1' is nominal \{0,1,2\} \(line 2\); expected the values 0 and 1"),
        ("{yes,no,maybe}", "yes", r"attribute 'L1' is nominal \{yes,no,maybe\} \(line 2\)"),
        ("numeric", "0.5", r"attribute 'L1' must be 0 or 1, but row 0 \(line 5\) has 0\.5"),
        ("numeric", "3", r"attribute 'L1' must be 0 or 1, but row 0 \(line 5\) has 3"),
    ],
)
def test_label_attributes_that_are_not_0_1_are_never_taken(declaration, values, problem, tmp_path):
    """Even where the rows happen to hold only 0 and 1, a nominal {0,1,2} is a category."""
    path = tmp_path / "n.arff"
    path.write_text(f"@relation 'n: -C 1'\n@attribute L1 {declaration}\n@attribute f numeric\n@data\n"
                    f"{values},2.5\n{values if declaration.startswith('{y') else 1},3\n")
    with pytest.raises(DatasetError, match=r"n\.arff: -C 1 in the @relation \(line 1\) takes the first 1 "
                                           r"attributes as labels; " + problem):
        load_meka(path)
    xml = write_xml(tmp_path / "n.xml", ["L1"])
    with pytest.raises(DatasetError, match=r"label 'L1' (is nominal|must be 0 or 1)"):
        load_mulan(path, xml)
