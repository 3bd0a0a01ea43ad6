"""Multi-label benchmark data: file readers and the dataset registry.

Files by path
    :func:`load_file` reads any of the formats below, chosen by the extension.
Readers
    :func:`load_mulan` (Mulan ARFF + XML), :func:`load_meka` (MEKA ARFF, ``-C n``),
    :func:`load_mat` (MATLAB ``.mat``), :func:`load_libsvm` (libsvm multi-label text),
    :func:`load_csv` (CSV through pandas), and the low-level :func:`read_arff` and
    :func:`read_mulan_xml`.
Registry
    :func:`list_datasets`, :func:`load_dataset`, :func:`fetch_dataset`,
    :func:`dataset_status`, :func:`get_data_home`, :func:`data_home_source`.
"""

from ..exceptions import DatasetWarning
from ._arff import read_arff
from ._csv import load_csv
from ._dataset import (
    ArffFormatError,
    ChecksumError,
    Dataset,
    DatasetError,
    DatasetNotFoundError,
)
from ._files import FORMATS, load_file
from ._formats import load_meka, load_mulan, read_mulan_xml
from ._libsvm import load_libsvm
from ._mat import load_mat
from ._registry import (
    DATA_ENV,
    MIRROR_ENV,
    FileStatus,
    data_home_source,
    dataset_status,
    fetch_dataset,
    get_data_home,
    get_dataset_spec,
    list_datasets,
    load_dataset,
)

__all__ = [
    "ArffFormatError",
    "ChecksumError",
    "DATA_ENV",
    "Dataset",
    "DatasetError",
    "DatasetNotFoundError",
    "DatasetWarning",
    "FORMATS",
    "FileStatus",
    "MIRROR_ENV",
    "data_home_source",
    "dataset_status",
    "fetch_dataset",
    "get_data_home",
    "get_dataset_spec",
    "list_datasets",
    "load_csv",
    "load_dataset",
    "load_file",
    "load_libsvm",
    "load_mat",
    "load_meka",
    "load_mulan",
    "read_arff",
    "read_mulan_xml",
]
