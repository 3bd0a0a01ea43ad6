"""MEKA's -C and the Weka filters a relation records after it: followed where the filter and
its options prove where the labels went (checked against the tests' own reading of what Weka
writes), refused (naming the filter and its options) where they do not; label attributes that
are not 0/1 are never taken as labels."""

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


# ---------------------------------------------------------------------------
# The filters followed, each against the test's own reading of what Weka does

# A plain reading of Weka's range lists and of what each followed filter writes, kept apart
# from the reader's code: the tests build a file as Weka would have written it and check that
# the reader finds the labels where this says they went.


def weka_selection(spec, n, *, reorder):
    """The attributes (0-based) a Weka range list names among n, in the order Weka takes them:
    Reorder runs a descending range backwards; Remove (weka.core.Range) runs every range from
    its lower end to its upper."""
    chosen = []
    for item in spec.split(","):
        ends = [1 if token == "first" else n if token == "last" else int(token) for token in item.split("-")]
        start, stop = ends[0], ends[-1]
        if reorder and start > stop:
            chosen += list(range(start, stop - 1, -1))
        else:
            chosen += list(range(min(start, stop), max(start, stop) + 1))
    return [i - 1 for i in chosen]


def reorder(spec):
    """Reorder -R spec: the attributes in the list's order."""
    return f"-{REORDER}-R{spec}", lambda columns: [columns[i] for i in weka_selection(spec, len(columns), reorder=True)]


def remove(spec, *, keep=False):
    """Remove -R spec: the listed attributes go; with -V only they stay, in the list's order."""
    def apply(columns):
        listed = weka_selection(spec, len(columns), reorder=False)
        if keep:
            return [columns[i] for i in listed]
        return [column for i, column in enumerate(columns) if i not in listed]
    return f"-{REMOVE}{'-V' if keep else ''}-R{spec}", apply


def in_place(text):
    """A filter that changes values (or rows) only: every attribute stays where it was."""
    return f"-weka.filters.{text}", lambda columns: list(columns)


def weka_file(tmp_path, count, filters, n_features=6, name="m"):
    """A MEKA file whose -C count was written before ``filters`` (each: the text Weka appends
    to the relation and what the filter does to the list of attributes) moved its attributes.
    Returns the path, the label values by name and the feature values by name."""
    rng = np.random.default_rng(7)
    labels = {f"L{j + 1}": rng.integers(0, 2, size=8) for j in range(abs(count))}
    features = {f"f{j + 1}": np.round(rng.uniform(2, 9, size=8), 2) for j in range(n_features)}
    columns = [*labels, *features] if count > 0 else [*features, *labels]
    relation = f"{name}: -C {count}"
    for text, apply in filters:
        relation += text
        columns = apply(columns)
    values = {**labels, **features}
    path = write_arff(tmp_path / f"{name}.arff", columns, np.column_stack([values[c] for c in columns]),
                      labels=list(labels), relation=relation)
    return path, columns, labels, features


def check_read(data, columns, labels, features):
    """The reader took exactly the label attributes as labels, in file order, and every other
    attribute as a feature, with their values."""
    assert data.label_names == [c for c in columns if c in labels]
    assert data.feature_names == [c for c in columns if c in features]
    np.testing.assert_array_equal(data.Y, np.column_stack([labels[c] for c in data.label_names]))
    np.testing.assert_array_equal(data.X, np.column_stack([features[c] for c in data.feature_names]))


DISCRETIZE = "unsupervised.attribute.Discretize-B3-M-1.0-Rfirst-last-precision6"
FOLLOWED = {
    "reorder to the end": (2, [reorder("3-last,first-2")]),
    "reorder reversed": (2, [reorder("last-first")]),
    "reorder into the middle": (2, [reorder("3,1,4,2,5-last")]),
    "reorder, labels last": (-2, [reorder("7-last,1-6")]),
    "remove before the labels": (-2, [remove("1,3")]),
    "remove after the labels": (2, [remove("4-5")]),
    "remove a range written downwards": (2, [remove("5-3,8")]),
    "remove -V ascending": (2, [remove("1-2,5-8", keep=True)]),
    "remove -V in the list's order": (2, [remove("4-last,first-2", keep=True)]),
    "remove -V, labels last": (-2, [remove("2,4,last-7", keep=True)]),
    # the issue's header without -D: Discretize then changes values in place
    "reorder then discretize": (3, [reorder("4-5,1-3,6-last"), in_place(DISCRETIZE)]),
    "discretize spaced": (2, [in_place("unsupervised.attribute.Discretize -F -O -Y -B 3 -M -1.0 -R first-last "
                                       "-precision 6 -unset-class-temporarily"), reorder("3-last,first-2")]),
    "discretize inverted": (2, [in_place("unsupervised.attribute.Discretize-V-B10-M-1.0-R1-2-precision6"
                                         "-spread-attribute-weight"), reorder("3-last,first-2")]),
    "center": (2, [in_place("unsupervised.attribute.Center"), reorder("3-last,first-2")]),
    "standardize": (2, [in_place("unsupervised.attribute.Standardize-unset-class-temporarily"),
                        reorder("3-last,first-2")]),
    "replace missing values": (2, [in_place("unsupervised.attribute.ReplaceMissingValues"), reorder("3-last,first-2")]),
    "normalize": (2, [in_place("unsupervised.attribute.Normalize-S1.0-T0.0"), reorder("3-last,first-2")]),
    "numeric to nominal": (2, [in_place("unsupervised.attribute.NumericToNominal-Rfirst-2"),
                               reorder("3-last,first-2")]),
    "instance filters": (2, [in_place("unsupervised.instance.Randomize-S42"), reorder("3-last,first-2"),
                             in_place("unsupervised.instance.RemovePercentage-P66.0-V"),
                             in_place("supervised.instance.Resample-B0.0-S1-Z100.0"),
                             in_place("unsupervised.instance.NonSparseToSparse")]),
    "a chain": (-2, [remove("1"), reorder("last-first"), in_place("unsupervised.attribute.Normalize-S1.0-T0.0"),
                     remove("1-2,4-last", keep=True), reorder("2-last,1")]),
}


@pytest.mark.parametrize("count, filters", FOLLOWED.values(), ids=FOLLOWED.keys())
def test_filters_that_say_where_the_labels_went_are_followed(count, filters, tmp_path):
    path, columns, labels, features = weka_file(tmp_path, count, filters)
    data = load_meka(path)
    check_read(data, columns, labels, features)
    moved = [text for text, _ in filters if REORDER in text or REMOVE in text]
    assert any("were moved by the filter(s)" in note for note in data.notes) == bool(moved)
    check_read(load_file(path), columns, labels, features)  # load_file's -C path is the same


def test_random_filter_chains_are_followed_or_refused_never_misread():
    """Chains of Reorder, Remove and Remove -V with random range lists (and a filter in place
    now and then): where the labels survive whole, the reader's positions name exactly them or
    it refuses; where a filter dropped or copied one, or Weka versions differ, it refuses."""
    rng = np.random.default_rng(2024)

    def token(i, n):
        return "first" if i == 1 and rng.random() < 0.3 else "last" if i == n and rng.random() < 0.5 else str(i)

    def spec(n):
        items = []
        for _ in range(rng.integers(1, 4)):
            a, b = rng.integers(1, n + 1, size=2)
            items.append(token(a, n) if rng.random() < 0.3 else f"{token(a, n)}-{token(b, n)}")
        return ",".join(items)

    followed = refused = 0
    for _ in range(600):
        count = int(rng.choice([-3, -2, -1, 1, 2, 3]))
        n_features = int(rng.integers(2, 7))
        names = [f"L{j}" for j in range(abs(count))]
        columns = [*names, *[f"f{j}" for j in range(n_features)]]
        if count < 0:
            columns = columns[abs(count):] + columns[: abs(count)]
        relation, certain = f"r: -C {count}", True
        for _ in range(rng.integers(1, 4)):
            kind = rng.choice(["reorder", "remove", "keep", "in place"])
            items = spec(len(columns))
            if kind == "in place":
                text, apply = in_place(DISCRETIZE)
            else:
                text, apply = reorder(items) if kind == "reorder" else remove(items, keep=kind == "keep")
            after = apply(columns)
            if not after:
                break
            if kind == "keep":
                listed = weka_selection(items, len(columns), reorder=False)
                # newer Weka keeps the file's order where the list names as many as there are
                certain &= len(listed) != len(columns) or listed == sorted(set(listed))
            relation, columns = relation + text, after
        truth = [c for c in columns if c.startswith("L")]
        found = c_labels(relation, len(columns))
        if found.positions is None:
            refused += 1
            assert found.problem, relation
            continue
        assert certain and sorted(truth) == names, relation  # a lost, copied or unsure label is refused
        assert [columns[p] for p in found.positions] == truth, relation
        followed += 1
    assert followed > 120 and refused > 100  # both sides are exercised (154 and 446 with this seed)


def test_c_labels_counts_without_listing_every_attribute():
    """The size before a filter is solved from the range list, not found by trying sizes, and
    the kept attributes are listed without listing the removed ones."""
    found = c_labels(f"m: -C -3-{REMOVE}-R1-1000000000000", 10)
    assert found.positions.tolist() == [7, 8, 9]
    assert c_labels("plain", 5) is None


# ---------------------------------------------------------------------------
# What is refused, by name


HOW = (r".*give the Mulan XML naming the labels \(xml=, --xml\) or labels_first=N / labels_last=N "
       r"\(--labels-first N / --labels-last N\)")


def refused(path, count, problem):
    message = (re.escape(f"{path.name}: -C {count} in the @relation (line 1) is followed by filters Weka "
                         "recorded after it, and ") + re.escape(problem) + HOW)
    for load in (load_meka, load_file):
        with pytest.raises(DatasetError, match=message):
            load(path)


def discretize_d(columns):
    """Discretize -D -B3: every numeric attribute becomes binary ones (here two cut points each)."""
    return [part for c in columns for part in ([c] if c.startswith("L") else [f"{c}_1", f"{c}_2"])]


def test_the_issue_s_discretize_d_after_a_reorder_is_refused_not_misread(tmp_path):
    """-C 3, a Reorder putting two features before the labels, then Discretize -D: each feature
    became two binary attributes, so the labels moved from positions 2-4 to 4-6. Read as in
    place, the reader took f2_1 and f2_2 (0/1 like labels) as labels."""
    options = "-D-B3-M-1.0-Rfirst-last-precision6"
    rng = np.random.default_rng(5)
    columns = discretize_d(reorder("4-5,1-3,6-last")[1](["L1", "L2", "L3", "f1", "f2", "f3", "f4"]))
    assert columns[4:7] == ["L1", "L2", "L3"]
    Y = rng.integers(0, 2, size=(6, len(columns)))
    relation = f"m: -C 3{reorder('4-5,1-3,6-last')[0]}-weka.filters.unsupervised.attribute.Discretize{options}"
    path = write_arff(tmp_path / "m.arff", columns, Y, labels=columns, relation=relation)
    refused(path, 3, f"the filter weka.filters.unsupervised.attribute.Discretize{options} has -D: it replaces "
                     "each attribute it discretizes by one binary attribute per cut point")
    # what the message says to do reads it right
    data = load_file(path, xml=write_xml(tmp_path / "l.xml", ["L1", "L2", "L3"]))
    np.testing.assert_array_equal(data.Y, Y[:, 4:7])


@pytest.mark.parametrize(
    "count, relation, problem",
    [
        (2, f"-{REMOVE}-R1", f"the filter {REMOVE}-R1 removes label attributes"),
        (2, f"-{REMOVE}-R5-last", f"the number of attributes before the filter {REMOVE}-R5-last cannot be told"),
        (2, f"-{REORDER}-R1,1,2-last", f"the filter {REORDER}-R1,1,2-last copies label attributes"),
        (2, f"-{REORDER}-R9-last,first-8", f"the filter {REORDER}-R9-last,first-8 does not fit"),
        # "last" may be the 7 listed (7 attributes) or another (8): which, the header does not say
        (-1, f"-{REMOVE}-R7,last", f"the number of attributes before the filter {REMOVE}-R7,last cannot be told "
         "(7 or 8)"),
        # Discretize -D, however written
        (2, "-weka.filters.unsupervised.attribute.Discretize -D -B 3 -R first-last",
         "the filter weka.filters.unsupervised.attribute.Discretize -D -B 3 -R first-last has -D"),
        # filters that add, remove or move attributes as their data says
        (2, "-weka.filters.unsupervised.attribute.NominalToBinary-Rfirst-last",
         "the filter weka.filters.unsupervised.attribute.NominalToBinary-Rfirst-last may have moved, "
         "removed or added attributes: it is not one the reader follows"),
        (2, "-weka.filters.unsupervised.attribute.Add-Nnew-Clast", "the filter "
         "weka.filters.unsupervised.attribute.Add-Nnew-Clast may have moved, removed or added attributes"),
        (2, "-weka.filters.supervised.attribute.Discretize-Rfirst-last-precision6", "the filter "
         "weka.filters.supervised.attribute.Discretize-Rfirst-last-precision6 may have moved"),
        (2, "-meka.filters.multilabel.SuperNodeFilter-P0", "the filter meka.filters.multilabel.SuperNodeFilter-P0 "
         "may have moved"),
        # an instance filter from a package (Denormalize merges rows into new attributes)
        (2, "-weka.filters.unsupervised.instance.Denormalize-G1", "the filter "
         "weka.filters.unsupervised.instance.Denormalize-G1 may have moved"),
        # a filter outside weka's packages, after one followed: not read as its options
        (2, "-weka.filters.unsupervised.instance.Randomize-S1-org.example.filters.AddThings-X",
         "the filter org.example.filters.AddThings-X may have moved"),
        # options the reader does not know, or repeated
        (2, "-weka.filters.unsupervised.attribute.Normalize-S1.0-T0.0-Z3", "the filter "
         "weka.filters.unsupervised.attribute.Normalize-S1.0-T0.0-Z3 has options the reader does not know ('-Z3')"),
        (2, f"-{REORDER}-R3-last,first-2-X", f"the filter {REORDER}-R3-last,first-2-X has options the reader "
         "does not know ('-X')"),
        (2, "-weka.filters.unsupervised.attribute.Discretize-Bthree-Rfirst-last", "the filter "
         "weka.filters.unsupervised.attribute.Discretize-Bthree-Rfirst-last has options the reader does not know"),
        (2, f"-{REMOVE}-R1-R2", f"the filter {REMOVE}-R1-R2 has the option -R twice"),
        (2, f"-{REORDER}", f"the filter {REORDER} has no -R list"),
        # Remove -V naming every attribute out of order: newer Weka keeps the file's order, older the list's
        (2, f"-{REMOVE}-V-R3-last,first-2", f"the filter {REMOVE}-V-R3-last,first-2 keeps (-V) attributes listed "
         "out of the file's order"),
        # two relations merged after the filter
        (2, f"-{REMOVE}-R6_other: -C 2", f"the filter {REMOVE}-R6 is followed by '_other: -C 2', the name of a "
         "relation merged into it"),
    ],
)
def test_filters_that_do_not_say_where_the_labels_went_are_refused_by_name(count, relation, problem, rows, tmp_path):
    X, Y = rows
    columns = [Y[:, 0], Y[:, 1], *X.T] if count > 0 else [*X.T, Y[:, 0], Y[:, 1]]
    names = ["L1", "L2", "f1", "f2", "f3", "f4"] if count > 0 else ["f1", "f2", "f3", "f4", "L1", "L2"]
    path = _file(tmp_path, names, columns, f"m: -C {count}{relation}")
    refused(path, count, problem)


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
