"""The command line, through main([...])."""

import csv
import io
import json

import pytest

from mlneighbors.cli import main
from mlneighbors.datasets import list_datasets


def test_datasets_table(shared_data, capsys):
    assert main(["datasets", "--data-home", str(shared_data)]) == 0
    out = capsys.readouterr().out
    assert f"data directory: {shared_data}" in out
    for name in list_datasets():
        assert name in out
    assert out.count("present, verified") == len(list_datasets())


def test_datasets_json_and_csv(shared_data, capsys):
    assert main(["datasets", "--data-home", str(shared_data), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {r["dataset"]: r for r in rows}
    assert by_name["yeast"]["n_labels"] == 14 and by_name["yeast"]["splits"] == "all/train/test"
    assert by_name["cal500"]["splits"] == "all"
    assert main(["datasets", "--data-home", str(shared_data), "--format", "csv", "--no-verify"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(list_datasets())
    assert {r["files"] for r in rows} == {"present (not verified)"}


def test_datasets_in_an_empty_directory(tmp_path, capsys):
    assert main(["datasets", "--data-home", str(tmp_path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all(r["files"].startswith("missing") for r in rows)


def test_bad_format_is_one_clear_line(capsys):
    assert main(["datasets", "--format", "yaml"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "invalid choice: 'yaml'" in err and "table" in err and "json" in err


def test_unknown_command(capsys):
    assert main(["frobnicate"]) == 2
    assert "frobnicate" in capsys.readouterr().err


def test_fetch_unknown_dataset_downloads_nothing(tmp_path, capsys):
    assert main(["fetch", "yeast", "yaest", "--data-home", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "unknown dataset 'yaest'" in err and "'yeast'" in err
    assert not any(tmp_path.iterdir())


def test_fetch_already_present(shared_data, capsys):
    assert main(["fetch", "emotions", "--data-home", str(shared_data)]) == 0
    assert "emotions: 4 files present and verified" in capsys.readouterr().out
