"""Damaged and foreign model files: one clear ModelFileError from mlneighbors.load, one line
and exit 2 from the command line, nothing of an untrusted type built, no output left behind."""

from __future__ import annotations

import io
import json
import pickle
import zipfile

import joblib
import numpy as np
import pytest

import mlneighbors
from mlneighbors import MLkNN
from mlneighbors.cli import main
from mlneighbors.exceptions import ModelFileError, VersionWarning

sio = pytest.importorskip("skops.io")

#: what a Recorder or a recorded function did while a file was loaded (must stay empty)
EVENTS: list[str] = []


class Recorder:
    """A type of another module: records being built, restored or called."""

    def __new__(cls, *args, **kwargs):
        EVENTS.append("built")
        return super().__new__(cls)

    def __setstate__(self, state):
        EVENTS.append("restored")
        self.__dict__.update(state)

    def __call__(self, *args):
        EVENTS.append("called")


def recorded_function(*args):
    EVENTS.append("called")


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = (X + rng.normal(scale=0.5, size=X.shape) > 0).astype(np.int64)
    return MLkNN(3).fit(X, Y), X


@pytest.fixture
def good(fitted, tmp_path):
    path = tmp_path / "good.skops"
    mlneighbors.save(fitted[0], path)
    return path


def _rewrite_schema(raw: bytes, edit) -> bytes:
    """The same skops file with schema.json replaced by ``edit(schema bytes)`` (its CRC right)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            dst.writestr(info, edit(data) if info.filename == "schema.json" else data)
    return out.getvalue()


def _schema_offset(raw: bytes) -> tuple[int, int]:
    """Where the stored bytes of schema.json lie in the file."""
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        info = archive.getinfo("schema.json")
    assert info.compress_type == zipfile.ZIP_STORED  # skops' default: the JSON is there as written
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    assert raw[start:start + 1] == b"{"
    return start, info.compress_size


def _with_protocol(protocol):
    def edit(data):
        schema = json.loads(data)
        schema["protocol"] = protocol
        return json.dumps(schema).encode()
    return edit


def _a_zip(names):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in names:
            archive.writestr(name, "x")
    return out.getvalue()


# (kind, how to make it from the good file's bytes and the fitted model, what the message says)
KINDS = [
    ("empty", lambda raw, m: b"", "is not a model file: it is empty (0 bytes)"),
    ("pickle", lambda raw, m: pickle.dumps(m), "is not a model file: it is a pickle"),
    ("joblib", None, "is not a model file: it is a pickle"),
    ("joblib-gzip", None, "is not a model file: it is a gzip-compressed file"),
    ("text", lambda raw, m: b"a,b,c\n0.1,0.2,0.3\n", "is not a model file: it is a text file beginning 'a,b,c'"),
    ("binary", lambda raw, m: bytes(range(200, 256)) * 4, "is not a model file: it is binary data beginning c8 c9"),
    ("other-zip", lambda raw, m: _a_zip(["data.csv", "readme.txt"]),
     "is not a model file: it is a zip archive without the schema.json of a skops file (it holds data.csv, "
     "readme.txt)"),
    ("empty-zip", lambda raw, m: _a_zip([]), "is not a model file: it is an empty zip archive"),
    ("schema-not-json", lambda raw, m: _rewrite_schema(raw, lambda d: d[: len(d) // 2]),
     "is damaged: its schema.json is not valid JSON"),
    ("schema-not-an-object", lambda raw, m: _rewrite_schema(raw, lambda d: b"[1, 2]"),
     "is damaged: its schema.json gives no valid skops file protocol"),
    ("schema-bad-protocol", lambda raw, m: _rewrite_schema(raw, _with_protocol("2")),
     "is damaged: its schema.json gives no valid skops file protocol (protocol='2')"),
    ("schema-newer-protocol", lambda raw, m: _rewrite_schema(raw, _with_protocol(10**6)),
     "was written with skops file protocol 1000000, and the installed skops"),
    ("schema-unknown-loader",
     lambda raw, m: _rewrite_schema(raw, lambda d: d.replace(b'"ObjectNode"', b'"NoNode"', 1)),
     "is damaged: skops cannot read it (TypeError: Can't find loader NoNode"),
    ("schema-missing-key",
     lambda raw, m: _rewrite_schema(raw, lambda d: d.replace(b'"__loader__"', b'"__lodaer__"', 1)),
     "is damaged: skops cannot read it (KeyError"),
]


def _make(kind, raw, model, path):
    if kind == "joblib":
        joblib.dump(model, path)
    elif kind == "joblib-gzip":
        joblib.dump(model, path, compress=("gzip", 3))
    else:
        maker = {k: make for k, make, _ in KINDS}[kind]
        path.write_bytes(maker(raw, model))
    return path


@pytest.mark.parametrize("kind, needle", [(k, n) for k, _, n in KINDS], ids=[k for k, _, _ in KINDS])
def test_load_names_the_file_and_what_it_is(kind, needle, fitted, good, tmp_path):
    path = _make(kind, good.read_bytes(), fitted[0], tmp_path / f"{kind}.skops")
    with pytest.raises(ModelFileError) as info:
        mlneighbors.load(path)
    message = str(info.value)
    assert message.startswith(f"{path} ") and needle in message, message
    assert "\n" not in message and info.value.path == str(path)
    assert isinstance(info.value, ValueError)


def test_a_truncated_file_says_so_at_every_cut(good):
    raw = good.read_bytes()
    cuts = [1, 3, 4, 30, len(raw) // 3, len(raw) // 2, len(raw) - 23, len(raw) - 22, len(raw) - 1]
    for cut in cuts:
        path = good.with_name(f"cut{cut}.skops")
        path.write_bytes(raw[:cut])
        with pytest.raises(ModelFileError, match=rf"^{path} is truncated: .* its end is missing \({cut} bytes\)"):
            mlneighbors.load(path)


def test_flipped_bytes_in_the_schema_are_caught(good):
    raw = good.read_bytes()
    start, size = _schema_offset(raw)
    for offset in np.linspace(start, start + size - 1, 9).astype(int):
        damaged = bytearray(raw)
        damaged[offset] ^= 0x5A
        path = good.with_name(f"flip{offset}.skops")
        path.write_bytes(bytes(damaged))
        # the zip's CRC of schema.json no longer matches: refused before anything is parsed
        with pytest.raises(ModelFileError, match=rf"^{path} is damaged: .*Bad CRC-32 for file 'schema.json'"):
            mlneighbors.load(path)


def test_a_damaged_array_inside_is_caught(good):
    raw = good.read_bytes()
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        arrays = [i for i in archive.infolist() if i.filename.endswith(".npy")]
    info = arrays[0]
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    damaged = bytearray(raw)
    damaged[start + info.compress_size - 1] ^= 0xFF  # the last byte of the array's data
    path = good.with_name("array.skops")
    path.write_bytes(bytes(damaged))
    with pytest.raises(ModelFileError, match=rf"^{path} is damaged: .*Bad CRC-32 for file '{info.filename}'"):
        mlneighbors.load(path)


@pytest.mark.parametrize("payload", ["instance", "function", "class"])
def test_an_untrusted_type_is_named_and_never_built(payload, fitted, tmp_path):
    model = pickle.loads(pickle.dumps(fitted[0]))
    name = {"instance": Recorder, "function": recorded_function, "class": Recorder}[payload]
    model.extra_ = name
    if payload == "instance":
        model.extra_ = Recorder()
        model.extra_.value = 1
    path = tmp_path / "untrusted.skops"
    mlneighbors.save(model, path)
    EVENTS.clear()
    qualified = f"{name.__module__}.{name.__qualname__}"
    with pytest.raises(ModelFileError, match=rf"^{path} holds a type outside mlneighbors.TRUSTED_TYPES .*: "
                                             rf"{qualified}; nothing of it was built"):
        mlneighbors.load(path)
    assert EVENTS == []
    # the check is skops' own, not a guess: trusting the type builds it
    loaded = sio.load(path, trusted=mlneighbors.TRUSTED_TYPES + [qualified])
    assert (EVENTS == ["built", "restored"]) if payload == "instance" else (loaded.extra_ is name)


def test_a_skops_file_of_something_else_is_not_a_model(tmp_path):
    path = tmp_path / "numbers.skops"
    sio.dump({"weights": np.arange(3)}, path)
    with pytest.raises(ModelFileError, match=rf"^{path} is not a model file: it is a skops file of a dict"):
        mlneighbors.load(path)


def test_a_missing_file_stays_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.skops"):
        mlneighbors.load(tmp_path / "nowhere.skops")


def test_another_version_still_loads_with_a_warning(fitted, good, monkeypatch):
    monkeypatch.setattr(mlneighbors, "__version__", "9.9.9")
    with pytest.warns(VersionWarning, match="loaded by mlneighbors 9.9.9"):
        loaded = mlneighbors.load(good)
    np.testing.assert_array_equal(loaded.predict(fitted[1]), fitted[0].predict(fitted[1]))


def test_the_error_pickles_with_its_path():
    error = pickle.loads(pickle.dumps(ModelFileError("m.skops is damaged", path="m.skops")))
    assert str(error) == "m.skops is damaged" and error.path == "m.skops"


# ------------------------------------------------------------------ the command line


def _cli_kinds():
    return [k for k, _, _ in KINDS] + ["truncated", "flipped", "untrusted"]


@pytest.mark.parametrize("kind", _cli_kinds())
def test_predict_prints_one_line_exits_2_and_writes_nothing(kind, fitted, good, tmp_path, capsys):
    model, X = fitted
    new = tmp_path / "new.csv"
    np.savetxt(new, X[:5], delimiter=",", header="a,b,c", comments="")
    out = tmp_path / "out" / "predictions.csv"
    out.parent.mkdir()
    assert main(["predict", str(good), str(new), "--out", str(out), "--quiet"]) == 0  # the undamaged file works
    out.unlink()
    capsys.readouterr()
    raw = good.read_bytes()
    path = tmp_path / f"{kind}.skops"
    if kind == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
        needle = "is truncated"
    elif kind == "flipped":
        start, size = _schema_offset(raw)
        damaged = bytearray(raw)
        damaged[start + size // 2] ^= 0x5A
        path.write_bytes(bytes(damaged))
        needle = "is damaged"
    elif kind == "untrusted":
        bad = pickle.loads(pickle.dumps(model))
        bad.extra_ = Recorder()
        mlneighbors.save(bad, path)
        EVENTS.clear()
        needle = f"holds a type outside mlneighbors.TRUSTED_TYPES and skops' defaults: {__name__}.Recorder"
    else:
        _make(kind, raw, model, path)
        needle = {k: n for k, _, n in KINDS}[kind]
    for target in (out, tmp_path / "out" / "predicted.arff"):
        assert main(["predict", str(path), str(new), "--out", str(target)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        lines = captured.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"mlneighbors predict: {path} ") and needle in lines[0], lines
        assert list(out.parent.iterdir()) == []  # no output, no temporary file, no XML
    assert EVENTS == []
