"""Hermod's Case II, found in a run's HDF5 tables.

Case II (the Hermod digest's Figure 1, docs/references.md#hermod-examples): in
the backward pass, EP and PP coflows of two micro-batches overlap the DP
coflows of the last layers at a GPU's NIC. Counts the DP flows that leave
their server while EP or PP flows of two or more different micro-batches leave
the same GPU's server-crossing port in the same interval.

Usage: case_ii.py FILE.h5 GPUS_PER_SERVER  (prints "case-ii N of M DP flows")
"""
import sys

import h5py
import numpy as np

EP, PP, DP = 0, 1, 2  # /coflows type ids (type_names "EP,PP,DP,TP,OTHER")


def case_ii(path, per_server):
    with h5py.File(path, "r") as f:
        coflows = f["coflows"][:]
        flows = f["flows"][:]
    kind = dict(zip(coflows["id"], coflows["type"]))
    micro_batch = dict(zip(coflows["id"], coflows["micro_batch"]))
    crossing = flows["src_gpu"] // per_server != flows["dst_gpu"] // per_server
    flows = flows[crossing & (flows["end_ps"] >= 0)]
    types = np.array([kind[c] for c in flows["coflow"]])
    mbs = np.array([micro_batch[c] for c in flows["coflow"]])
    found = total = 0
    for gpu in np.unique(flows["src_gpu"]):
        mine = flows["src_gpu"] == gpu
        start, end = flows["start_ps"][mine], flows["end_ps"][mine]
        kinds, batches = types[mine], mbs[mine]
        others = np.where((kinds == EP) | (kinds == PP))[0]
        for d in np.where(kinds == DP)[0]:
            total += 1
            overlapping = others[(start[others] < end[d]) & (end[others] > start[d])]
            found += len(set(batches[overlapping].tolist())) >= 2
    return found, total


if __name__ == "__main__":
    n, m = case_ii(sys.argv[1], int(sys.argv[2]))
    print("case-ii %d of %d DP flows" % (n, m))
