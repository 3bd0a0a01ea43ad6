"""The results store of a benchmark: one SQLite file (the standard library's ``sqlite3``).

Tables
------
``results``
    One row per (dataset, model, fold, metric): the value (NULL for a cell that ran and
    failed: a NaN to the statistics), the cell's seconds (its fit, predict and score; the
    first model of a fold also pays the fold's scaling and shared neighbour search) and the
    run that made it.  The primary key is (dataset, model, fold, metric): a row cannot be
    stored twice.
``failures``
    Why a failed cell failed (the exception's type and message), one row per cell.
``datasets``
    Per dataset: the sha256 of its data as read (features and labels, the test part too),
    the sha256 of its fold assignment, its shape and scaling.
``models``
    Per model configuration (``mlknn:k=5``): every parameter of the estimator, as JSON.
``runs``
    Per invocation: package version, seed, protocol, models, datasets, metrics, machine,
    start and end (end stays NULL for a run that was killed), cells computed.
``meta``
    The store's schema version, the package version that wrote it and the protocol.

Durability
----------
The store is in WAL mode and every finished cell is one transaction: a run killed at any
point (Ctrl-C, ``kill -9``, a lost worker) loses only the cells in flight, and the next run
of the same command computes only what is missing.  One run at a time writes a store: a run
holds an advisory lock on the file (released by the operating system however the process
ends), and a second one is refused in one line.

What is never mixed
-------------------
A store holds one protocol (split or folds, repeats, seed) written by one package version;
per dataset one data (sha256) and one fold assignment; per model configuration one set of
parameters.  A run that differs in any of these is refused before it computes anything,
with one line naming what differs (a new store keeps such results apart).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

__all__ = ["SCHEMA_VERSION", "Store", "StoreError", "read_rows", "read_store"]

#: the layout of the tables; a store of another layout is refused
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run INTEGER PRIMARY KEY AUTOINCREMENT, version TEXT NOT NULL, seed INTEGER, protocol TEXT NOT NULL,
    models TEXT NOT NULL, datasets TEXT NOT NULL, metrics TEXT NOT NULL, machine TEXT NOT NULL,
    command TEXT, started TEXT NOT NULL, ended TEXT, cells INTEGER NOT NULL DEFAULT 0,
    searches INTEGER, searches_unshared INTEGER);
CREATE TABLE IF NOT EXISTS datasets (
    dataset TEXT PRIMARY KEY, sha256 TEXT NOT NULL, folds_sha256 TEXT NOT NULL, n_samples INTEGER NOT NULL,
    n_features INTEGER NOT NULL, n_labels INTEGER NOT NULL, n_test INTEGER, scale TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS models (model TEXT PRIMARY KEY, params TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    dataset TEXT NOT NULL REFERENCES datasets(dataset), model TEXT NOT NULL REFERENCES models(model),
    fold INTEGER NOT NULL, metric TEXT NOT NULL, value REAL, seconds REAL NOT NULL,
    run INTEGER NOT NULL REFERENCES runs(run), PRIMARY KEY (dataset, model, fold, metric));
CREATE TABLE IF NOT EXISTS failures (
    dataset TEXT NOT NULL, model TEXT NOT NULL, fold INTEGER NOT NULL, error TEXT NOT NULL,
    run INTEGER NOT NULL REFERENCES runs(run), PRIMARY KEY (dataset, model, fold));
"""


class StoreError(Exception):
    """A store that cannot be used as asked: one line naming the file and the problem.

    Examples
    --------
    >>> from mlneighbors.benchmark import StoreError, read_rows
    >>> try:
    ...     read_rows("no-such-store.sqlite")
    ... except StoreError as exc:
    ...     print(exc)
    no results store 'no-such-store.sqlite' (a 'benchmark run' writes one)
    """


def _lock_file(fh: Any) -> bool:
    """An exclusive advisory lock on an open file, not waiting; False where another process
    holds one.  POSIX ``flock`` (independent of SQLite's own ``fcntl`` locks), released by the
    operating system however the process ends; no lock where the platform has none."""
    try:
        import fcntl
    except ImportError:  # Windows: SQLite's own locking still keeps two writers apart
        return True
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())


#: SQLITE_READONLY_ROLLBACK: a read-only connection found a hot journal it may not roll back
_READONLY_ROLLBACK = 776


def _hot_journal(exc: sqlite3.Error) -> bool:
    """Whether a read-only open failed on an interrupted writer's journal (Python 3.10 has no
    error codes: its message then)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code == _READONLY_ROLLBACK
    return "readonly" in str(exc)


class Store:
    """A benchmark's results store (see the module's docstring for its tables and rules).

    Parameters
    ----------
    path : str or path-like
        The SQLite file (created with its folder for ``write=True`` when absent).
    write : bool, default=False
        Open for a run: the file is locked against a second writer, a read-only or locked
        file is refused in one line.  Without it the store is opened read-only (a report).
    timeout : float, default=10.0
        Seconds to wait for SQLite's lock held by another connection (a report reading while
        the run commits) before the store counts as locked.

    Examples
    --------
    >>> import os, tempfile
    >>> from mlneighbors.benchmark import Store
    >>> path = os.path.join(tempfile.mkdtemp(), "results.sqlite")
    >>> with Store(path, write=True) as store:
    ...     store.protocol is None
    True
    """

    def __init__(self, path: str | os.PathLike[str], *, write: bool = False, timeout: float = 10.0) -> None:
        self.path = os.fspath(path)
        self.write = write
        self.timeout = timeout
        self._lock_fh: Any = None
        self._wal = False
        self.db: Any = None
        if not write:
            if not os.path.isfile(self.path):
                raise StoreError(f"no results store {self.path!r} (a 'benchmark run' writes one)")
            self._check_is_sqlite()
            self.db = self._open_read_only()
            try:
                self._check_sound()
                self._check_schema()
            except BaseException:
                self.close()
                raise
            return
        folder = os.path.dirname(os.path.abspath(self.path))
        exists = os.path.exists(self.path)
        if exists:
            self._check_is_sqlite()
        # the file, and its folder (where SQLite writes the WAL beside it)
        if (exists and not os.access(self.path, os.W_OK)) or (os.path.isdir(folder) and not os.access(folder, os.W_OK)):
            raise StoreError(f"results store {self.path} is read-only: a run writes every cell as it finishes; "
                             "give a writable file (a report reads a read-only store)")
        os.makedirs(folder, exist_ok=True)
        try:
            self._lock_fh = open(self.path, "a+b")  # noqa: SIM115  (held for the store's life: the run's lock)
        except OSError as exc:
            raise StoreError(f"results store {self.path} cannot be opened for writing: {_short(exc)}") from None
        if not _lock_file(self._lock_fh):
            self._lock_fh.close()
            self._lock_fh = None
            raise StoreError(f"results store {self.path} is locked: another benchmark run is writing it; wait for it "
                             "to end, or give another store")
        try:
            self.db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            # everything is read and checked before anything is written: another application's
            # database, a damaged file or a store of another version is left as it was
            self.db.execute("BEGIN IMMEDIATE")  # the write lock, at once: a locked store is found now
            self.db.execute("COMMIT")
            self._check_sound()
            self._check_schema()
            self.db.execute("PRAGMA journal_mode=WAL")
            self._wal = True
            self.db.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit survives the process's death
            self.db.executescript(_SCHEMA)
            if not self._meta_rows:
                from .. import __version__

                self._execute_many("INSERT INTO meta VALUES (?, ?)",
                                   [("schema", str(SCHEMA_VERSION)), ("mlneighbors", __version__)])
        except sqlite3.DatabaseError as exc:
            self.close()
            raise self._translate(exc) from None
        except BaseException:
            self.close()
            raise

    def _open_read_only(self) -> sqlite3.Connection:
        """A read-only connection that reads only what was committed: SQLite's locks are
        respected (a store being written waits up to ``timeout``, then counts as locked), and an
        interrupted writer's transaction is rolled back first, as SQLite itself would."""
        uri = "file:" + os.path.abspath(self.path).replace("?", "%3f").replace("#", "%23") + "?mode=ro"
        rolled_back = False
        while True:
            db = sqlite3.connect(uri, uri=True, timeout=self.timeout)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return db
            except sqlite3.DatabaseError as exc:
                db.close()
                if _hot_journal(exc) and not rolled_back:
                    self._roll_back()
                    rolled_back = True
                    continue
                raise self._translate(exc) from None

    def _roll_back(self) -> None:
        """Roll back the transaction of a writer that died (its hot journal beside the file): a
        read-write connection does it on its first read; a read-only file cannot be read then."""
        folder = os.path.dirname(os.path.abspath(self.path))
        if not (os.access(self.path, os.W_OK) and os.access(folder, os.W_OK)):
            raise StoreError(f"results store {self.path} holds a write that was never committed (a writer was "
                             "interrupted; its journal is beside the file) and is read-only here, so it cannot be "
                             "rolled back: open it once where the file and its folder are writable")
        db = sqlite3.connect(self.path, timeout=self.timeout)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from None
        finally:
            db.close()

    def _check_sound(self) -> None:
        """A damaged file (truncated, overwritten) is refused in one line before it is used."""
        try:
            result = self.db.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from None
        if result != [("ok",)]:
            problem = "; ".join(" ".join(str(r[0]).split()) for r in result[:2])
            raise StoreError(f"results store {self.path} is damaged ({problem}); use a copy of it, or run into a "
                             "new store")

    # ------------------------------------------------------------------ opening

    def _check_is_sqlite(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(16)
        except OSError as exc:
            raise StoreError(f"results store {self.path} cannot be read: {_short(exc)}") from None
        if head and head != b"SQLite format 3\x00":
            raise StoreError(f"{self.path} is not a results store (not an SQLite file); give a new file name "
                             "or a store a 'benchmark run' wrote")

    def _translate(self, exc: sqlite3.Error) -> StoreError:
        text = _short(exc)
        if "locked" in text or "busy" in text:
            return StoreError(f"results store {self.path} is locked by another process ({text}); wait for it, "
                              "or give another store")
        if "malformed" in text or "not a database" in text:
            return StoreError(f"results store {self.path} is damaged ({text}); use a copy of it, or run into a new "
                              "store")
        if "readonly" in text or "read-only" in text:
            return StoreError(f"results store {self.path} is read-only ({text}): a run writes every cell as it "
                              "finishes; give a writable file")
        if "unable to open" in text and not self.write:
            return StoreError(f"results store {self.path} cannot be read here ({text}): where its folder is "
                              "read-only, a store left with its -wal file beside it (a run that did not end) cannot "
                              "be opened; copy the folder somewhere writable")
        return StoreError(f"results store {self.path}: {text}")

    def _check_schema(self) -> None:
        """The store's layout and version, read without writing: another application's
        database (tables, none of them a store's) is refused, before anything is written."""
        from .. import __version__

        tables = {name for (name,) in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
        if "meta" not in tables:
            if tables:
                listed = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
                raise StoreError(f"{self.path} is not a results store: it is an SQLite database with other tables "
                                 f"({listed}); give a new file name or a store a 'benchmark run' wrote")
            if not self.write:
                raise StoreError(f"{self.path} is not a results store (no benchmark tables in it)")
            rows: dict[str, str] = {}
        else:
            rows = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        self._meta_rows = rows
        if not rows:
            self.meta = {"schema": str(SCHEMA_VERSION), "mlneighbors": __version__}
            return
        self.meta = rows
        if rows.get("schema") != str(SCHEMA_VERSION):
            raise StoreError(f"results store {self.path} has layout {rows.get('schema')}, which mlneighbors "
                             f"{__version__} does not read (it reads layout {SCHEMA_VERSION}); use the version "
                             f"that wrote it (mlneighbors {rows.get('mlneighbors')})")
        if self.write and rows.get("mlneighbors") != __version__:
            raise StoreError(f"results store {self.path} was written by mlneighbors {rows.get('mlneighbors')}, this "
                             f"is {__version__}: results of two versions are not mixed; run into a new store (the "
                             "report of this one still works)")

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (a writer: the WAL folded back into the file, which is left in
        rollback-journal mode until the next run) and the lock."""
        db = getattr(self, "db", None)
        if db is not None:
            if self._wal:  # between runs the store is one file (a report or a copy needs no -wal beside it)
                try:
                    db.execute("PRAGMA journal_mode=DELETE")
                except sqlite3.Error:
                    pass
            db.close()
            self.db = None  # type: ignore[assignment]
        if self._lock_fh is not None:
            self._lock_fh.close()
            self._lock_fh = None

    # ------------------------------------------------------------------ writing

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction, the unit of durability: committed whole or rolled back; a locked or
        read-only store said in one line."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise self._translate(exc) from None

    def _execute_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """``rows`` in one transaction."""
        with self._transaction():
            self.db.executemany(sql, rows)

    @property
    def protocol(self) -> dict[str, Any] | None:
        """The protocol the store's results were made under (None: an empty store)."""
        text = self.meta.get("protocol")
        if text is None:
            return None
        try:
            protocol = json.loads(text)
        except ValueError:
            protocol = None
        if not isinstance(protocol, dict) or protocol.get("kind") not in ("cv", "split"):
            raise StoreError(f"results store {self.path}: its recorded protocol cannot be read (meta 'protocol' is "
                             f"{text[:60]!r}); the store is damaged: use a copy of it, or run into a new store")
        return protocol

    def check(self, protocol: dict[str, Any], datasets: dict[str, dict[str, Any]],
              models: dict[str, dict[str, Any]]) -> None:
        """Refuse, in one line, a run whose protocol, data, folds or model parameters differ
        from those the store's results were made under; record those of the new ones.

        Parameters
        ----------
        protocol : dict
            The run's protocol (kind, folds, repeats, seed).
        datasets : dict of str to dict
            Per dataset: ``sha256``, ``folds_sha256``, ``n_samples``, ``n_features``,
            ``n_labels``, ``n_test`` and ``scale``.
        models : dict of str to dict
            Per model configuration, its parameters (JSON values).

        Raises
        ------
        StoreError
            Naming the dataset, model or protocol setting that differs.
        """
        stored = self.protocol
        if stored is not None and stored != protocol and not self.has_results():
            # a store whose runs computed nothing (refused, or stopped before the first cell)
            # holds no result of its protocol: the new run's protocol replaces it
            with self._transaction():
                for table in ("datasets", "models"):
                    self.db.execute(f"DELETE FROM {table}")
                self.db.execute("DELETE FROM meta WHERE key = 'protocol'")
            del self.meta["protocol"]
            stored = None
        if stored is not None and stored != protocol:
            said = ", ".join(f"{key} {stored.get(key)!r} here, {protocol.get(key)!r} asked"
                             for key in sorted(set(stored) | set(protocol)) if stored.get(key) != protocol.get(key))
            raise StoreError(f"results store {self.path} holds results of another protocol ({said}); results are "
                             "not mixed: run into a new store")
        for name, row in datasets.items():
            old = self.db.execute("SELECT sha256, folds_sha256, scale FROM datasets WHERE dataset = ?",
                                  (name,)).fetchone()
            if old is None:
                continue
            if old[0] != row["sha256"]:
                raise StoreError(f"results store {self.path}: dataset {name!r} is not the data its results were "
                                 f"made on (sha256 {old[0][:12]}... in the store, {row['sha256'][:12]}... now); "
                                 "results are not mixed: run into a new store")
            if old[1] != row["folds_sha256"]:
                raise StoreError(f"results store {self.path}: the folds of dataset {name!r} differ from those its "
                                 f"results were made on (fold hash {old[1][:12]}... in the store, "
                                 f"{row['folds_sha256'][:12]}... now); results are not mixed: run into a new store")
            if old[2] != row["scale"]:
                raise StoreError(f"results store {self.path}: dataset {name!r} was scaled {old[2]!r} in the store, "
                                 f"{row['scale']!r} now; results are not mixed: run into a new store")
        for name, row in datasets.items():  # the same data under another name: one dataset counted twice
            twin = self.db.execute("SELECT dataset FROM datasets WHERE sha256 = ? AND dataset != ?",
                                   (row["sha256"], name)).fetchone()
            if twin is not None:
                raise StoreError(f"results store {self.path}: dataset {name!r} holds the same data as {twin[0]!r}, "
                                 f"stored already (sha256 {row['sha256'][:12]}...): a dataset is counted once; give "
                                 f"it as {twin[0]!r} or leave it out")
        for name, params in models.items():
            old = self.db.execute("SELECT params FROM models WHERE model = ?", (name,)).fetchone()
            if old is None:
                continue
            before = json.loads(old[0])
            if before != params:
                differ = ", ".join(f"{key}={before.get(key)!r} in the store, {params.get(key)!r} now"
                                   for key in sorted(set(before) | set(params)) if before.get(key) != params.get(key))
                raise StoreError(f"results store {self.path}: model {name!r} was run with other parameters "
                                 f"({differ}); name the configuration differently or run into a new store")
        if stored is None:
            self._execute_many("INSERT INTO meta VALUES (?, ?)", [("protocol", json.dumps(protocol, sort_keys=True))])
            self.meta["protocol"] = json.dumps(protocol, sort_keys=True)
        self._execute_many(
            "INSERT OR IGNORE INTO datasets VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(name, r["sha256"], r["folds_sha256"], r["n_samples"], r["n_features"], r["n_labels"], r["n_test"],
              r["scale"]) for name, r in datasets.items()])
        self._execute_many("INSERT OR IGNORE INTO models VALUES (?, ?)",
                           [(name, json.dumps(p, sort_keys=True)) for name, p in models.items()])

    def has_results(self) -> bool:
        """Whether any cell is stored (failed ones count).

        Returns
        -------
        bool
        """
        return self.db.execute("SELECT 1 FROM results LIMIT 1").fetchone() is not None

    def start_run(self, *, seed: int, protocol: dict[str, Any], models: Sequence[str], datasets: Sequence[str],
                  metrics: Sequence[str], command: str | None) -> int:
        """A row of ``runs`` for this invocation (its start, version and machine).

        Parameters
        ----------
        seed : int
        protocol : dict
        models, datasets, metrics : sequence of str
            The run's configurations, datasets and metrics.
        command : str or None
            The command line, if any.

        Returns
        -------
        run : int
            The run's number, which its results carry.
        """
        import datetime
        import platform

        from .. import __version__

        machine = json.dumps({"host": platform.node(), "platform": platform.platform(),
                              "python": sys.version.split()[0], "cpus": os.cpu_count()})
        self._execute_many(
            "INSERT INTO runs (version, seed, protocol, models, datasets, metrics, machine, command, started) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(__version__, seed, json.dumps(protocol, sort_keys=True), json.dumps(list(models)),
              json.dumps(list(datasets)), json.dumps(list(metrics)), machine, command,
              datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))])
        return int(self.db.execute("SELECT max(run) FROM runs").fetchone()[0])

    def end_run(self, run: int, *, searches: int | None, searches_unshared: int | None) -> None:
        """The run's end time and its counts of neighbour searches.

        Parameters
        ----------
        run : int
        searches, searches_unshared : int or None
            Searches run, and searches asked for (what they would have been without sharing).
        """
        import datetime

        self._execute_many(
            "UPDATE runs SET ended = ?, searches = ?, searches_unshared = ? WHERE run = ?",
            [(datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), searches,
              searches_unshared, run)])

    def add_cell(self, run: int, dataset: str, model: str, fold: int, values: dict[str, float] | None,
                 metrics: Sequence[str], seconds: float, error: str | None = None) -> None:
        """One finished cell: a row per metric not yet stored (NULL values where it failed, and
        the reason in ``failures``), and the run's count, in one transaction.

        Parameters
        ----------
        run : int
        dataset, model : str
        fold : int
        values : dict of str to float, or None
            Per metric; None for a cell that failed.
        metrics : sequence of str
        seconds : float
        error : str, default=None
            Why it failed.
        """
        have = {m for (m,) in self.db.execute(
            "SELECT metric FROM results WHERE dataset = ? AND model = ? AND fold = ?", (dataset, model, fold))}
        rows = [(dataset, model, fold, m, None if values is None else _real(values[m]), float(seconds), run)
                for m in metrics if m not in have]
        with self._transaction():
            self.db.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            if error is not None:
                self.db.execute("INSERT OR REPLACE INTO failures VALUES (?, ?, ?, ?, ?)",
                                (dataset, model, fold, error, run))
            self.db.execute("UPDATE runs SET cells = cells + 1 WHERE run = ?", (run,))

    def forget_failures(self) -> int:
        """Delete the failed cells' rows (to compute them again).

        Returns
        -------
        cells : int
            How many cells were forgotten.
        """
        cells = self.db.execute("SELECT count(*) FROM failures").fetchone()[0]
        with self._transaction():
            self.db.execute("DELETE FROM results WHERE (dataset, model, fold) IN "
                            "(SELECT dataset, model, fold FROM failures)")
            self.db.execute("DELETE FROM failures")
        return int(cells)

    # ------------------------------------------------------------------ reading

    def done(self, metrics: Sequence[str]) -> set[tuple[str, str, int]]:
        """The cells that hold a row for every one of ``metrics``.

        Parameters
        ----------
        metrics : sequence of str

        Returns
        -------
        cells : set of (str, str, int)
            (dataset, model, fold).
        """
        marks = ",".join("?" * len(metrics))
        return {(d, m, int(f)) for d, m, f in self.db.execute(
            f"SELECT dataset, model, fold FROM results WHERE metric IN ({marks}) "
            "GROUP BY dataset, model, fold HAVING count(*) = ?", (*metrics, len(metrics)))}

    def rows(self) -> Iterator[tuple[str, str, int, str, float]]:
        """Every result, sorted.

        Yields
        ------
        row : tuple
            ``(dataset, model, fold, metric, value)``, value NaN for a failed cell.
        """
        for d, m, f, metric, v in self.db.execute(
                "SELECT dataset, model, fold, metric, value FROM results ORDER BY dataset, model, fold, metric"):
            yield d, m, int(f), metric, math.nan if v is None else float(v)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads in one read transaction: a run committing meanwhile is seen whole or not at all.

        Yields
        ------
        None
            Within the transaction.
        """
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    def provenance(self) -> dict[str, Any]:
        """Where the store's results come from, for a report to state.

        Returns
        -------
        provenance : dict
            ``store`` (the file), ``mlneighbors`` (the version that wrote it), ``protocol``
            (None for an empty store), ``datasets`` (name -> ``sha256``, ``folds_sha256``,
            shape and ``scale``), ``models`` (configuration -> parameters) and ``runs`` (each
            run's number, version, start, end, machine and command).
        """
        datasets = {row.pop("dataset"): row for row in self.table("datasets")}
        models = {row["model"]: json.loads(row["params"]) for row in self.table("models")}
        runs = []
        for row in self.table("runs"):
            try:
                machine = json.loads(row["machine"])
            except ValueError:
                machine = row["machine"]
            runs.append({"run": row["run"], "version": row["version"], "started": row["started"],
                         "ended": row["ended"], "machine": machine, "command": row["command"]})
        return {"store": os.path.abspath(self.path), "mlneighbors": self.meta.get("mlneighbors"),
                "protocol": self.protocol, "datasets": datasets, "models": models, "runs": runs}

    def table(self, name: str) -> list[dict[str, Any]]:
        """A whole table as records.

        Parameters
        ----------
        name : {"runs", "datasets", "models", "failures", "meta", "results"}

        Returns
        -------
        records : list of dict
        """
        if name not in ("runs", "datasets", "models", "failures", "meta", "results"):
            raise ValueError(f"no table {name!r} in a results store")
        cursor = self.db.execute(f"SELECT * FROM {name}")
        columns = [c[0] for c in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor]


def _real(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def read_store(path: str | os.PathLike[str]) -> tuple[list[tuple[str, str, int, str, float]], dict[str, Any]]:
    """The results of a store and their provenance, read in one transaction: what
    :func:`~mlneighbors.benchmark.build_report` takes (``build_report(rows,
    provenance=provenance)``).

    Parameters
    ----------
    path : str or path-like
        The store, opened read-only; a store being written is read as last committed.

    Returns
    -------
    rows : list of tuple
        The rows of :func:`read_rows`.
    provenance : dict
        What :meth:`Store.provenance` says of them.

    Examples
    --------
    >>> import os, tempfile
    >>> from mlneighbors.benchmark import Store, read_store
    >>> path = os.path.join(tempfile.mkdtemp(), "empty.sqlite")
    >>> Store(path, write=True).close()
    >>> read_store(path)[1]["protocol"] is None
    True
    """
    with Store(path) as store, store.snapshot():
        return list(store.rows()), store.provenance()


def read_rows(path: str | os.PathLike[str]) -> list[tuple[str, str, int, str, float]]:
    """The results of a store, sorted: what :func:`~mlneighbors.benchmark.build_report` reads.

    Parameters
    ----------
    path : str or path-like
        A results store (opened read-only).

    Returns
    -------
    rows : list of tuple
        ``(dataset, model, fold, metric, value)``, value NaN for a cell that ran and failed.

    Examples
    --------
    >>> import os, tempfile
    >>> from mlneighbors.benchmark import Store, read_rows
    >>> path = os.path.join(tempfile.mkdtemp(), "empty.sqlite")
    >>> Store(path, write=True).close()
    >>> read_rows(path)
    []
    """
    with Store(path) as store:
        return list(store.rows())
