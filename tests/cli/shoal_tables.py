"""Shoal's HDF5 output made comparable: every table sorted by its key columns.

Ranks append rows in their own order, so files of one run at different rank
counts hold the same rows in different orders; sorted, they must be equal
(numpy.array_equal). Shared by the CLI tests that compare runs.
"""
import h5py
import numpy as np

SORT_KEYS = {
    "coflows": ["id"],
    "flows": ["id"],
    "compute": ["task"],
    "iterations": ["job", "iteration"],
    "links": ["id"],
    "link_util": ["link", "bin"],
    "nodes": ["id"],
}


def sorted_tables(path):
    """(tables, meta): the file's tables sorted by SORT_KEYS, and /meta's attributes.

    A dataset without a sort key is an error, so a new table cannot slip past
    the comparisons unchecked.
    """
    with h5py.File(path, "r") as f:
        unknown = set(f.keys()) - set(SORT_KEYS) - {"meta"}
        if unknown:
            raise AssertionError("%s: datasets without a sort key: %s" % (path, sorted(unknown)))
        tables = {k: np.sort(f[k][:], order=o) for k, o in SORT_KEYS.items() if k in f}
        return tables, dict(f["meta"].attrs)


def differing(a, b):
    """Names of the tables that differ between two sorted_tables() results."""
    return sorted(k for k in set(a) | set(b) if k not in a or k not in b or not np.array_equal(a[k], b[k]))
