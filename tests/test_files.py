"""Files written whole or not at all, with the umask's modes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mlneighbors._files import atomic_path, check_writable, made_folder, make_folder, staged_folder


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_atomic_path_is_whole_or_nothing(tmp_path):
    target = tmp_path / "sub" / "table.csv"
    with atomic_path(target) as tmp:
        tmp.write_text("a,b\n")
    assert target.read_text() == "a,b\n"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert target.read_text() == "a,b\n"  # the old file untouched
    assert sorted(p.name for p in target.parent.iterdir()) == ["table.csv"]  # no temporary left


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_outputs_get_the_modes_of_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        with atomic_path(tmp_path / "f.txt") as tmp:
            tmp.write_text("x")
        with staged_folder(tmp_path / "run") as stage:
            (stage / "a.txt").write_text("y")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "f.txt") == 0o666 & ~umask
    assert _mode(tmp_path / "run") == 0o777 & ~umask


def test_a_staged_folder_replaces_the_old_one_whole(tmp_path):
    target = tmp_path / "paper"
    with staged_folder(target) as stage:
        (stage / "table.csv").write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with staged_folder(target) as stage:
            (stage / "table.csv").write_text("new")
            raise KeyboardInterrupt
    assert (target / "table.csv").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["paper"]  # no staging folder left
    with staged_folder(target) as stage:
        (stage / "table.md").write_text("new")
    assert [p.name for p in target.iterdir()] == ["table.md"]
    assert [p.name for p in tmp_path.iterdir()] == ["paper"]


def test_check_writable_names_the_folder(tmp_path):
    assert check_writable(tmp_path / "new" / "deeper").is_dir()
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        with pytest.raises(OSError, match=f"cannot write to {locked}"):
            check_writable(locked)
    finally:
        locked.chmod(0o700)
    regular = tmp_path / "file"
    regular.write_text("x")
    with pytest.raises(OSError, match=f"cannot write to {regular}"):
        check_writable(regular)


def _write(kind, target):
    if kind == "atomic_path":
        return atomic_path(target / "table.csv")
    if kind == "staged_folder":
        return staged_folder(target / "paper")
    return made_folder(target)


@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt])
@pytest.mark.parametrize("kind", ["atomic_path", "staged_folder", "made_folder"])
def test_a_failed_write_leaves_no_folder_it_created(kind, exc_type, tmp_path):
    (tmp_path / "kept").mkdir()
    target = tmp_path / "kept" / "new" / "deeper"
    with pytest.raises(exc_type):
        with _write(kind, target):
            raise exc_type("interrupted while writing")
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")] == ["kept"]  # found: kept
    with _write(kind, target):  # a write that succeeds keeps its folders
        pass
    assert target.is_dir()


def test_a_folder_filled_meanwhile_is_not_removed(tmp_path):
    target = tmp_path / "new" / "deeper"
    with pytest.raises(RuntimeError):
        with made_folder(target):
            (tmp_path / "new" / "theirs.txt").write_text("written meanwhile")
            raise RuntimeError
    assert not target.exists() and (tmp_path / "new" / "theirs.txt").is_file()


def test_make_folder_that_fails_its_check_leaves_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError, match=f"cannot write to {blocker / 'a'}"):
        make_folder(blocker / "a" / "b")
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
    assert make_folder(tmp_path / "a" / "b") == [tmp_path / "a" / "b", tmp_path / "a"]
    assert make_folder(tmp_path / "a" / "b") == []


def test_the_write_probe_has_no_name_where_the_system_allows(tmp_path, monkeypatch):
    # the CI's failure: a Ctrl-C landing in the named probe's removal left `.write-test.*` in the
    # user's folder. With O_TMPFILE (Linux) the probe never has a name: nothing to remove
    import errno

    import mlneighbors._files as files

    folder = tmp_path / "out"
    if not files._unnamed_file(tmp_path):
        pytest.skip("no unnamed files on this system or file system")

    def interrupted_unlink(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "unlink", interrupted_unlink)
    assert check_writable(folder) == folder
    assert list(folder.iterdir()) == []
    monkeypatch.undo()
    # without them (another system, or a file system that refuses them): the named probe, removed
    real_open = os.open

    def no_tmpfile(path, flags, *args):
        if flags & os.O_TMPFILE == os.O_TMPFILE:
            raise OSError(errno.EOPNOTSUPP, "not supported")
        return real_open(path, flags, *args)

    made = []
    monkeypatch.setattr(files.os, "open", lambda path, flags, *a: made.append(path) or no_tmpfile(path, flags, *a))
    assert check_writable(folder) == folder
    assert list(folder.iterdir()) == [] and any(".write-test." in str(p) for p in made)
    monkeypatch.undo()
    monkeypatch.delattr(files.os, "O_TMPFILE")
    assert files._unnamed_file(folder) is False and check_writable(folder) == folder


@pytest.mark.parametrize("where", ["probe", "atomic", "staged"])
def test_an_interruption_just_after_creating_a_temporary_leaves_nothing(tmp_path, monkeypatch, where):
    """A Ctrl-C that lands right after a temporary file or folder is created, before its name
    has reached the code that would remove it (the window in which ``tempfile.mkstemp`` left
    a ``.write-test.*`` probe behind in CI), leaves nothing in the folder."""
    import mlneighbors._files as files

    folder = tmp_path / "out"
    folder.mkdir()
    real_close, real_mkdir = os.close, os.mkdir

    def close_then_interrupt(fd):
        real_close(fd)
        raise KeyboardInterrupt

    def mkdir_then_interrupt(path, *args, **kwargs):
        real_mkdir(path, *args, **kwargs)
        if os.path.dirname(path) == str(folder):
            raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "close", close_then_interrupt)
    monkeypatch.setattr(files.os, "mkdir", mkdir_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        if where == "probe":
            check_writable(folder)
        elif where == "atomic":
            with atomic_path(folder / "model.skops"):
                pass
        else:
            with staged_folder(folder / "run"):
                pass
    assert list(folder.iterdir()) == []
