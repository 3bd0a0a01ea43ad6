"""The neighbour-search page's figures, drawn from the tables the benchmarks wrote.

Usage::

    python benchmarks/neighbors_figures.py [--docs docs/user_guide] [--out docs/user_guide/figures]

Reads only measured tables that ``benchmarks/scale.py`` wrote into the user guide, and invents no
number:

- ``scale_crossover.inc`` (``scale.py --tune crossover``): the exact leave-one-out search and
  ``"faiss-union"``'s whole fit at 20,000 to 300,000 rows, d = 32, 128 and 384, each with its
  cost model's estimate;
- ``scale_laws.inc`` (``scale.py --laws ... --compact``): ``MLkNN(10)``'s fit and predict end to
  end on three data laws at 10^5, 3 x 10^5 and 10^6 x 128 and 3 x 10^5 x 384, for exact, faiss
  HNSW alone and ``"faiss-union"``: time against exact, the share of test queries below
  recall@10 0.5, P@1, P@5 and micro-F1;
- ``scale_laws_quality.inc`` (``scale.py --quality-rows 100000``): exact's and the union's
  quality at 10^6 x 128 from the count tables of 100,000 sampled rows.

Writes three PNGs (``neighbors_crossover.png``, ``neighbors_speedup.png``,
``neighbors_quality.png``) that ``docs/user_guide/neighbors.rst`` shows, and the same tables
(``scale_laws.inc``, ``scale_laws_quality.inc``, ``scale_build.inc``, ``scale_dask.inc``,
``scale_table.inc``, ``scale_quality.inc``; ``scale_graph.inc`` as it is, its @ escaped) split into
tables of a few columns that fit the text
column, as ``neighbors_*.inc`` beside them, for ``docs/user_guide/neighbors_measurements.rst``:
the same cells and the same prose, only regrouped. Run it again after ``scale.py`` rewrites one
of those tables, and commit what it writes with the tables.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_ROW = re.compile(r"^   \* - (.*)$")
_CELL = re.compile(r"^     - (.*)$")
_LAW = re.compile(r"^Law ``(\w+)``, ([\d,]+) x (\d+):$")


def list_tables(text: str) -> list[tuple[str, list[list[str]]]]:
    """Every ``list-table`` of ``text`` with the last non-blank line before it: (caption, rows),
    the header row first, each cell as written (reST escapes removed)."""
    tables: list[tuple[str, list[list[str]]]] = []
    caption, rows, row = "", None, None
    for line in text.splitlines():
        if line.startswith(".. list-table::"):
            rows = []
            tables.append((caption, rows))
            continue
        if rows is not None and (m := _ROW.match(line)):
            row = [m.group(1)]
            rows.append(row)
        elif rows is not None and row is not None and (m := _CELL.match(line)):
            row.append(m.group(1))
        elif line.strip() and not line.startswith("   :"):
            rows, row, caption = None, None, line.strip()
    return [(caption, [[cell.replace("\\*", "*").strip() for cell in r] for r in rs]) for caption, rs in tables]


def _number(cell: str) -> float | None:
    """The first number of a cell ("20.9 (1.00)" -> 20.9, "0.17 %" -> 0.17, "–" -> None)."""
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", cell)
    return None if m is None else float(m.group(0).replace(",", ""))


def _in_parentheses(cell: str) -> float | None:
    m = re.search(r"\((-?[\d,.]+)\)", cell)
    return None if m is None else float(m.group(1).replace(",", ""))


def crossover(docs: Path) -> list[dict]:
    """scale_crossover.inc: one dict per (d, n)."""
    (_, rows), = list_tables((docs / "scale_crossover.inc").read_text(encoding="utf-8"))
    header, *body = rows
    assert header[:4] == ["d", "n", "exact s (model)", "faiss-union s (model)"], header
    return [{"d": int(r[0]), "n": int(r[1].replace(",", "")),
             "exact": _number(r[2]) if not r[2].startswith("–") else None, "exact_model": _in_parentheses(r[2]),
             "union": _number(r[3]), "union_model": _in_parentheses(r[3])} for r in body]


def laws(docs: Path) -> list[dict]:
    """scale_laws.inc: one dict per (law, n, d, contender)."""
    out = []
    for caption, rows in list_tables((docs / "scale_laws.inc").read_text(encoding="utf-8")):
        m = _LAW.match(caption)
        assert m, caption
        header, *body = rows
        col = {name: i for i, name in enumerate(header)}
        for r in body:
            out.append({"law": m.group(1), "n": int(m.group(2).replace(",", "")), "d": int(m.group(3)),
                        "contender": r[col["contender"]], "seconds": _number(r[col["s (x exact)"]]),
                        "x_exact": _in_parentheses(r[col["s (x exact)"]]),
                        "below": _number(r[col["below 0.5"]]) if "%" in r[col["below 0.5"]] else None,
                        **{key: _number(r[col[key]]) if r[col[key]] != "–" else None
                           for key in ("P@1", "P@5", "micro-F1")}})
    return out


def laws_quality(docs: Path) -> list[dict]:
    """scale_laws_quality.inc: the union's differences to exact at 10^6 (sampled count tables)."""
    (_, rows), = list_tables((docs / "scale_laws_quality.inc").read_text(encoding="utf-8"))
    header, *body = rows
    col = {name: i for i, name in enumerate(header)}
    return [{"law": r[col["law"]], "n": int(r[col["n x d"]].split(" x ")[0].replace(",", "")),
             "d": int(r[col["n x d"]].split(" x ")[1]), "contender": r[col["contender"]],
             **{key: float(r[col[f"{key} - exact"]]) for key in ("P@1", "P@5", "micro-F1")}}
            for r in body if r[col["contender"]] != "exact"]


LAW_NAMES = {"mixture": "label mixture", "clusters": "1,000 clusters", "hard": "5,000 tiny clusters (hard)"}
LAW_COLOURS = {"mixture": "#1f77b4", "clusters": "#2ca02c", "hard": "#d62728"}
D_COLOURS = {32: "#1f77b4", 128: "#ff7f0e", 384: "#2ca02c"}


def _style(plt) -> None:
    plt.rcParams.update({"font.size": 11, "axes.titlesize": 11.5, "legend.fontsize": 9.5,
                         "axes.grid": True, "grid.alpha": 0.3, "savefig.dpi": 150})


def _size_label(n: int) -> str:
    return {100_000: "10⁵", 300_000: "3 × 10⁵", 1_000_000: "10⁶"}.get(n, f"{n:,}")


def draw_crossover(rows: list[dict], out: Path) -> Path:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    for d in sorted({r["d"] for r in rows}):
        rs = sorted((r for r in rows if r["d"] == d), key=lambda r: r["n"])
        colour = D_COLOURS.get(d, "grey")
        n = [r["n"] for r in rs]
        ax.plot(n, [r["exact_model"] for r in rs], ls=":", color=colour, lw=1.4)
        ax.plot(n, [r["union_model"] for r in rs], ls="--", color=colour, lw=1.4)
        measured = [r for r in rs if r["exact"] is not None]
        ax.plot([r["n"] for r in measured], [r["exact"] for r in measured], "o", color=colour, ms=7,
                mfc="white", mew=1.8)
        ax.plot(n, [r["union"] for r in rs], "s", color=colour, ms=6, label=f"d = {d}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training rows n (a leave-one-out search of each)")
    ax.set_ylabel("seconds")
    ax.set_title("Exact search (circles; dotted: its cost model)\n"
                 "against faiss-union's whole fit (squares; dashed: model)")
    ax.set_xticks([20_000, 50_000, 100_000, 300_000], ["20,000", "50,000", "100,000", "300,000"])
    ax.minorticks_off()
    ax.legend(loc="upper left")
    path = out / "neighbors_crossover.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def draw_speedup(rows: list[dict], out: Path) -> Path:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    sizes = [100_000, 300_000, 1_000_000]
    for law, colour in LAW_COLOURS.items():
        for contender, marker, ls in (("faiss-union", "s", "-"), ("faiss-hnsw", "^", ":")):
            rs = sorted((r for r in rows if r["law"] == law and r["d"] == 128 and r["contender"] == contender),
                        key=lambda r: r["n"])
            if rs:
                ax.plot([r["n"] for r in rs], [r["x_exact"] for r in rs], marker=marker, ls=ls, color=colour,
                        ms=7, label=f"{contender}, {LAW_NAMES[law]}" if contender == "faiss-union" else None)
        # d = 384 at 3 x 10^5, beside the d = 128 points
        for contender, marker in (("faiss-union", "D"), ("faiss-hnsw", "v")):
            for r in rows:
                if r["law"] == law and r["d"] == 384 and r["contender"] == contender:
                    ax.plot([r["n"] * 1.12], [r["x_exact"]], marker=marker, color=colour, ms=7, ls="none",
                            mfc="white", mew=1.8)
    ax.axhline(1, color="black", lw=1)
    ax.text(105_000, 1.08, "exact", fontsize=10.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sizes, [_size_label(n) for n in sizes])
    ax.minorticks_off()
    ax.set_yticks([1, 2, 5, 10, 15], ["1", "2", "5", "10", "15"])
    ax.set_xlabel("training rows (d = 128; hollow: d = 384 at 3 × 10⁵)")
    ax.set_ylabel("times faster than exact")
    ax.set_title("MLkNN(10) fit + predict, end to end:\n"
                 "faiss-union (squares) and faiss HNSW alone (triangles)")
    ax.legend(loc="lower right")
    path = out / "neighbors_speedup.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def draw_quality(rows: list[dict], sampled: list[dict], out: Path) -> Path:
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(2, 1, figsize=(6.4, 7.6), layout="constrained")
    cases = [(law, n, d) for n, d in ((100_000, 128), (300_000, 128), (1_000_000, 128), (300_000, 384))
             for law in LAW_COLOURS if any(r["law"] == law and r["n"] == n and r["d"] == d for r in rows)]
    groups = [(n, d) for n, d in ((100_000, 128), (300_000, 128), (1_000_000, 128), (300_000, 384))
              if any(c[1:] == (n, d) for c in cases)]
    width = 0.27
    for i, law in enumerate(LAW_COLOURS):
        for j, (n, d) in enumerate(groups):
            for contender, hatch, offset in (("faiss-hnsw", "//", -0.0), ("faiss-union", "", 0.0)):
                r = next((r for r in rows if (r["law"], r["n"], r["d"], r["contender"]) == (law, n, d, contender)),
                         None)
                if r is None or r["below"] is None:
                    continue
                x = j + (i - 1) * width + offset
                if contender == "faiss-hnsw":
                    left.bar(x, r["below"], width * 0.9, color=LAW_COLOURS[law], alpha=0.45, hatch=hatch,
                             edgecolor=LAW_COLOURS[law])
                else:
                    left.plot([x], [max(r["below"], 0.0)], "s", color="black", ms=5)
    labels = [f"{_size_label(n)}\n× {d}" for n, d in groups]
    left.set_xticks(range(len(groups)), [label.replace("\n", " ") for label in labels])
    left.set_xlabel("rows × d")
    left.set_ylabel("% of test queries\nbelow recall@10 0.5")
    left.set_title("The tail: faiss HNSW alone (bars), faiss-union (black squares)")
    for law, colour in LAW_COLOURS.items():
        left.bar([0], [0], color=colour, alpha=0.45, label=LAW_NAMES[law])
    left.legend(loc="upper left", fontsize=9.5)

    # right: micro-F1 minus exact's, where exact's quality was measured
    metric = "micro-F1"
    # where exact's quality was measured: the whole fit (10^5, 3 x 10^5 x 128) or sampled (10^6)
    groups = [(n, d) for n, d in groups
              if any((r["n"], r["d"], r["contender"]) == (n, d, "exact") and r[metric] is not None for r in rows)
              or any((s["n"], s["d"]) == (n, d) for s in sampled)]
    for i, law in enumerate(LAW_COLOURS):
        for j, (n, d) in enumerate(groups):
            exact = next((r for r in rows if (r["law"], r["n"], r["d"], r["contender"]) == (law, n, d, "exact")),
                         None)
            for contender, marker in (("faiss-hnsw", "^"), ("faiss-union", "s")):
                r = next((r for r in rows if (r["law"], r["n"], r["d"], r["contender"]) == (law, n, d, contender)),
                         None)
                delta = None
                if exact is not None and exact[metric] is not None and r is not None:
                    delta = r[metric] - exact[metric]
                elif contender == "faiss-union":
                    s = next((s for s in sampled if (s["law"], s["n"], s["d"]) == (law, n, d)), None)
                    delta = None if s is None else s[metric]
                    marker = "s" if s is None else "P"
                if delta is not None:
                    right.plot([j + (i - 1) * width], [delta], marker=marker, color=LAW_COLOURS[law], ms=7,
                               ls="none", mfc="white" if contender == "faiss-hnsw" else LAW_COLOURS[law], mew=1.6)
    right.axhline(0, color="black", lw=1)
    right.set_xticks(range(len(groups)), [f"{_size_label(n)} × {d}" for n, d in groups])
    right.set_xlabel("rows × d")
    right.set_ylabel("micro-F1 minus exact's")
    right.set_title("Quality: faiss HNSW alone (hollow ▲), faiss-union (■; +: sampled)")
    path = out / "neighbors_quality.png"
    fig.savefig(path)
    plt.close(fig)
    return path


# -- the measured tables, split into tables that fit the text column -----------------------------

#: header of a wide table -> (the columns that name a row, merged into one cell; the groups of the
#: other columns, one narrow table each)
SPLITS: dict[tuple[str, ...], tuple[list[str], list[list[str]]]] = {
    ("backend", "params"): (["backend", "params"],
                            [["query breadth", "``query_recall_``", "leave-one-out breadth", "``recall_``"],
                             ["build s", "leave-one-out s", "total s"]]),
    ("n x d", "contender", "``backend_``", "build s"): (
        ["n x d", "contender"],
        [["``backend_``", "build s", "fit s", "predict s", "end to end s"],
         ["x exact", "CPU s", "x exact (CPU)", "peak MB"],
         ["recall@10", "``recall_``", "P@1", "P@5", "micro-F1"]]),
    ("law", "n x d", "rows counted"): (
        ["law", "contender"],
        [["n x d", "rows counted", "``backend_``", "leave-one-out recall@10", "< 0.5"],
         ["P@1", "P@5", "micro-F1"], ["P@1 - exact", "P@5 - exact", "micro-F1 - exact"]]),
    ("n x d", "rows counted"): (
        ["n x d", "contender"],
        [["rows counted", "``backend_``", "leave-one-out recall@10"], ["P@1", "P@5", "micro-F1"],
         ["P@1 - exact", "P@5 - exact", "micro-F1 - exact"]]),
    ("model", "index in the file"): (
        ["model", "index in the file"],
        [["file MB", "load s", "predict s", "load + predict s", "CPU s", "builds"]]),
}


def _escape_at(cell: str) -> str:
    """``recall@10`` outside a literal reads as an e-mail address to docutils: escape the @."""
    parts = cell.split("``")
    return "``".join(re.sub(r"(?<!\\)@", r"\\@", part) if i % 2 == 0 else part for i, part in enumerate(parts))


def _list_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        out.append(f"   * - {_escape_at(row[0])}")
        out += [f"     - {_escape_at(cell)}" for cell in row[1:]]
    return out + [""]


def _split(header: list[str], rows: list[list[str]]) -> list[str] | None:
    """The narrow tables of one wide table, or None where no split is configured."""
    split = next((split for prefix, split in SPLITS.items() if tuple(header[: len(prefix)]) == prefix), None)
    if split is None:
        return None
    keys, groups = split
    col = {name: i for i, name in enumerate(header)}
    # a column a table lacks (the Dask table has no CPU seconds) is left out; every one it has is shown
    groups = [kept for group in groups if (kept := [name for name in group if name in col])]
    shown = keys + sum(groups, [])
    assert sorted(shown) == sorted(header), (header, shown)
    key_name = ", ".join(keys)
    out: list[str] = []
    for group in groups:
        narrow = [[", ".join(r[col[k]] for k in keys if r[col[k]] not in ("", "–")), *(r[col[g]] for g in group)]
                  for r in rows]
        out += _list_table([key_name, *group], narrow)
    return out


def _laws_narrow(text: str) -> list[str]:
    """scale_laws.inc's tables (one per law and size) as three tables, each row a law, a size and
    a contender: time and memory; the tail; the quality."""
    cases = []
    for caption, rows in list_tables(text):
        m = _LAW.match(caption)
        assert m, caption
        header, *body = rows
        cases.append((f"{m.group(1)}, {m.group(2)} x {m.group(3)}", header, body))
    header = cases[0][1]
    assert all(h == header for _, h, _ in cases)
    col = {name: i for i, name in enumerate(header)}
    out = [line for line in text.splitlines() if line.startswith("..  ")] + [""]
    groups = [["s (x exact)", "peak MB"], ["recall@10", "below 0.5", "LOO below 0.5"], ["P@1", "P@5", "micro-F1"]]
    assert len(sum(groups, [])) + 1 == len(header)
    for group in groups:
        rows = [[case, r[col["contender"]], *(r[col[g]] for g in group)] for case, _, body in cases for r in body]
        out += _list_table(["law, n x d", "contender", *group], rows)
    return out


def narrow_tables(docs: Path, out: Path) -> list[Path]:
    """Write ``neighbors_*.inc`` beside the ``scale_*.inc`` they split."""
    written = []
    for name in ("scale_laws", "scale_laws_quality", "scale_build", "scale_dask", "scale_table", "scale_quality",
                 "scale_graph"):
        text = (docs / f"{name}.inc").read_text(encoding="utf-8")
        if name == "scale_laws":
            lines = _laws_narrow(text)
        else:
            lines, table, i = [], None, 0
            source = text.splitlines()
            while i < len(source):
                line = source[i]
                if line.startswith(".. list-table::"):
                    j = i + 1
                    while j < len(source) and (not source[j].strip() or source[j].startswith("   ")):
                        j += 1
                    (_, rows), = list_tables("\n".join(source[i:j]))
                    table = _split(rows[0], rows[1:])
                    lines += table if table is not None else _list_table(rows[0], rows[1:])
                    i = j
                    continue
                lines.append(_escape_at(line))
                i += 1
        path = out / f"{name.replace('scale_', 'neighbors_')}.inc"
        path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default=str(ROOT / "docs" / "user_guide"), help="where the .inc tables are")
    parser.add_argument("--out", default=str(ROOT / "docs" / "user_guide" / "figures"), help="where the PNGs go")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _style(plt)
    docs, out = Path(args.docs), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    law_rows = laws(docs)
    for path in (draw_crossover(crossover(docs), out), draw_speedup(law_rows, out),
                 draw_quality(law_rows, laws_quality(docs), out), *narrow_tables(docs, docs)):
        print(path)


if __name__ == "__main__":
    main()
