"""Reading the file formats benchmarks ship in; pyarrow is imported only when needed."""

from __future__ import annotations

from pathlib import Path


def read_parquet(path: Path) -> list[dict]:
    """All rows of a parquet file as dicts (needs the `evals` extra for pyarrow)."""
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise ImportError(f"reading {path} needs pyarrow: pip install paravt-graph[evals]") from err
    return pq.read_table(path).to_pylist()
