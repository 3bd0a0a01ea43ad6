"""Backend names, parameters and metrics: get_index and resolve_backend."""

import numpy as np
import pytest

from mlneighbors.neighbors import (
    BACKENDS,
    ExactIndex,
    HnswlibIndex,
    NeighborIndex,
    ShardedIndex,
    get_capabilities,
    get_index,
    resolve_backend,
)


def test_registered_names():
    # the registry is the table of mlneighbors._backends, every name a class of the protocol
    from mlneighbors._backends import BACKEND_PATHS

    assert list(BACKENDS) == list(BACKEND_PATHS) and BACKENDS["exact"] is ExactIndex
    assert {"exact", "auto"} <= set(BACKENDS)  # the default, and what the command line suggests
    for name, cls in BACKENDS.items():
        index = get_index(name)
        assert isinstance(index, cls) and isinstance(index, NeighborIndex) and cls.name == name
        assert index.metric == get_capabilities(index).metrics[0]  # its first declared metric
        assert not hasattr(index, "n_samples_fit_")  # unbuilt
    # dask: exact with its default inner index; auto: not exact until it has picked
    assert get_index("dask").exact and not get_index("auto").exact


def test_get_index_documents_every_registered_backend():
    """Issue 47, item 15: the docstring of ``name`` lists every name ``get_index`` takes (it had
    no "faiss-union", the one ``"auto"`` picks)."""
    doc = get_index.__doc__.split("Parameters")[1].split("metric :")[0]
    assert [name for name in BACKENDS if f'"{name}"' not in doc] == []


def test_get_index_passes_parameters():
    index = get_index("hnswlib", metric="cosine", ef=77)
    assert isinstance(index, HnswlibIndex) and index.ef == 77 and index.metric == "cosine"
    assert get_index().get_params()["precision"] == "float32"


def test_unknown_backend_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"Unknown backend 'annoy'; valid backends are \['auto', 'dask', 'exact', 'fa"):
        get_index("annoy")
    with pytest.raises(ValueError, match="Unknown backend"):
        resolve_backend("annoy")


def test_unknown_metric_and_unsupported_metric():
    valid = r"valid metrics are \['euclidean', 'cosine', 'manhattan'\]"
    with pytest.raises(ValueError, match=r"Unknown metric 'minkowski'; " + valid):
        get_index("exact", metric="minkowski")
    supports = r"it supports \['euclidean', 'cosine'\]"
    with pytest.raises(ValueError, match=r"backend 'hnswlib' does not support metric='manhattan'; " + supports):
        get_index("hnswlib", metric="manhattan")
    with pytest.raises(ValueError, match="does not support metric='manhattan'"):
        get_index("faiss-ivf", metric="manhattan")
    get_index("pynndescent", metric="manhattan")  # supported there
    # set after construction: checked at build, before any library is imported
    index = HnswlibIndex(metric="manhattan")
    with pytest.raises(ValueError, match="does not support metric='manhattan'"):
        index.build(np.eye(2))


def test_unknown_parameter():
    with pytest.raises(TypeError, match=r"backend 'exact' got unexpected parameter\(s\) \['ef'\]"):
        get_index("exact", ef=10)


def test_bad_parameter_values_fail_at_build():
    for index, match in [
        (ExactIndex(precision="float16"), "precision"),
        (ExactIndex(sparse_strategy="magic"), "sparse_strategy"),
        (ExactIndex(working_memory=0), "working_memory"),
        (ExactIndex(n_jobs=0), "n_jobs"),
        (get_index("faiss-ivf", nprobe=0), "nprobe"),
        (get_index("hnswlib", ef=0), "ef"),
        (get_index("faiss-hnsw", M=1), "M"),
        (get_index("pynndescent", epsilon=-1.0), "epsilon"),
    ]:
        with pytest.raises(ValueError, match=match):
            index.build(np.eye(3))


def test_resolve_backend_names_and_none():
    assert isinstance(resolve_backend(None), ExactIndex)
    index = resolve_backend("exact", "cosine", {"working_memory": 8})
    assert index.metric == "cosine" and index.working_memory == 8


def test_resolve_backend_copies_objects_and_applies_params():
    proto = ExactIndex(metric="cosine")
    index = resolve_backend(proto, "cosine", {"n_jobs": 1})
    assert index is not proto and index.n_jobs == 1 and proto.n_jobs is None
    assert resolve_backend(proto, None).metric == "cosine"  # None accepts the object's metric
    sharded = resolve_backend(ShardedIndex(ExactIndex(), 3), "euclidean")
    assert isinstance(sharded, ShardedIndex)
    with pytest.raises(ValueError, match="has metric='cosine' but metric='euclidean' was requested"):
        resolve_backend(proto, "euclidean")


class Plain:
    """A user backend without scikit-learn's get_params / set_params."""

    metric = "euclidean"
    exact = True

    def build(self, X):
        return self

    def query(self, Q, k):
        raise NotImplementedError


def test_resolve_backend_plain_objects():
    plain = Plain()
    assert isinstance(resolve_backend(plain), Plain) and resolve_backend(plain) is not plain
    with pytest.raises(ValueError, match="has no set_params"):
        resolve_backend(plain, "euclidean", {"x": 1})
    with pytest.raises(TypeError, match="object with build"):
        resolve_backend(object())
    with pytest.raises(TypeError, match="object with build"):
        resolve_backend(3)


def test_the_registry_imports_a_backend_when_it_is_looked_up():
    from mlneighbors.neighbors._backend_registry import _Registry

    registry = _Registry({"json-decoder": "json:JSONDecoder", "exact": "._exact:ExactIndex"})
    assert list(registry) == ["json-decoder", "exact"] and len(registry) == 2
    assert "json:JSONDecoder" in repr(registry)  # nothing imported to show it
    import json

    assert registry["json-decoder"] is json.JSONDecoder and registry["exact"] is ExactIndex
    with pytest.raises(KeyError):
        registry["annoy"]


def _imports_of_the_neighbors_package():
    """module -> the modules of mlneighbors.neighbors it imports, and the functions that import
    one of them (read from the source, not run); a subpackage's modules by their dotted name
    (``_approximate._faiss``), the subpackage's ``__init__`` by the subpackage's."""
    import ast
    from pathlib import Path

    import mlneighbors.neighbors as package

    root = Path(package.__file__).parent
    graph, hidden = {}, []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts == ["__init__"]:
            continue
        is_init = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_init else parts)
        where = parts[:-1]  # the package the module's relative imports start from
        tree = ast.parse(path.read_text())
        graph[name] = set()
        functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        inside = {id(n) for f in functions for n in ast.walk(f) if n is not f}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.level >= 1):
                continue
            if node.level > len(where) + 1:
                continue  # above mlneighbors.neighbors: not one of its modules
            base = where[: len(where) - (node.level - 1)]
            if node.module:  # from ._x import ... / from .._x import ...
                names = [".".join([*base, node.module])]
            else:  # from . import _x
                names = [".".join([*base, alias.name]) for alias in node.names]
            graph[name].update(names)
            if id(node) in inside:
                hidden.append(f"{name} imports {names} inside a function (line {node.lineno})")
    return graph, hidden


def test_no_import_circle_and_none_hidden_in_a_function():
    graph, hidden = _imports_of_the_neighbors_package()
    assert hidden == []
    # depth-first search for a cycle among the package's own modules
    state = {}

    def visit(module, path):
        state[module] = "open"
        for other in sorted(graph.get(module, ())):
            if state.get(other) == "open":
                raise AssertionError(" -> ".join(path + [other]))
            if other not in state:
                visit(other, path + [other])
        state[module] = "done"

    for module in graph:
        if module not in state:
            visit(module, [module])
    assert {"_dask", "_backend_registry", "_auto", "_cache", "_approximate._faiss"} <= set(graph)
    assert "_dask" not in graph["_backend_registry"] and "_backend_registry" in graph["_dask"]
    assert "_approximate._shared" in graph["_approximate._faiss"]
