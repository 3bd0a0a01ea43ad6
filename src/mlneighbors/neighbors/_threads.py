"""The exact engine's worker threads: one process-wide pool, a one-thread BLAS inside it, the
scheduling of a search's GEMM shares and selections, and the memory each thread keeps between
searches.

Used by the exact search (:class:`~mlneighbors.neighbors.ExactIndex`), the PyTorch search's
host-side merges and the cost probe of ``"auto"``; nothing here knows about distances.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

__all__ = ["AHEAD", "blas_single_thread", "each_block", "keep", "on_workers", "pipeline", "row_shares", "scratch",
           "thread_pool"]

# the GEMMs of a search on the workers (``pipeline``) run at most this many blocks ahead of
# its selection
AHEAD = 1

# each thread keeps the memory of its searches' proxy block and mask (the largest so far, up
# to this many bytes each) for its next one: a search's large arrays freed at its end are given
# back to the system when they top the heap, and faulted in again, page by page, by the next
# search (a virtual machine pays several microseconds a page: scene's ML-kNN fit and predict
# 2,700 page faults and 15.5 ms, kept 0 and 12.2 ms)
_KEEP_BYTES = 1 << 24
_kept = threading.local()

_controller_lock = threading.Lock()
_controller: Any = None
_pools: dict[tuple[int, int], ThreadPoolExecutor] = {}


def thread_pool(n_threads: int) -> ThreadPoolExecutor:
    """A process-wide pool of worker threads, reused across queries (starting threads costs
    about a millisecond, as much as a small query); recreated after a fork."""
    key = (os.getpid(), n_threads)
    with _controller_lock:
        if key not in _pools:
            _pools[key] = ThreadPoolExecutor(n_threads, thread_name_prefix="mlneighbors")
        return _pools[key]


def blas_single_thread() -> Any:
    """A context manager limiting the BLAS to one thread (the workers run in parallel)."""
    global _controller
    from threadpoolctl import ThreadpoolController

    with _controller_lock:
        if _controller is None:
            _controller = ThreadpoolController()  # scanning the loaded libraries is slow: once
    return _controller.limit(limits=1, user_api="blas")


def each_block(fn: Callable[[Any], None], blocks: list[Any], n_threads: int) -> None:
    """``fn(block)`` for every block, on ``n_threads`` workers of the pool, each BLAS call on one
    thread: a block's numbers are then those of one thread whatever the machine's thread
    settings (a BLAS splits a product differently on 1 and 2 threads, which rounds differently),
    and the blocks (a partition that does not depend on the threads) share the cores instead."""
    with blas_single_thread():
        if n_threads <= 1 or len(blocks) <= 1:
            for block in blocks:
                fn(block)
            return
        for future in [thread_pool(n_threads).submit(fn, block) for block in blocks]:
            future.result()


def pipeline(
    n_blocks: int, shares: list[tuple[int, int, int]], products: Callable[[int, int, int], None],
    select: Callable[[int], None], release: Callable[[int], None], n_threads: int
) -> None:
    """Blocks of a search on ``n_threads`` workers: each block's GEMM in shares (``shares``:
    ``(block, c0, c1)`` in block order; ``products(i, c0, c1)`` on one BLAS thread), and its
    selection (``select(i)``) once the products of every block up to it are in, one block at a
    time; ``release(i)`` once the selections of every block up to it are done.

    One selection at a time where there is GEMM work beside it, because the selection is many
    short NumPy calls, each giving the interpreter's lock up and taking it back: two threads
    selecting at once hand the lock to each other at every call and gain little (the
    selections of yahoo-science's leave-one-out: 1.2x on two threads), while a GEMM holds no
    lock for milliseconds.  So one worker selects while the others compute the next blocks'
    products, at most ``AHEAD`` blocks ahead of the first block not selected yet (the memory
    they write stays bounded); where no GEMM is left to do, another selection runs beside
    (the last blocks' products take less time than their selections).
    """
    cond = threading.Condition()
    left = [0] * n_blocks  # GEMM shares not done, by block
    for i, _, _ in shares:
        left[i] += 1
    done = [False] * n_blocks  # selections done
    # the next share and selection to hand out, the blocks whose products are all in, the first
    # block not selected yet, the selections running
    state = {"share": 0, "select": 0, "ready": 0, "low": 0, "running": 0, "failed": False}

    def fail() -> None:  # an error in a worker or the caller: the others end early
        with cond:
            state["failed"] = True
            cond.notify_all()

    def next_job() -> tuple[int, int, int] | int | None:
        # under the condition's lock: a selection once its products are in (a second one at
        # once only where no GEMM is left to do: better than waiting), else a GEMM share
        while not state["failed"] and state["select"] < n_blocks:
            g = state["share"]
            gemm = g < len(shares) and shares[g][0] <= state["low"] + AHEAD
            if state["ready"] > state["select"] and (not state["running"] or not gemm):
                state["running"] += 1
                state["select"] += 1
                return state["select"] - 1
            if gemm:
                state["share"] = g + 1
                return shares[g]
            cond.wait()
        return None

    def worker() -> None:
        while True:
            with cond:
                job = next_job()
            if job is None:
                return
            try:
                if isinstance(job, int):
                    select(job)
                else:
                    products(*job)
            except BaseException:
                fail()
                raise
            with cond:
                if isinstance(job, int):
                    state["running"] -= 1
                    done[job] = True
                    while state["low"] < n_blocks and done[state["low"]]:
                        release(state["low"])
                        state["low"] += 1
                else:
                    left[job[0]] -= 1
                    while state["ready"] < n_blocks and left[state["ready"]] == 0:
                        state["ready"] += 1
                cond.notify_all()

    on_workers(worker, n_threads, fail)


def on_workers(worker: Callable[[], None], n_threads: int, stop: Callable[[], None]) -> None:
    """``worker()`` on ``n_threads`` threads of the pool, each with a one-thread BLAS, until every
    one returns; on an error or Ctrl-C in the caller, ``stop()`` (the workers end early) and
    the error raised again."""
    pool = thread_pool(n_threads)
    with blas_single_thread():
        futures = [pool.submit(worker) for _ in range(n_threads)]
        try:
            for future in futures:
                future.result()
        except BaseException:  # do not leave the workers computing
            stop()
            raise


def scratch(slot: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` (contents left open) for a search in this thread: on
    the memory this thread's searches kept in ``slot`` (``keep``: the largest so far) where it
    is large enough, else new.  Taken out of the slot while in use: a search within a search (a
    progress listener's) gets its own."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    memory = _kept.__dict__.pop(slot, None)
    if memory is None or memory.nbytes < nbytes:
        memory = np.empty(max(nbytes, 1), dtype=np.uint8)
    return memory[:nbytes].view(dtype).reshape(shape)


def keep(slot: int, array: np.ndarray | None) -> None:
    """Keep the memory of a ``scratch`` array in this thread's ``slot`` for its next search,
    up to ``_KEEP_BYTES``."""
    while array is not None and array.base is not None:
        array = array.base
    if array is not None and array.nbytes <= _KEEP_BYTES:
        _kept.__dict__[slot] = array


def row_shares(n: int, n_threads: int) -> Callable[[Callable[[int, int], Any]], list[Any]]:
    """``shares(fn)``: ``fn(a, b)`` on ``n_threads`` contiguous shares of the rows ``0:n``, in the
    worker threads (one share: in the caller's), the results in row order."""
    step = -(-n // max(1, n_threads))
    spans = [(a, min(a + step, n)) for a in range(0, n, step)] or [(0, 0)]
    if len(spans) == 1:
        return lambda fn: [fn(*spans[0])]
    pool = thread_pool(n_threads)
    return lambda fn: [future.result() for future in [pool.submit(fn, a, b) for a, b in spans]]
