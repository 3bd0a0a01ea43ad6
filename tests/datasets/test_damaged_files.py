"""Issue 12: every reader on empty, truncated, mis-encoded and malformed files written here.

Each failure is the library's own error (never scipy's, numpy's or expat's), in one line naming the
file and, for a text format, the line. The .mat cases are in test_mat.py (their bytes come from
scipy.io.savemat).
"""

from __future__ import annotations

import gzip

import pytest

from mlneighbors.datasets import ArffFormatError, DatasetError, load_libsvm, read_arff, read_mulan_xml

_ARFF = b"@relation r\n@attribute a numeric\n@attribute b {0,1}\n@data\n"
_SVM = b"0,2 1:0.5 3:1\n"

CASES = [
    # ARFF
    (read_arff, "x.arff", b"", r"x\.arff: the file is empty; expected an ARFF header"),
    (read_arff, "x.arff", _ARFF[:40], r"x\.arff, line 3: expected @relation, @attribute or @data"),
    (read_arff, "x.arff", _ARFF[:-6], r"x\.arff, line 4: expected @data, found the end"),
    (read_arff, "x.arff", _ARFF + b"1,0\n2,", r"x\.arff, line 6: expected 2 values; found an empty value"),
    (read_arff, "x.arff", _ARFF + b"{0 1}\n{0 ", r"x\.arff, line 6: expected one sparse row"),
    (read_arff, "x.arff", _ARFF + b"1,0\n% caf\xe9\n2,1\n",
     r"x\.arff, line 6: byte 0xe9 at column 6 is not UTF-8.*iconv"),
    (read_arff, "x.arff.gz", gzip.compress(_ARFF * 50)[:30], r"x\.arff\.gz: not a readable gzip file"),
    # Mulan XML
    (read_mulan_xml, "x.xml", b"", r"x\.xml: the file is empty; expected a Mulan <labels>"),
    (read_mulan_xml, "x.xml", b"  \n", r"x\.xml: the file is empty"),
    (read_mulan_xml, "x.xml", b'<?xml version="1.0"?>\n<labels>\n<label name="a"/>',
     r"x\.xml, line 3, column \d+: the XML cannot be parsed \(no element found\)"),
    (read_mulan_xml, "x.xml", b'<?xml version="1.0" encoding="klingon-8"?><labels/>',
     r"x\.xml, line 1: the XML declares the encoding 'klingon-8', which Python does not know"),
    (read_mulan_xml, "x.xml", b'<labels>\n<label name="caf\xe9"/></labels>',
     r"x\.xml, line 2, column \d+: the XML cannot be parsed \(not well-formed \(invalid token\)\); .*UTF-8"),
    # libsvm
    (load_libsvm, "x.svm", b"", r"x\.svm: the file holds no rows"),
    (load_libsvm, "x.svm", b"# only a comment\n\n", r"x\.svm: the file holds no rows"),
    (load_libsvm, "x.svm", _SVM + b"1 1:", r"x\.svm, line 2: expected 'index:value' pairs, found '1:'"),
    (load_libsvm, "x.svm", _SVM + b"\n# note\n1 2:\xff\n",
     r"x\.svm, line 4: expected 'index:value' pairs, found '2:\\\\xff'"),
    (load_libsvm, "x.svm", _SVM + b"sport 1:1\n", r"x\.svm, line 2: label 'sport' is not a number"),
    (load_libsvm, "x.svm", _SVM + b"1 3:1 2:1\n", r"x\.svm, line 2: feature index 2 does not increase"),
    (load_libsvm, "x.svm", _SVM + b"# c\n\n1 1:1\n-1 2:1\n", r"x\.svm, line 5: label -1 is not a label index .*binary"),
    (load_libsvm, "x.svm", _SVM + b"2.5 2:1\n", r"x\.svm, line 2: label 2\.5 is not a label index"),
    (load_libsvm, "x.svm.gz", gzip.compress(_SVM * 200)[:-12], r"x\.svm\.gz: .*expected libsvm multi-label text"),
]
IDS = [
    "arff-empty", "arff-truncated-header", "arff-no-data", "arff-truncated-dense-row",
    "arff-truncated-sparse-row", "arff-not-utf8", "arff-truncated-gzip",
    "xml-empty", "xml-blank", "xml-truncated", "xml-unknown-encoding", "xml-not-utf8",
    "svm-empty", "svm-comments-only", "svm-truncated", "svm-not-utf8", "svm-label-word", "svm-unsorted",
    "svm-minus-one", "svm-fraction", "svm-truncated-gzip",
]


@pytest.mark.parametrize("reader, name, content, fragment", CASES, ids=IDS)
def test_a_damaged_file_is_one_line_naming_the_file(tmp_path, reader, name, content, fragment):
    path = tmp_path / name
    path.write_bytes(content)
    error = ArffFormatError if reader is read_arff else DatasetError
    with pytest.raises(error, match=fragment) as caught:
        reader(path)
    assert "\n" not in str(caught.value)
