"""The dataset registry: names, data directory, verification, downloads, and every shared dataset."""

import hashlib
import http.server
import pickle
import re
import shutil
import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mlneighbors.datasets import (
    ChecksumError,
    DatasetNotFoundError,
    _registry,
    data_home_source,
    dataset_status,
    fetch_dataset,
    get_data_home,
    get_dataset_spec,
    list_datasets,
    load_dataset,
)
from mlneighbors.datasets._catalog import CATALOG
from mlneighbors.datasets._spec import FILE_ROLES

NAMES = [
    "emotions", "yeast", "scene", "birds", "enron", "medical", "genbase", "cal500",
    "bibtex", "corel5k", "slashdot", "ohsumed", "corel16k001", "yahoo-science",
]


def test_every_manifest_dataset_is_registered():
    assert sorted(list_datasets()) == sorted(NAMES)


@pytest.mark.parametrize("name", ["YEAST", "Yeast", " yeast ", "CAL500", "Corel16k001"])
def test_names_are_case_insensitive(name):
    assert get_dataset_spec(name).name == name.strip().lower()


def test_unknown_name_suggests_the_closest():
    with pytest.raises(ValueError, match=r"unknown dataset 'yeats'.*Did you mean 'yeast'") as err:
        get_dataset_spec("yeats")
    assert "emotions" in str(err.value)  # the valid names are listed too


def test_catalogue_is_consistent():
    for spec in CATALOG:
        roles = [f.role for f in spec.files]
        assert set(roles) <= set(FILE_ROLES), spec.name
        assert len(roles) == len(set(roles)), spec.name
        for f in spec.files:
            assert re.fullmatch(r"[0-9a-f]{64}", f.sha256) and re.fullmatch(r"[0-9a-f]{64}", f.raw_sha256)
            assert f.path.startswith(spec.folder + "/")
            assert f.url.startswith("https://raw.githubusercontent.com/")
            assert f.url.endswith(f.raw_path.split("/", 1)[1])
        if spec.format in ("mulan", "meka"):
            assert "xml" in roles
            assert ("all" in roles) or {"train", "test"} <= set(roles)
        assert "all" in spec.splits
        assert ("train" in spec.splits) == ("test" in spec.splits)


def test_data_home_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("MLNEIGHBORS_DATA", str(tmp_path / "env"))
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    assert data_home_source(tmp_path / "arg") == "data_home"
    assert get_data_home() == tmp_path / "env"
    assert data_home_source() == "$MLNEIGHBORS_DATA"
    monkeypatch.delenv("MLNEIGHBORS_DATA")
    monkeypatch.setattr(_registry, "_checkout_datasets", lambda: tmp_path / "shared")
    assert get_data_home() == tmp_path / "shared"
    assert data_home_source() == "../shared/datasets beside the source checkout"
    monkeypatch.setattr(_registry, "_checkout_datasets", lambda: None)  # an installed package
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert get_data_home() == tmp_path / "cache" / "mlneighbors"
    assert data_home_source() == "the per-user cache"


def test_the_shared_folder_beside_a_checkout(tmp_path):
    root = tmp_path / "clone"
    module = root / "src" / "mlneighbors" / "datasets" / "_registry.py"
    shared = tmp_path / "shared" / "datasets"
    shared.mkdir(parents=True)
    assert _registry._checkout_datasets(module) is None  # no pyproject.toml: not a checkout
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    assert _registry._checkout_datasets(module) is None  # no MANIFEST.md: not the shared data
    (shared / "MANIFEST.md").write_text("")
    assert _registry._checkout_datasets(module) == shared
    installed = tmp_path / "site-packages" / "mlneighbors" / "datasets" / "_registry.py"
    assert _registry._checkout_datasets(installed) is None


def test_this_checkout_reads_the_shared_data_without_the_variable(monkeypatch, shared_data):
    monkeypatch.delenv("MLNEIGHBORS_DATA", raising=False)
    beside = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
    if shared_data.resolve() != beside.resolve():
        pytest.skip("the shared data is not beside this checkout")
    assert get_data_home().resolve() == beside.resolve()
    assert load_dataset("emotions", "train").n_samples == 391


def test_missing_file_says_where_to_put_it(tmp_path):
    with pytest.raises(DatasetNotFoundError) as err:
        load_dataset("emotions", "train", data_home=tmp_path)
    message = str(err.value)
    assert str(tmp_path / "emotions" / "emotions-train.arff") in message
    assert "download=True" in message and "MLNEIGHBORS_DATA" in message
    assert "(data directory from data_home)" in message
    assert err.value.dataset == "emotions"
    assert err.value.path == str(tmp_path / "emotions" / "emotions-train.arff")


def test_the_missing_file_hint_can_be_swapped_by_a_front_end(tmp_path):
    with pytest.raises(DatasetNotFoundError) as err:
        load_dataset("yeast", "test", data_home=tmp_path / "nowhere")
    assert "which does not exist" in err.value.reason
    assert "the uncompressed yeast-test.arff would do" in err.value.reason
    cli = err.value.with_hint("Run 'mlneighbors fetch yeast'.")
    assert str(cli) == f"{err.value.reason} Run 'mlneighbors fetch yeast'."
    assert "download=True" not in str(cli)
    assert isinstance(cli, FileNotFoundError)
    copy = pickle.loads(pickle.dumps(err.value))
    assert (str(copy), copy.dataset, copy.hint) == (str(err.value), "yeast", err.value.hint)


def test_a_data_home_that_is_a_file_is_named_as_such(tmp_path, monkeypatch):
    a_file = tmp_path / "datasets.txt"
    a_file.write_text("not a folder")
    for call in (
        lambda: load_dataset("emotions", data_home=a_file),
        lambda: fetch_dataset("emotions", a_file),
        lambda: dataset_status("emotions", a_file),
    ):
        with pytest.raises(NotADirectoryError, match=rf"data_home {re.escape(str(a_file))} is not a folder"):
            call()
    monkeypatch.setenv("MLNEIGHBORS_DATA", str(a_file))
    with pytest.raises(NotADirectoryError, match=r"\$MLNEIGHBORS_DATA .* is not a folder"):
        load_dataset("emotions")


@pytest.mark.parametrize("name", ["cal500", "slashdot", "yahoo-science"])
def test_a_split_that_does_not_ship_points_to_cross_validation(name, tmp_path):
    with pytest.raises(ValueError, match="cross-validation"):
        load_dataset(name, "train", data_home=tmp_path)


def test_unknown_split(tmp_path):
    with pytest.raises(ValueError, match="split must be one of"):
        load_dataset("yeast", "validation", data_home=tmp_path)


def _stage(shared: Path, dst: Path, name: str) -> None:
    spec = get_dataset_spec(name)
    for f in spec.files:
        (dst / spec.folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared / f.path, dst / f.path)


def test_checksum_mismatch_of_a_local_file(shared_data, tmp_path):
    _stage(shared_data, tmp_path, "emotions")
    target = tmp_path / "emotions" / "emotions-train.arff"
    target.write_bytes(target.read_bytes().replace(b"@relation", b"@RELATION", 1))
    with pytest.raises(ChecksumError, match="emotions-train.arff does not match"):
        load_dataset("emotions", "train", data_home=tmp_path)
    states = {s.spec.role: s.verified for s in dataset_status("emotions", tmp_path)}
    assert states == {"train": False, "test": True, "all": True, "xml": True}


def test_a_gzip_file_may_be_held_uncompressed(shared_data, tmp_path):
    import gzip

    _stage(shared_data, tmp_path, "yeast")
    packed = tmp_path / "yeast" / "yeast-test.arff.gz"
    (tmp_path / "yeast" / "yeast-test.arff").write_bytes(gzip.decompress(packed.read_bytes()))
    packed.unlink()
    data = load_dataset("yeast", "test", data_home=tmp_path)
    assert data.X.shape == (917, 103)
    assert all(s.verified for s in dataset_status("yeast", tmp_path))


# -- downloads, against a loopback HTTP server serving a temporary folder ------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def mirror(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _serve_raw(shared: Path, root: Path, name: str) -> None:
    """Serve the files as their source repositories do: uncompressed."""
    import gzip

    spec = get_dataset_spec(name)
    for f in spec.files:
        data = (shared / f.path).read_bytes()
        if f.compressed:
            data = gzip.decompress(data)
        out = root / f.raw_path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)


@pytest.mark.requires("pooch")
def test_download_from_a_mirror(shared_data, tmp_path, mirror):
    root, url = mirror
    _serve_raw(shared_data, root, "yeast")
    home = tmp_path / "home"
    data = load_dataset("yeast", "train", data_home=home, download=True, mirror=url)
    assert data.X.shape == (1500, 103)
    assert sorted(p.name for p in (home / "yeast").iterdir()) == ["yeast-train.arff", "yeast.xml"]
    paths = fetch_dataset("yeast", home, mirror=url)
    assert len(paths) == 4
    assert all(s.verified for s in dataset_status("yeast", home))
    local = hashlib.sha256((home / "yeast" / "yeast.arff").read_bytes()).hexdigest()
    assert local == get_dataset_spec("yeast").file("all").raw_sha256


@pytest.mark.requires("pooch")
def test_a_corrupt_download_leaves_nothing(shared_data, tmp_path, mirror):
    root, url = mirror
    _serve_raw(shared_data, root, "emotions")
    served = root / "emotions" / "emotions-test.arff"
    served.write_bytes(served.read_bytes()[:-100])  # truncated in transit
    home = tmp_path / "home"
    with pytest.raises(ChecksumError, match="nothing was written"):
        load_dataset("emotions", "test", data_home=home, download=True, mirror=url)
    assert not home.exists()  # no partial file, no staging folder, no folder it created


@pytest.mark.requires("pooch")
def test_a_failed_download_keeps_what_came_before_it(shared_data, tmp_path, mirror):
    root, url = mirror
    _serve_raw(shared_data, root, "emotions")
    (root / "emotions" / "emotions.xml").unlink()
    home = tmp_path / "home"
    with pytest.raises(OSError, match="could not download"):
        fetch_dataset("emotions", home, mirror=url)
    kept = sorted(p.name for p in (home / "emotions").iterdir())
    assert kept == ["emotions-test.arff", "emotions-train.arff", "emotions.arff"]


@pytest.mark.requires("pooch")
def test_an_unreachable_source_is_a_clear_error(tmp_path, mirror):
    _, url = mirror  # serves an empty folder: 404
    with pytest.raises(OSError, match="could not download"):
        fetch_dataset("birds", tmp_path, mirror=url)
    assert not (tmp_path / "birds").exists()  # no ~/.cache/mlneighbors/birds/ left empty
    with pytest.raises(OSError, match="could not download"):
        fetch_dataset("birds", tmp_path / "new" / "home", mirror=url)
    assert not (tmp_path / "new").exists()


# -- every shared dataset against the manifest ---------------------------------------------


def _manifest_rows(shared: Path) -> dict[tuple[str, str], tuple[int, int, int, float]]:
    """(folder, role) -> (n, d, L, cardinality), straight from MANIFEST.md's file tables."""
    roles = {"full (train+test union)": "all", "train": "train", "test": "test", "MATLAB data": "all"}
    rows = {}
    for line in (shared / "MANIFEST.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 10 and cells[0].startswith("`") and cells[4] in roles and cells[5]:
            folder = cells[0].strip("`").split("/")[0]
            role = roles[cells[4]]
            if (folder, role) in rows:  # corel16k001: the test ARFF and the full .mat
                continue
            rows[(folder, role)] = (int(cells[5]), int(cells[6]), int(cells[7]), float(cells[8]))
    summary = {}
    for line in (shared / "MANIFEST.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"\[(\S+)\]\(#\S+\)", cells[0])
        if m and len(cells) >= 9:
            summary[m.group(1)] = tuple(cells[3:9])  # n_train, n_test, n_total, d, L, card
    return rows, summary


def _cases():
    return [(spec.name, split) for spec in CATALOG for split in spec.splits]


@pytest.mark.parametrize(("name", "split"), _cases())
def test_every_shared_dataset_matches_the_manifest(shared_data, name, split):
    rows, summary = _manifest_rows(shared_data)
    spec = get_dataset_spec(name)
    data = load_dataset(name, split)
    if (spec.folder, split) in rows:
        n, d, L, card = rows[(spec.folder, split)]
    else:  # no file of its own: the union of train and test, or corel16k001's train rows
        n_train, n_test, n_total, d, L, card = summary[spec.folder]
        d, L, card = int(d), int(L), float(card)
        n = int(n_total) if split == "all" else int(n_train)
        if split == "train":  # the manifest gives no cardinality for corel16k001's train rows
            n_te, _, _, card_te = rows[(spec.folder, "test")]
            card = (int(n_total) * float(summary[spec.folder][5]) - n_te * card_te) / n
    if name == "genbase":
        d -= 1  # the protein identifier is dropped (see the registry notes)
    assert data.X.shape == (n, d)
    assert data.Y.shape == (n, L)
    assert data.Y.dtype == np.int8 and set(np.unique(data.Y)) <= {0, 1}
    assert data.cardinality == pytest.approx(card, abs=6e-4)
    assert len(data.feature_names) == d and len(data.label_names) == L
    assert data.name == name and data.split == split
    assert sp.issparse(data.X) == (name in {"bibtex", "corel5k", "enron", "medical", "ohsumed"})
    if sp.issparse(data.X):
        assert data.X.format == "csr"
        assert np.isfinite(data.X.data).all()
    else:
        assert data.X.dtype == np.float64


def test_corel16k001_test_rows_equal_the_mat_tail(shared_data):
    full = load_dataset("corel16k001", "all")
    test = load_dataset("corel16k001", "test")
    assert np.array_equal(full.X[-1744:], test.X.toarray() if sp.issparse(test.X) else test.X)
    assert np.array_equal(full.Y[-1744:], test.Y)
    assert full.label_names == test.label_names and full.feature_names == test.feature_names


def test_yeast_labels_follow_the_arff_order(shared_data):
    data = load_dataset("yeast", "train")
    assert data.label_names == [f"Class{i}" for i in range(1, 15)]  # the XML lists Class6 fourth
