"""The Dask backend on a real cluster: the index, the models, faults, the command line.

One module so that one cluster (two worker processes of one thread, as a small real
deployment) serves every test; each test leaves it with two workers.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import mlneighbors
from mlneighbors import BKNN, MLkNN
from mlneighbors.cli import main
from mlneighbors.neighbors import check_index, get_index, loo_kneighbors

from .models.conftest import corner_data
from .models.test_backends import MODELS, _with_backend
from .neighbors._twins import tricky_data, tricky_queries, twin_kneighbors

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

pytestmark = pytest.mark.filterwarnings("ignore:.*no positive training example:UserWarning")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client


def _as(kind, X, chunks=17):
    if kind == "csr":
        return sp.csr_matrix(X)
    if kind == "dask":
        return da.from_array(X, chunks=(chunks, -1))
    if kind == "dask-csr":
        return da.from_array(sp.csr_matrix(X), chunks=(chunks, -1), asarray=False)
    return X


def _assert_same(got, want):
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])


# ------------------------------------------------------------------ the index


@pytest.mark.parametrize("kind", ["dense", "csr", "dask", "dask-csr"])
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("n_shards", [None, 7])  # None: one per worker thread (2, not dividing 97); 7 > workers
def test_identical_to_exact(client, rng, kind, metric, n_shards):
    X = tricky_data(rng, 97, 4, integer=True)  # duplicates and exact ties across shard boundaries
    Q = tricky_queries(rng, X, 25)
    data = _as(kind, X)
    index = get_index("dask", metric=metric, n_shards=n_shards).build(data)
    # in-process reference in the same format (sparse sums may differ from dense ones by ulps)
    local, local_Q = (sp.csr_matrix(X), sp.csr_matrix(Q)) if kind.endswith("csr") else (X, Q)
    exact = get_index("exact", metric=metric).build(local)
    assert index.exact and index.n_samples_fit_ == 97 and index.n_shards_ == (n_shards or 2)
    for k in (1, 97):
        _assert_same(index.query(_as(kind, Q, chunks=10), k), exact.query(local_Q, k))
    # leave-one-out: the indexed rows themselves are read from the shards; a copy is sent
    want = loo_kneighbors(exact, local, 8)
    _assert_same(loo_kneighbors(index, data, 8), want)
    _assert_same(loo_kneighbors(index, _as(kind, X.copy()), 8), want)


def test_equal_to_the_loop_twin(client, rng):
    X = tricky_data(rng, 60, 3, integer=True)
    Q = tricky_queries(rng, X, 12)
    index = get_index("dask", n_shards=4).build(X)
    np.testing.assert_array_equal(index.query(Q, 9)[1], twin_kneighbors(X, Q, 9)[1])
    twin = twin_kneighbors(X, X, 6, exclude=np.arange(60))[1][:, :5]
    np.testing.assert_array_equal(loo_kneighbors(index, X, 5)[1], twin)


def test_a_search_on_the_cluster_reports_its_progress(client, rng):
    """A fit on a cluster sends progress events (the README's Dask example shows them as bars):
    one task per wait on the workers, opened, advanced to its total, closed."""
    from mlneighbors._progress import listen

    X = rng.normal(size=(300, 4))
    events = []
    with listen(events.append):
        MLkNN(5, backend="dask").fit(X, X[:, :3] > 0)
    assert {"Dask build", "Dask search"} <= {e.stage for e in events}
    for task_id in {e.task_id for e in events}:
        mine = [e for e in events if e.task_id == task_id]
        assert mine[0].done == 0 and mine[-1].closed and mine[-1].done == mine[-1].total > 0
        assert [e.done for e in mine] == sorted(e.done for e in mine)  # never backwards


def test_many_blocks_and_column_chunks(client, rng):
    X = rng.standard_normal((300, 6))
    Q = rng.standard_normal((200, 6))
    index = get_index("dask", n_shards=3).build(da.from_array(X, chunks=(50, 2)))
    with mlneighbors.config_context(working_memory=0.01):  # blocks of a few rows: many merge trees
        _assert_same(index.query(da.from_array(Q, chunks=(64, 3)), 5), get_index("exact").build(X).query(Q, 5))
        _assert_same(index.query(Q, 5), get_index("exact").build(X).query(Q, 5))


def test_a_pickled_index_is_a_handle_and_a_clone_shares_the_client(client, rng):
    X = rng.standard_normal((50, 3))
    index = get_index("dask", client=client, n_shards=2).build(X)
    again = pickle.loads(pickle.dumps(index))
    _assert_same(again.query(X[:5], 4), index.query(X[:5], 4))
    copy = clone(index)
    assert copy.client is client and not hasattr(copy, "n_samples_fit_")
    assert get_index("dask", inner="hnswlib").exact is False


@pytest.mark.parametrize("inner", ["exact", "hnswlib"])
def test_check_index_passes(client, inner):
    pytest.importorskip(inner if inner != "exact" else "numpy")
    index = get_index("dask", n_shards=3, inner=inner)
    results = check_index(index)
    skipped = {name for name, outcome in results.items() if outcome != "passed"}
    # its shards rebuild after a live model's update: it does not declare adds_rows
    assert skipped == ({"add_rows"} if inner == "exact" else {"exact", "prefix", "add_rows"}), results


def test_bad_input_is_named(client, rng):
    X = rng.standard_normal((20, 3))
    with pytest.raises(ValueError, match="n_shards must be >= 1"):
        get_index("dask", n_shards=0).build(X)
    with pytest.raises(ValueError, match="inner must be one of"):
        get_index("dask", inner="dask").build(X)
    with pytest.raises(TypeError, match="client must be a distributed.Client"):
        get_index("dask", client="tcp://nowhere").build(X)
    index = get_index("dask", n_shards=2).build(X)
    with pytest.raises(ValueError, match=r"k=21 is larger than the number of indexed points \(20\)"):
        index.query(X, 21)
    with pytest.raises(ValueError, match="Q has 2 features"):
        index.query(da.zeros((4, 2)), 1)
    unknown = da.from_array(X, chunks=5)
    unknown = unknown[unknown[:, 0] > 0]
    with pytest.raises(ValueError, match="unknown chunk sizes; call X.compute_chunk_sizes"):
        get_index("dask").build(unknown)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):  # found on a worker, raised here
        get_index("dask", n_shards=2).build(da.from_array(X, chunks=5))


def test_no_client_is_a_clear_error():
    code = (
        "import numpy as np; from mlneighbors import MLkNN\n"
        "try:\n"
        "    MLkNN(backend='dask').fit(np.eye(4), np.eye(4, dtype=int))\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert "needs a Dask client" in out.stdout and "LocalCluster" in out.stdout and "Client('tcp://" in out.stdout


def _kill_a_busy_worker(client, pids, record):
    """While every worker is paused (SIGSTOP), wait until the scheduler has handed tasks of the
    query to one, kill that one (SIGKILL) and let the others go on (SIGCONT): the tasks it held
    had not run, so the query cannot have finished before the kill."""
    try:
        busy = []
        while not busy and "error" not in record:
            busy = [address for address, keys in client.processing().items() if keys]
            time.sleep(0.005)  # polling the scheduler's state, not waiting for time to pass
        if busy:
            record["victim"] = busy[0]
            os.kill(pids[busy[0]], signal.SIGKILL)
    finally:
        for address, pid in pids.items():
            if address != record.get("victim"):
                os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("kind", ["dense", "dask"])
def test_a_worker_killed_mid_query_loses_nothing(client, rng, kind):
    X = rng.standard_normal((3_000, 16))
    Q = rng.standard_normal((2_000, 16))
    want = get_index("exact").build(X).query(Q, 10)
    index = get_index("dask", n_shards=2).build(_as(kind, X, chunks=750))  # a shard on each worker
    pids = client.run(os.getpid)  # worker address -> process id
    record = {}
    for pid in pids.values():  # paused before the query: none of its tasks can run before the kill
        os.kill(pid, signal.SIGSTOP)
    killer = threading.Thread(target=_kill_a_busy_worker, args=(client, pids, record))
    killer.start()
    try:
        with mlneighbors.config_context(working_memory=1):  # many blocks, on both workers
            got = index.query(Q, 10)
    except BaseException:
        record["error"] = True
        raise
    finally:
        killer.join()
    assert record["victim"] in pids  # a worker holding tasks of the query died before they ran
    with pytest.raises(ProcessLookupError):
        os.kill(pids[record["victim"]], 0)
    _assert_same(got, want)
    client.wait_for_workers(2, timeout=60)  # the nanny restarts it for the next tests


def test_a_cluster_without_workers_fails_instead_of_hanging(rng):
    import dask

    X = rng.standard_normal((30, 3))
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as own:
        index = get_index("dask", client=own).build(X)
        cluster.scale(0)
        while own.nthreads():
            time.sleep(0.05)
        with dask.config.set({"distributed.scheduler.no-workers-timeout": "1s"}):
            with pytest.raises(RuntimeError, match="has had no worker for 1 s"):  # the setting, read
                index.query(X, 3)


# ------------------------------------------------------------------ the models


@pytest.mark.parametrize("model", MODELS)
def test_every_model_on_the_cluster_predicts_as_exact(client, rng, model):
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    reference = _with_backend(clone(model), "exact").fit(X, Y)
    on_cluster = _with_backend(clone(model), "dask").fit(X, Y)
    np.testing.assert_array_equal(on_cluster.predict(Q), reference.predict(Q))
    np.testing.assert_allclose(on_cluster.predict_proba(Q), reference.predict_proba(Q), rtol=1e-9, atol=1e-12)
    lazy = on_cluster.predict(da.from_array(Q, chunks=10))
    assert isinstance(lazy, da.Array) and lazy.chunks == ((10, 10, 4), (Y.shape[1],))
    np.testing.assert_array_equal(lazy.compute(), reference.predict(Q))


def test_lazy_outputs_have_the_methods_chunks_and_dtypes(client, rng):
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    Qd = da.from_array(sp.csr_matrix(Q), chunks=(7, -1), asarray=False)  # CSR chunks
    for model, method in [(BKNN(3, backend="dask"), "decision_function"), (MLkNN(3, backend="dask"), "predict_proba")]:
        want = getattr(model.fit(X, Y), method)(Q)
        lazy = getattr(model, method)(Qd)
        assert lazy.chunks == ((7, 7, 7, 3), (Y.shape[1],)) and lazy.dtype == want.dtype == np.float64
        np.testing.assert_allclose(lazy.compute(), want, rtol=1e-12)
    with pytest.raises(ValueError, match=r"predict\(X, sparse_output=True\) takes in-memory queries"):
        MLkNN(3, backend="dask").fit(X, Y).predict(Qd, sparse_output=True)
    y = np.argmax(Y[:, 1:], axis=1)  # a 1-D target: predict gives (n,) classes
    lazy = MLkNN(3, backend="dask").fit(X, y).predict(da.from_array(Q, chunks=10))
    assert lazy.chunks == ((10, 10, 4),) and lazy.dtype == y.dtype
    np.testing.assert_array_equal(lazy.compute(), MLkNN(3).fit(X, y).predict(Q))


def test_fit_on_a_dask_array_keeps_the_rows_on_the_cluster(client, rng):
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    Xd = da.from_array(X, chunks=(9, -1))
    model = MLkNN(4, backend="dask").fit(Xd, Y)
    reference = MLkNN(4).fit(X, Y)
    assert model.n_features_in_ == 4
    np.testing.assert_array_equal(model.kneighbors()[1], reference.kneighbors()[1])
    np.testing.assert_array_equal(model.predict(Q), reference.predict(Q))
    np.testing.assert_array_equal(model.predict(da.from_array(Q, chunks=5)).compute(), reference.predict(Q))
    with pytest.raises(ValueError, match=r"dask array X: fit it with backend='dask'.*X.compute\(\)"):
        MLkNN(4).fit(Xd, Y)
    with pytest.raises(ValueError, match=r"BLDA takes rows in memory .*not a dask array: pass X.compute\(\)"):
        mlneighbors.BLDA().fit(Xd, Y)


def test_a_model_fitted_on_a_dask_array_is_refused_at_save(client, rng, tmp_path):
    """Its training rows are on the cluster: save says so and writes nothing; the same model
    fitted on rows in memory saves, and the loaded one searches on the cluster again."""
    pytest.importorskip("skops.io")
    from sklearn.pipeline import Pipeline

    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    path = tmp_path / "model.skops"
    on_cluster = MLkNN(4, backend="dask").fit(da.from_array(X, chunks=(9, -1)), Y)
    for model, what in ((on_cluster, "MLkNN"), (Pipeline([("knn", on_cluster)]), "MLkNN \\(parameter 'knn'\\)")):
        with pytest.raises(ValueError, match=f"cannot save {what}: it was fitted on a dask array.*X.compute"):
            mlneighbors.save(model, path)
        assert list(tmp_path.iterdir()) == []
    in_memory = MLkNN(4, backend="dask").fit(X, Y)
    mlneighbors.save(in_memory, path)
    np.testing.assert_array_equal(mlneighbors.load(path).predict(Q), MLkNN(4).fit(X, Y).predict(Q))


# ------------------------------------------------------------------ the command line


def test_cli_on_a_running_cluster_matches_in_process(client, shared_data, capsys):
    argv = ["evaluate", "emotions", "--model", "mlknn", "--cv", "2", "--metrics", "hamming_loss,micro_f1",
            "--data-home", str(shared_data), "--format", "json", "--quiet"]
    assert main(argv) == 0
    want = [r["value"] for r in json.loads(capsys.readouterr().out)["results"][:2]]
    assert main(argv + ["--backend", "dask", "--scheduler", client.scheduler.address]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["backend"] == "dask"
    got = [r["value"] for r in out["results"][:2]]
    assert got == want


def test_cli_starts_and_closes_a_local_cluster(shared_data, capsys):
    argv = ["evaluate", "emotions", "--model", "brknn", "--split", "--metrics", "hamming_loss",
            "--data-home", str(shared_data), "--format", "json", "--quiet"]
    assert main(argv) == 0
    want = json.loads(capsys.readouterr().out)["results"][0]["value"]
    before = distributed.default_client()
    assert main(argv + ["--backend", "dask", "--workers", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["value"] == want
    assert distributed.default_client() is before  # the run's own client is gone, the module's is back


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--workers", "2"], "--workers needs --backend dask"),
        (["--backend", "exact", "--scheduler", "tcp://x:1"], "--scheduler needs --backend dask"),
        (["--backend", "dask"], "--backend dask needs --scheduler ADDRESS"),
        (["--backend", "dask", "--workers", "0"], "--workers must be at least 1"),
    ],
)
def test_cli_cluster_flags_are_checked_first(extra, needle, capsys):
    assert main(["evaluate", "emotions", "--model", "mlknn", *extra]) == 2
    assert needle in capsys.readouterr().err


def test_cli_fit_refuses_the_dask_backend(tmp_path, capsys):
    out = tmp_path / "model.skops"
    assert main(["fit", "mlknn", "emotions", "--out", str(out), "--backend", "dask"]) == 2
    assert "--backend dask is for evaluate, compare and reproduce" in capsys.readouterr().err
    assert not out.exists()


# ------------------------------------------------------------------ an explicit client


def _without_clients(obj):
    """Pickle ``obj``, failing on any distributed.Client met on the way; the bytes."""
    import io

    found = []

    class Watcher(pickle.Pickler):
        def persistent_id(self, value):
            if isinstance(value, distributed.Client):
                found.append(value)
            return None

    buffer = io.BytesIO()
    Watcher(buffer).dump(obj)
    assert found == []
    return buffer.getvalue()


# runs where Dask has no current client at all: whatever works used the explicit one
_EXPLICIT = """
import pickle, sys
import numpy as np
import dask.array as da
import distributed
from sklearn.base import clone
import mlneighbors
from mlneighbors import BKNN, MLkNN
from mlneighbors.model_selection import cross_validate

if __name__ == "__main__":
    data = np.load(sys.argv[2])
    X, Y, Q = data["X"], data["Y"], data["Q"]
    with distributed.Client(sys.argv[1], set_as_default=False) as client:
        try:
            distributed.default_client()
            raise SystemExit("there is a current client")
        except ValueError:
            pass
        out = {}
        for model in (MLkNN(3, backend="dask", backend_params={"client": client}),
                      BKNN(3, backend="dask", backend_params={"client": client})):
            name = type(model).__name__
            model.fit(da.from_array(X, chunks=(15, -1)) if name == "MLkNN" else X, Y)
            Qd = da.from_array(Q, chunks=(10, -1))
            method = "predict_proba" if name == "MLkNN" else "decision_function"
            out[name + "-predict"] = model.predict(Q)
            out[name + "-lazy-predict"] = client.compute(model.predict(Qd)).result()
            out[name + "-lazy-" + method] = client.compute(getattr(model, method)(Qd)).result()
        model = MLkNN(3, backend="dask", backend_params={"client": client, "n_shards": 3}).fit(X, Y)
        assert clone(model).backend_params["client"] is client  # a clone shares the client
        result = cross_validate(model, X, Y, cv=2, metrics=["hamming_loss"], random_state=0)
        out["cv"] = np.array([result.mean["hamming_loss"]])
        again = pickle.loads(pickle.dumps(model))
        assert again.backend_params == {"client": None, "n_shards": 3}  # the client is never kept
        try:
            again.predict(Q)
            raise SystemExit("a model without a client predicted")
        except ValueError as exc:
            print(exc)
        again.set_params(backend_params={"client": client, "n_shards": 3})
        out["unpickled"] = again.predict_proba(Q)
        with client.as_current():
            out["unpickled-current"] = pickle.loads(pickle.dumps(model)).predict_proba(Q)
        np.savez(sys.argv[3], **out)
"""


def test_an_explicit_client_without_a_current_one(client, rng, tmp_path):
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    np.savez(tmp_path / "data.npz", X=X, Y=Y, Q=Q)
    script = tmp_path / "explicit.py"
    script.write_text(_EXPLICIT)
    run = subprocess.run([sys.executable, str(script), client.scheduler.address, str(tmp_path / "data.npz"),
                          str(tmp_path / "out.npz")], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run.returncode == 0, run.stderr[-3000:]
    # the unpickled model, with no current client, said what to do
    assert "needs a Dask client" in run.stdout and "saved or pickled: a client is never kept" in run.stdout
    assert "model.set_params(backend_params={'client': client})" in run.stdout
    got = np.load(tmp_path / "out.npz")
    for model in (MLkNN(3), BKNN(3)):
        name = type(model).__name__
        model.fit(X, Y)
        np.testing.assert_array_equal(got[name + "-predict"], model.predict(Q))
        np.testing.assert_array_equal(got[name + "-lazy-predict"], model.predict(Q))
        method = "predict_proba" if name == "MLkNN" else "decision_function"
        np.testing.assert_allclose(got[name + "-lazy-" + method], getattr(model, method)(Q), rtol=1e-12)
    want = MLkNN(3).fit(X, Y).predict_proba(Q)
    np.testing.assert_array_equal(got["unpickled"], want)
    np.testing.assert_array_equal(got["unpickled-current"], want)
    result = mlneighbors.model_selection.cross_validate(MLkNN(3), X, Y, cv=2, metrics=["hamming_loss"], random_state=0)
    assert got["cv"][0] == result.mean["hamming_loss"]


def test_an_explicit_client_saves_and_pickles_without_it(client, rng, tmp_path):
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    with distributed.Client(client.scheduler.address, set_as_default=False) as own:
        model = MLkNN(3, backend="dask", backend_params={"client": own}).fit(X, Y)
        lazy = model.predict_proba(da.from_array(Q, chunks=(10, -1)))
        want = MLkNN(3).fit(X, Y).predict_proba(Q)
        np.testing.assert_array_equal(own.compute(lazy).result(), want)  # the model enters the graph, not `own`
        np.testing.assert_array_equal(lazy.compute(), want)  # through the current client too
        _without_clients(model)
        _without_clients(model._get_index())  # the built index: a handle without its client
        assert model.backend_params["client"] is own  # saving changed nothing
        mlneighbors.save(model, tmp_path / "m.skops")
        for loaded in (mlneighbors.load(tmp_path / "m.skops"), pickle.loads(pickle.dumps(model))):
            assert loaded.backend_params == {"client": None}
            np.testing.assert_array_equal(loaded.predict_proba(Q), want)  # on the current client
        index = get_index("dask", client=own, n_shards=2).build(X)
        again = pickle.loads(_without_clients(index))
        assert again.client is None
        _assert_same(again.query(Q, 4), index.query(Q, 4))


def test_a_closed_client_is_named(client, rng):
    X, Y, Q = corner_data(rng, "empty", n_features=4, continuous=True)
    own = distributed.Client(client.scheduler.address, set_as_default=False)
    fitted = MLkNN(3, backend="dask", backend_params={"client": own}).fit(X, Y)
    name = own.id
    own.close()
    needle = rf"the Dask client {name} \(scheduler {client.scheduler.address}\) is closed, not running.*Pass a running"
    with pytest.raises(ValueError, match=needle):
        fitted.predict(Q)
    with pytest.raises(ValueError, match=needle):
        MLkNN(3, backend="dask", backend_params={"client": own}).fit(X, Y)
    with pytest.raises(ValueError, match=needle):
        get_index("dask", client=own).build(X)


def test_a_client_whose_scheduler_is_gone_is_named(rng):
    import dask

    X = rng.standard_normal((3000, 20))
    Y = (X[:, :3] > 0).astype(int)
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        # the cluster goes down during a search: its worker is paused (SIGSTOP) before the
        # search starts, so none of the search's tasks can finish before the cluster is gone
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, protocol="tcp",
                                           dashboard_address=None)
        address = cluster.scheduler_address
        own = distributed.Client(address, set_as_default=False)
        model = MLkNN(3, backend="dask", backend_params={"client": own}).fit(X, Y)
        pids = list(own.run(os.getpid).values())
        record = {}

        def stop_when_busy():
            try:
                while not any(own.processing().values()) and "done" not in record:
                    time.sleep(0.005)  # polling the scheduler's state, not waiting for time to pass
                record["stopped"] = "done" not in record
            finally:
                for pid in pids:
                    os.kill(pid, signal.SIGKILL)  # the paused worker goes down with its cluster
                cluster.close()

        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        stopper = threading.Thread(target=stop_when_busy)
        stopper.start()
        try:
            with pytest.raises((RuntimeError, ValueError), match=rf"the Dask client {own.id} \(scheduler {address}\)"):
                model.predict(X)
        finally:
            record["done"] = True
            stopper.join()
        assert record["stopped"]  # the cluster went down while the search's tasks waited
        # afterwards nothing listens there: an error after at most the connect timeout, the
        # client still reconnecting or given up (closed)
        with pytest.raises(ValueError, match=rf"the Dask client {own.id} \(scheduler {address}\) is "
                                             r"(closed|connecting), not running"):
            model.predict(X[:5])


def test_cli_scheduler_where_nothing_listens(capsys):
    import socket

    import dask

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{free.getsockname()[1]}"
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main(["evaluate", "emotions", "--model", "mlknn", "--backend", "dask", "--scheduler", address]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"mlneighbors evaluate: --scheduler {address}: no Dask scheduler")


def _clustered(n, seed=0):
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((20, 8)) * 3
    return C[rng.integers(0, 20, n)] + rng.standard_normal((n, 8))


@pytest.mark.parametrize("kind", ["numpy", "dask"])
def test_an_approximate_inner_index_calibrates_every_shard_and_reports_the_recall(client, kind):
    """Shards of HNSW on the workers, each calibrated to the recall on its own rows; the
    sharded search's recall measured on a sample (exact neighbours shard by shard on the
    workers) agrees with an independent measurement over every row."""
    pytest.importorskip("hnswlib")
    X = _clustered(3000)
    Y = (X[:, :4] > 0).astype(int)
    params = {"client": client, "inner": "hnswlib", "inner_params": {"recall": 0.9}, "n_shards": 3}
    model = MLkNN(10, backend="dask", backend_params=params).fit(_as(kind, X, chunks=700), Y)
    index = model._index
    assert model.backend_ == "dask" and not index.exact and model.recall_ == index.recall_
    shard_recalls = client.gather(client.map(lambda s: (s.index.recall_, s.index.recall_k), index._shards))
    assert all(r >= 0.9 and k == 10 for r, k in shard_recalls)  # calibrated, at the model's k
    exact = loo_kneighbors(get_index("exact").build(X), X, 10)[0]
    dist, idx = model.kneighbors()
    assert not (idx == np.arange(len(X))[:, None]).any()
    rows = (dist <= exact[:, -1:]).sum(axis=1) / 10
    # recall_ is a mean over 1,000 sampled rows: within 4 standard errors of the mean over all
    assert abs(rows.mean() - model.recall_) <= 4 * rows.std() * np.sqrt(1 / 1000 + 1 / len(X)) + 1e-9
    assert rows.mean() >= 0.85
    # the share of queries below one half, measured on the same sample: within 4 standard errors
    low = (rows < 0.5).mean()
    assert model.low_recall_share_ == index.low_recall_share_
    assert abs(low - model.low_recall_share_) <= 4 * np.sqrt(max(low * (1 - low), 1e-3) * (1 / 1000 + 1 / len(X)))
    local = MLkNN(10, backend="hnswlib", backend_params={"recall": 0.9}).fit(X, Y)
    assert (local.predict(X[:500]) == model.predict(X[:500])).mean() > 0.97


# ------------------------------------------------------------------ live models


@pytest.mark.parametrize("model", ["mlknn", "brknn"])
def test_live_updates_on_the_cluster_equal_a_refit(client, model):
    """partial_fit and forget with backend="dask": the same model as a refit on the cluster."""
    from mlneighbors import BRkNN

    from .models.test_live import _assert_same_state, _interleave

    cls = {"mlknn": MLkNN, "brknn": BRkNN}[model]
    for live, refit, X in _interleave(lambda: cls(4, backend="dask"), steps=2):
        _assert_same_state(live, refit, X[:9])


def test_live_updates_refuse_rows_on_the_cluster(client, rng):
    X = rng.standard_normal((40, 4))
    Y = (X[:, :3] > 0).astype(int)
    model = MLkNN(4, backend="dask").fit(da.from_array(X, chunks=(20, -1)), Y)
    with pytest.raises(ValueError, match="fitted on a dask array"):
        model.forget([3])
