"""The dataset registry: find, verify, download and load the registered benchmark sets."""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._catalog import CATALOG
from ._dataset import ChecksumError, Dataset, DatasetNotFoundError
from ._spec import DatasetSpec, FileSpec

__all__ = [
    "DATA_ENV",
    "MIRROR_ENV",
    "FileStatus",
    "dataset_status",
    "fetch_dataset",
    "data_home_source",
    "get_data_home",
    "get_dataset_spec",
    "list_datasets",
    "load_dataset",
]

#: Environment variable naming the data directory.
DATA_ENV = "MLNEIGHBORS_DATA"
#: Environment variable naming a mirror that serves ``<folder>/<file>`` in place of the source URLs.
MIRROR_ENV = "MLNEIGHBORS_MIRROR"

SPLITS = ("all", "train", "test")

_BY_NAME: dict[str, DatasetSpec] = {spec.name: spec for spec in CATALOG}


def list_datasets() -> list[str]:
    """Names of every registered dataset, in catalogue order.

    Returns
    -------
    names : list of str

    Examples
    --------
    >>> from mlneighbors.datasets import list_datasets
    >>> list_datasets()[:3]
    ['cal500', 'bibtex', 'birds']
    """
    return [spec.name for spec in CATALOG]


def get_dataset_spec(name: str) -> DatasetSpec:
    """The registry entry of ``name`` (case-insensitive).

    Parameters
    ----------
    name : str

    Returns
    -------
    spec : DatasetSpec
        Its files (paths, sha256, source URLs), splits and statistics.

    Raises
    ------
    ValueError
        For an unknown name; the message suggests the closest registered names.

    Examples
    --------
    >>> from mlneighbors.datasets import get_dataset_spec
    >>> get_dataset_spec("Yeast").name
    'yeast'
    """
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    key = name.strip().lower()
    if key in _BY_NAME:
        return _BY_NAME[key]
    close = difflib.get_close_matches(key, list(_BY_NAME), n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ValueError(
        f"unknown dataset {name!r}.{hint} Registered datasets: {', '.join(list_datasets())}."
    )


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: the first of four places that applies.

    1. ``data_home``, when given;
    2. ``$MLNEIGHBORS_DATA``, when set and not empty;
    3. ``../shared/datasets`` beside the source checkout, when the package runs from a
       checkout (``<root>/src/mlneighbors/`` with ``<root>/pyproject.toml``, as an editable
       install has it) and that folder holds a ``MANIFEST.md``; an installed package never
       looks there;
    4. the per-user cache, ``$XDG_CACHE_HOME/mlneighbors`` (``~/.cache/mlneighbors`` when
       ``XDG_CACHE_HOME`` is unset).

    The directory is neither created nor checked here; :func:`data_home_source` says which
    rule chose it.

    Parameters
    ----------
    data_home : str or path-like, default=None

    Returns
    -------
    path : Path

    Examples
    --------
    >>> str(get_data_home("/data/ml"))
    '/data/ml'
    """
    return _resolve_home(data_home)[0]


def data_home_source(data_home: str | os.PathLike[str] | None = None) -> str:
    """Which rule of :func:`get_data_home` chose the data directory, in words.

    Parameters
    ----------
    data_home : str or path-like, default=None

    Returns
    -------
    str
        ``"data_home"``, ``"$MLNEIGHBORS_DATA"``, ``"../shared/datasets beside the source
        checkout"`` or ``"the per-user cache"``.

    Examples
    --------
    >>> data_home_source("/data/ml")
    'data_home'
    """
    return _resolve_home(data_home)[1]


def _resolve_home(data_home: str | os.PathLike[str] | None) -> tuple[Path, str]:
    if data_home is not None:
        return Path(data_home).expanduser(), "data_home"
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env).expanduser(), f"${DATA_ENV}"
    shared = _checkout_datasets()
    if shared is not None:
        return shared, "../shared/datasets beside the source checkout"
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "mlneighbors", "the per-user cache"


def _checkout_datasets(module: Path | None = None) -> Path | None:
    """``<root>/../shared/datasets`` when ``module`` (default: this file) lies in
    ``<root>/src/mlneighbors/datasets/`` of a checkout (``<root>/pyproject.toml``) and the
    folder holds a ``MANIFEST.md``."""
    module = Path(__file__).resolve() if module is None else module
    src, root = module.parents[2], module.parents[3]
    if src.name != "src" or not (root / "pyproject.toml").is_file():
        return None
    shared = root.parent / "shared" / "datasets"
    return shared if (shared / "MANIFEST.md").is_file() else None


def _home(data_home: str | os.PathLike[str] | None) -> tuple[Path, str]:
    """The data directory and its source, refused when it exists but is not a folder."""
    home, source = _resolve_home(data_home)
    if home.exists() and not home.is_dir():
        raise NotADirectoryError(
            f"{source} {home} is not a folder: expected the folder that holds the dataset "
            "folders ('emotions/', 'yeast/', ...)"
        )
    return home, source


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class FileStatus:
    """Where a registered file stands in a data directory.

    Parameters
    ----------
    spec : FileSpec
        The registered file.
    path : Path or None
        The form found (compressed or raw); None when absent.
    verified : bool or None
        Whether its sha256 matched; None when absent or not checked.

    Examples
    --------
    >>> from mlneighbors.datasets import dataset_status
    >>> [status.spec.path for status in dataset_status("emotions", data_home="/nowhere")]
    ['emotions/emotions-test.arff', 'emotions/emotions-train.arff', 'emotions/emotions.arff', 'emotions/emotions.xml']
    """

    spec: FileSpec
    path: Path | None  # the form found (compressed or raw), None when absent
    verified: bool | None  # None when absent or not checked

    @property
    def present(self) -> bool:
        return self.path is not None


def _locate(spec: FileSpec, home: Path) -> Path | None:
    for rel in dict.fromkeys((spec.path, spec.raw_path)):
        candidate = home / rel
        if candidate.is_file():
            return candidate
    return None


def _expected_hash(spec: FileSpec, path: Path) -> str:
    return spec.sha256 if path.name == Path(spec.path).name else spec.raw_sha256


def _check_file(spec: FileSpec, home: Path, verify: bool = True) -> FileStatus:
    path = _locate(spec, home)
    if path is None:
        return FileStatus(spec, None, None)
    if not verify:
        return FileStatus(spec, path, None)
    return FileStatus(spec, path, _sha256(path) == _expected_hash(spec, path))


def dataset_status(
    name: str, data_home: str | os.PathLike[str] | None = None, *, verify: bool = True
) -> list[FileStatus]:
    """Presence and checksum of every file of ``name`` in the data directory.

    Parameters
    ----------
    name : str
        A registered dataset.
    data_home : str or path-like, default=None
        See :func:`get_data_home`.
    verify : bool, default=True
        Compute each present file's sha256 (False: only look for the files).

    Returns
    -------
    statuses : list of FileStatus

    Examples
    --------
    >>> from mlneighbors.datasets import dataset_status
    >>> len(dataset_status("emotions", data_home="/nowhere"))
    4
    >>> dataset_status("emotions", data_home="/nowhere")[0].present
    False
    """
    spec = get_dataset_spec(name)
    home, _ = _home(data_home)
    return [_check_file(f, home, verify) for f in spec.files]


def _source_url(spec: FileSpec, mirror: str | None) -> str:
    mirror = mirror if mirror is not None else os.environ.get(MIRROR_ENV)
    if mirror:
        return mirror.rstrip("/") + "/" + spec.raw_path
    return spec.url


def _download(spec: FileSpec, home: Path, mirror: str | None) -> Path:
    """Download the raw form of ``spec`` into ``home``, verified, or leave nothing behind:
    neither a file nor a folder this call created."""
    try:
        import pooch
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "downloading datasets needs pooch: pip install 'mlneighbors[fetch]'"
        ) from exc
    pooch.get_logger().setLevel("WARNING")  # no per-file chatter on stderr
    target = home / spec.raw_path
    created = [folder for folder in (target.parent, *target.parent.parents) if not folder.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        _retrieve(pooch, spec, target, _source_url(spec, mirror))
    except BaseException:
        for folder in created:  # deepest first; a folder something else filled stays
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    return target


def _retrieve(pooch, spec: FileSpec, target: Path, url: str) -> None:  # noqa: ANN001
    # pooch writes into a temporary file of the same folder and moves it into place
    # only once its hash matched; we stage it in a private folder all the same, so
    # that no interrupted or rejected transfer can ever be mistaken for the file.
    with tempfile.TemporaryDirectory(prefix=".mlneighbors-", dir=target.parent) as tmp:
        try:
            fetched = pooch.retrieve(
                url,
                known_hash=f"sha256:{spec.raw_sha256}",
                fname=target.name,
                path=tmp,
                progressbar=False,
            )
        except ValueError as exc:
            raise ChecksumError(
                f"{url} does not have the registered sha256 {spec.raw_sha256}; the download "
                f"was removed and nothing was written to {target}"
            ) from exc
        except Exception as exc:
            raise OSError(f"could not download {url}: {exc}") from exc
        os.replace(fetched, target)


def fetch_dataset(
    name: str,
    data_home: str | os.PathLike[str] | None = None,
    *,
    mirror: str | None = None,
) -> list[Path]:
    """Make every file of ``name`` present and verified in the data directory.

    Missing files are downloaded from the source URLs of the registry (raw files of
    the public repositories at pinned commits), or from ``mirror`` (or
    ``$MLNEIGHBORS_MIRROR``), a base URL serving ``<folder>/<file>``. Each download is
    checked against its sha256 before it is moved into place: a mismatch raises
    :class:`ChecksumError` and leaves no file behind.

    A file already present with a wrong checksum is not touched (it may be a user's
    own copy): :class:`ChecksumError` says which file to delete.

    Parameters
    ----------
    name : str
        A registered dataset.
    data_home : str or path-like, default=None
        See :func:`get_data_home`.
    mirror : str, default=None
        Base URL serving ``<folder>/<file>`` instead of the sources.

    Returns
    -------
    paths : list of Path
        The verified files.

    Examples
    --------
    >>> from mlneighbors.datasets import fetch_dataset
    >>> paths = fetch_dataset("emotions")  # doctest: +SKIP
    """

    spec = get_dataset_spec(name)
    home, _ = _home(data_home)
    paths = []
    for fspec in spec.files:
        status = _check_file(fspec, home)
        if status.path is None:
            paths.append(_download(fspec, home, mirror))
        elif not status.verified:
            raise _mismatch(fspec, status.path, spec.name)
        else:
            paths.append(status.path)
    return paths


def _mismatch(spec: FileSpec, path: Path, dataset: str) -> ChecksumError:
    return ChecksumError(
        f"{path} does not match its registered sha256 {_expected_hash(spec, path)}: the file is "
        "damaged or another version.",
        dataset=dataset, path=str(path),
        hint="Delete it and load again with download=True to get the registered file.",
    )


def _require(
    spec: DatasetSpec,
    roles: tuple[str, ...],
    located: tuple[Path, str],
    download: bool,
    mirror: str | None,
) -> dict[str, Path]:
    home, source = located
    found: dict[str, Path] = {}
    for role in roles:
        fspec = spec.file(role)
        if fspec is None:  # pragma: no cover - catalogue consistency is tested
            raise RuntimeError(f"registry entry {spec.name!r} has no {role!r} file")
        status = _check_file(fspec, home)
        if status.path is None:
            if not download:
                raise _not_found(spec, fspec, home, source)
            found[role] = _download(fspec, home, mirror)
        elif not status.verified:
            raise _mismatch(fspec, status.path, spec.name)
        else:
            found[role] = status.path
    return found


def _not_found(spec: DatasetSpec, fspec: FileSpec, home: Path, source: str) -> DatasetNotFoundError:
    path = home / fspec.path
    also = f"; the uncompressed {Path(fspec.raw_path).name} would do" if fspec.compressed else ""
    absent = ", which does not exist" if not home.exists() else ""
    return DatasetNotFoundError(
        f"dataset {spec.name!r}: {path} is missing (data directory from {source}{absent}{also}).",
        dataset=spec.name,
        path=str(path),
        hint=(
            f"Put the file there, point ${DATA_ENV} or data_home= at a folder holding "
            f"'{spec.folder}/', or pass download=True to download it from {fspec.url}."
        ),
    )


def _roles_for(spec: DatasetSpec, split: str) -> tuple[str, ...]:
    if spec.format == "mat":
        return ("mat",)
    if spec.format == "corel16k":
        return ("test", "xml") if split == "test" else ("mat", "xml", "test")
    if split == "all" and spec.file("all") is None:
        return ("train", "test", "xml")
    return (split, "xml")


def load_dataset(
    name: str,
    split: str = "all",
    data_home: str | os.PathLike[str] | None = None,
    *,
    download: bool = False,
    mirror: str | None = None,
) -> Dataset:
    """Load a registered multi-label dataset.

    Parameters
    ----------
    name : str
        A registered name (case-insensitive), see :func:`list_datasets`.
    split : {"all", "train", "test"}, default="all"
        "train" and "test" exist only where the dataset ships a standard split.
    data_home : path, default=None
        The data directory; by default ``$MLNEIGHBORS_DATA``, else ``../shared/datasets``
        beside a source checkout, else a per-user cache (see :func:`get_data_home`).
    download : bool, default=False
        Download missing files (verified by sha256) instead of raising.
    mirror : str, default=None
        Base URL to download from instead of the registered sources.

    Returns
    -------
    Dataset
        ``X`` (dense float64 ndarray, or CSR for sparse sources), ``Y`` (int8 0/1),
        ``feature_names``, ``label_names``, ``name``, ``split`` and ``notes``.

    Raises
    ------
    ValueError
        Unknown name or split, or a split the dataset does not ship.
    DatasetNotFoundError
        A file is missing and ``download`` is False; ``dataset`` names the dataset and
        ``hint`` says ``download=True`` (a front end may swap it, see ``with_hint``).
    NotADirectoryError
        The data directory exists but is a file.
    ChecksumError
        A file does not match its registered sha256.

    Examples
    --------
    >>> from mlneighbors.datasets import load_dataset
    >>> train = load_dataset("yeast", split="train")  # doctest: +SKIP
    >>> train.X.shape, train.Y.shape  # doctest: +SKIP
    ((1500, 103), (1500, 14))
    """
    spec = get_dataset_spec(name)
    if split not in SPLITS:

        raise ValueError(f"split must be one of {', '.join(map(repr, SPLITS))}; got {split!r}")
    if split not in spec.splits:
        raise ValueError(
            f"dataset {spec.name!r} ships no standard train/test split, so split={split!r} does "
            "not exist: load split='all' and use cross-validation "
            "(mlneighbors.model_selection.MultilabelStratifiedKFold)"
        )
    home, source = _home(data_home)
    files = _require(spec, _roles_for(spec, split), (home, source), download, mirror)
    data = _read(spec, split, files)
    data.name = spec.name
    data.split = split
    data.notes = list(spec.notes) + [n for n in data.notes if n not in spec.notes]
    return data


def _read(spec: DatasetSpec, split: str, files: dict[str, Path]) -> Dataset:
    from ._formats import load_meka, load_mulan, read_mulan_xml
    from ._mat import load_mat

    if spec.format == "mat":
        return load_mat(files["mat"])["all"]
    if spec.format == "corel16k":
        test = load_mulan(files["test"], files["xml"])
        if split == "test":
            return test
        full = load_mat(files["mat"])["all"]
        n_train = spec.stats["train"].n_samples
        rows = slice(None) if split == "all" else slice(0, n_train)
        return Dataset(
            X=full.X[rows],
            Y=full.Y[rows],
            feature_names=list(test.feature_names),
            label_names=read_mulan_xml(files["xml"]),
            notes=list(full.notes),
        )
    loader = load_meka if spec.format == "meka" else load_mulan
    if "all" in files or split != "all":
        return loader(files[split], files["xml"])
    train = loader(files["train"], files["xml"])
    test = loader(files["test"], files["xml"])
    return _concat(train, test)


def _concat(first: Dataset, second: Dataset) -> Dataset:
    import scipy.sparse as sp

    if first.feature_names != second.feature_names or first.label_names != second.label_names:
        raise ValueError("train and test files declare different attributes; cannot join them")
    if sp.issparse(first.X) or sp.issparse(second.X):
        X = sp.vstack([sp.csr_matrix(first.X), sp.csr_matrix(second.X)], format="csr")
    else:
        X = np.vstack([first.X, second.X])
    notes = list(dict.fromkeys(first.notes + second.notes))
    return Dataset(
        X=X,
        Y=np.vstack([first.Y, second.Y]),
        feature_names=first.feature_names,
        label_names=first.label_names,
        notes=notes,
    )

