"""
The "torch" backend: the exact search through PyTorch
=====================================================

``backend="torch"`` runs the exact engine's design with the GEMM and the candidate selection on
a PyTorch device and returns the same neighbours as ``"exact"``, ties included. It is meant for
a GPU (``backend_params={"device": "cuda"}``) and needs PyTorch (the ``gpu`` extra; the ``docs``
extra does not install it). With PyTorch and no GPU, this example runs it on ``device="cpu"``:
it shows that the two backends agree, and the times below compare two CPU implementations, not
a GPU. Without PyTorch it runs only ``"exact"``, compares nothing and says so: the output below
says which of the two this build of the page did. ``benchmarks/gpu.py --device cuda`` measures
the backend on a GPU.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from mlneighbors import MLkNN
from mlneighbors.neighbors import get_index, loo_kneighbors

try:
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
except ImportError:  # the gpu extra installs it
    torch, device = None, None
if torch is None:
    print("PyTorch is not installed here: only \"exact\" runs below, nothing is compared")
    print("(the gpu extra installs it: pip install 'mlneighbors[gpu]')")
else:
    print("device:", device, "(no GPU here)" if device == "cpu" else "")

# %%
# Same neighbours, row for row
# ----------------------------
# Generated data: 10,000 training rows and 2,000 queries in 64 dimensions, k = 10, plus rows
# with exact ties (duplicates), where only the tie rule (lower row first) decides the order.

rng = np.random.default_rng(0)
X = rng.normal(size=(10_000, 64))
X[1000:1100] = X[:100]  # duplicates: distance ties
Q = rng.normal(size=(2_000, 64))

timings = {}
results = {}
for name, params in [("exact", {}), ("torch", {"device": device})]:
    if name == "torch" and torch is None:
        continue
    start = time.perf_counter()
    index = get_index(name, **params).build(X)
    loo = loo_kneighbors(index, X, k=10)
    found = index.query(Q, 10)
    timings[name] = time.perf_counter() - start
    results[name] = (loo, found)
    print(f"{name:6s} leave-one-out on 10,000 rows + 2,000 queries: {timings[name]:.2f} s")
if "torch" in results:
    same = all(np.array_equal(a, b) for part in (0, 1)
               for a, b in zip(results["exact"][part], results["torch"][part], strict=True))
    print("identical distances and neighbours:", same)

# %%
# A model on the backend
# ----------------------
# Every model takes ``backend=``: ML-kNN fitted through "torch" predicts what it predicts
# through "exact" (compared only where PyTorch is installed).

Y = (X[:, :5] + 0.5 * rng.normal(size=(10_000, 5)) > 0.8).astype(int)
if torch is not None:
    exact_model = MLkNN(10).fit(X, Y)
    torch_model = MLkNN(10, backend="torch", backend_params={"device": device}).fit(X, Y)
    agree = np.array_equal(exact_model.predict_proba(Q), torch_model.predict_proba(Q))
    print("same ML-kNN scores:", agree)
else:
    print("ML-kNN through \"torch\" not fitted: PyTorch is not installed here")

plt.rcParams.update({"font.size": 14})
fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
names = list(timings)
ax.barh(names, [timings[n] for n in names], color=["C0", "C1"][: len(names)])
for i, n in enumerate(names):
    ax.text(timings[n], i, f" {timings[n]:.2f} s", va="center")
ax.invert_yaxis()
ax.set_xlabel("seconds: build + leave-one-out + queries (k = 10)")
if torch is None:
    ax.set_title("exact alone: PyTorch is not installed where\nthis page was built, so no torch bar")
else:
    suffix = "" if device != "cpu" else " (no GPU here)"
    ax.set_title(f"exact vs torch on device={device!r}{suffix}:\nthe same neighbours, row for row")
ax.set_xlim(0, max(timings.values()) * 1.3)
plt.show()

# %%
# What the figure shows
# ---------------------
# Where this page was built with PyTorch, the two backends return identical distances and
# neighbours, row for row, ties included, and ML-kNN fitted through either gives the same scores:
# the two checks above then print ``True``, and the figure has a bar for each. Where it was built
# without PyTorch (the ``docs`` extra does not install it), the output above says so, nothing was
# compared and the figure has exact's bar alone. With no GPU "torch" runs on the CPU, where it is
# the slower of the two (1.2 s against 0.45 s for "exact" on a quiet run when this page was
# written). The bars say nothing about a GPU; the torch backend is for running the same search on
# one, with ``backend_params={"device": "cuda"}``, and ``benchmarks/gpu.py --device cuda``
# measures it against "exact" and a raw PyTorch floor on a machine with one.
