"""Files written whole or not at all, with the modes the user's umask gives.

Every output of the package (a reproduction's folder, a saved model, a predictions file)
is written under a temporary name beside its target and renamed into place at the end:
an interruption or an error leaves the old file (or nothing), never half of a new one.
The temporary files are created 0600 and folders 0700 whatever the umask; the modes are set
to what ``open``/``mkdir`` would have given before the rename.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_path", "check_writable", "made_folder", "make_folder", "remove_empty", "staged_folder"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _reserve(folder: Path, prefix: str, suffix: str = "", *, is_dir: bool = False) -> Path:
    """Create a new empty file (0600) or folder (0700) of a fresh name in ``folder``.

    Unlike ``tempfile``'s functions, the name is known before anything is created, so an
    interruption that lands between the creation and the return removes what was created
    instead of leaving an entry nobody knows the name of.
    """
    while True:
        path = folder / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            if is_dir:
                os.mkdir(path, 0o700)
            else:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return path
        except FileExistsError:
            continue
        except BaseException:
            with contextlib.suppress(OSError):
                os.rmdir(path) if is_dir else os.unlink(path)
            raise


def _missing(folder: str | os.PathLike[str]) -> list[Path]:
    """``folder`` and those of its parents that do not exist, deepest first."""
    path = Path(os.path.abspath(folder))
    missing = []
    while not path.exists() and path.parent != path:
        missing.append(path)
        path = path.parent
    return missing


def _mkdirs(folder: str | os.PathLike[str]) -> list[Path]:
    """Create ``folder`` and its missing parents; the folders created, deepest first."""
    missing = _missing(folder)
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError:
        remove_empty(missing)
        raise
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (deepest first, as :func:`make_folder` gives them) while they are
    empty: the first that holds something ends it (one already gone is passed over)."""
    for folder in folders:
        try:
            folder.rmdir()
        except FileNotFoundError:
            continue
        except OSError:
            return


def make_folder(folder: str | os.PathLike[str]) -> list[Path]:
    """Create ``folder`` if needed and prove it writable (:func:`check_writable`); returns the
    folders created, deepest first, for :func:`remove_empty` if what was to fill them fails.
    Nothing is left created when the check fails."""
    created = _missing(folder)
    try:
        check_writable(folder)  # creates them
    except OSError:
        remove_empty(created)
        raise
    return created


@contextmanager
def made_folder(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """:func:`make_folder` before the work, and the folders it created removed again if the
    work fails or is interrupted and they are still empty."""
    created = make_folder(folder)
    try:
        yield Path(folder)
    except BaseException:
        remove_empty(created)
        raise


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary name in ``path``'s folder, renamed to ``path`` on success, removed on failure
    (with the folders created for it)."""
    path = Path(path)
    created = _mkdirs(path.parent)
    try:
        tmp = _reserve(path.parent, f".{path.name}.", ".tmp")
    except BaseException:
        remove_empty(created)
        raise
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            os.replace(tmp, path)
        except OSError as exc:  # the user's path, not the temporary name
            what = "it is a folder" if path.is_dir() else exc.strerror or str(exc)
            raise type(exc)(f"cannot write {path}: {what}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        remove_empty(created)
        raise


@contextmanager
def staged_folder(target: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary folder beside ``target`` that replaces it whole on success.

    The files of a run appear together or not at all: on an error or an interruption the
    staging folder is removed, with the folders created to hold it, and an older ``target``
    stays as it was.
    """
    target = Path(target)
    created = _mkdirs(target.parent)
    try:
        stage = _reserve(target.parent, f".{target.name}.", ".tmp", is_dir=True)
    except BaseException:
        remove_empty(created)
        raise
    try:
        yield stage
        os.chmod(stage, 0o777 & ~_umask())
        if target.exists():
            old = _reserve(target.parent, f".{target.name}.", ".old", is_dir=True)
            os.replace(target, old / target.name)
            os.replace(stage, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(stage, target)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        remove_empty(created)
        raise


def _unnamed_file(folder: Path) -> bool:
    """Make an unnamed file in ``folder`` (Linux's ``O_TMPFILE``: it never has a name, so an
    interruption at any moment leaves nothing behind); False where the system or the file
    system has no such files (the caller writes a named probe instead); OSError as ``open``
    raises it otherwise (no permission, a read-only file system)."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return False
    try:
        os.close(os.open(folder, flag | os.O_WRONLY, 0o600))
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):  # no O_TMPFILE here
            return False
        raise
    return True


def check_writable(folder: str | os.PathLike[str]) -> Path:
    """Create ``folder`` if needed and prove that files can be written in it; OSError naming
    the folder otherwise (before any computing is spent)."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if _unnamed_file(folder):
            return folder
        # else a named probe, removed at once (its name is bound before the file exists; a
        # Ctrl-C that lands during the removal itself still leaves it behind)
        probe = folder / f".write-test.{os.getpid()}.{secrets.token_hex(6)}"
        try:
            os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        finally:
            with contextlib.suppress(FileNotFoundError):
                probe.unlink()
    except OSError as exc:
        raise OSError(f"cannot write to {folder}: {exc.strerror or exc}") from None
    return folder
