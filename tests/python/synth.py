"""Small synthetic Shoal output files in the schema of docs/output.md, for the
tests of tools/shoal-report and tools/shoal-trace (no simulator needed).

    python3 tests/python/synth.py demo.h5 [--gpus 8] [--policy hermod] ...

writes one; `make_run(path, ...)` returns the rows it wrote (numpy structured
arrays, in the order they were written: shuffled, as ranks would append them).
"""

import argparse

import h5py
import numpy as np

# /coflows and /compute with the padding and member order of the C++ row
# structs (the writer stores its in-memory layout), to read like the real files.
COFLOW_DT = np.dtype({
    "names": ["id", "job", "iteration", "micro_batch", "layer", "stage", "type", "key", "class",
              "flows", "bytes", "start_ps", "end_ps"],
    "formats": ["<u4"] * 6 + ["u1", "<u4", "u1", "<u4", "<i8", "<i8", "<i8"],
    "offsets": [0, 4, 8, 12, 16, 20, 24, 28, 25, 32, 40, 48, 56],
    "itemsize": 64})
FLOW_DT = np.dtype([("id", "<u4"), ("coflow", "<u4"), ("src_gpu", "<u4"), ("dst_gpu", "<u4"),
                    ("bytes", "<i8"), ("start_ps", "<i8"), ("end_ps", "<i8")])
COMPUTE_DT = np.dtype({
    "names": ["task", "gpu", "job", "iteration", "micro_batch", "layer", "kind", "start_ps",
              "end_ps"],
    "formats": ["<u4"] * 6 + ["u1", "<i8", "<i8"],
    "offsets": [0, 4, 8, 12, 16, 20, 24, 32, 40],
    "itemsize": 48})
ITER_DT = np.dtype([("job", "<u4"), ("iteration", "<u4"), ("start_ps", "<i8"), ("end_ps", "<i8"),
                    ("exposed_comm_mean_ps", "<i8"), ("exposed_comm_max_ps", "<i8")])
LINK_DT = np.dtype([("id", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("tier", "u1"),
                    ("rate_bps", "<i8"), ("bytes", "<i8")]
                   + [(f"bytes_c{c}", "<i8") for c in range(8)] + [("busy_ps", "<i8")])
UTIL_DT = np.dtype([("link", "<u4"), ("bin", "<u4"), ("start_ps", "<i8"), ("bytes", "<i8"),
                    ("utilization", "<f8")])
UTIL_BIN_PS = 1_000_000  # 1 us

EP, PP, DP = 0, 1, 2
FWD, BWD, OPT = 1, 2, 3


def link_util(flows, gpus, rate_bps):
    """/link_util of the GPU uplinks (link id = GPU): per 1 us bin, the share
    of it in which a finished flow from the GPU was in flight (the link sends
    or it does not, so overlapping flows count once), as bytes at the link
    rate; every bin from t = 0 to the last flow end, as shoal stores them."""
    done = flows[flows["end_ps"] >= 0]
    bins = int(done["end_ps"].max()) // UTIL_BIN_PS + 1 if len(done) else 0
    rows = []
    for g in range(gpus):
        mine = done[done["src_gpu"] == g]
        steps = np.zeros(bins * 1000 + 1, dtype=np.int64)  # in flight, per ns
        np.add.at(steps, mine["start_ps"] // 1000, 1)
        np.add.at(steps, -(-mine["end_ps"] // 1000), -1)
        share = (np.cumsum(steps)[:-1] > 0).reshape(bins, 1000).mean(axis=1)
        for b in range(bins):
            nbytes = int(share[b] * rate_bps * UTIL_BIN_PS / 8e12)
            rows.append((g, b, b * UTIL_BIN_PS, nbytes, nbytes * 8e12 / (rate_bps * UTIL_BIN_PS)))
    return np.array(rows, dtype=UTIL_DT)


def make_run(path, gpus=8, rate_bps=400_000_000_000, policy="hermod", seed=1, iterations=2,
             micro_batches=2, layers=2, with_flows=True, with_iterations=True, completed=True,
             unfinished_coflow=False, with_coflows=True, killed=False):
    """Writes one synthetic run. Timeline per GPU and iteration: for each
    micro-batch and layer a forward task, an EP all-to-all in its group of 4
    GPUs, then backward tasks; a DP all-reduce coflow at the end of the
    iteration; the optimizer step after it. Times are in picoseconds.

    `killed` writes what a killed run leaves in OUT.h5.partial: the /flows and
    /compute rows that ended before the kill (halfway through), and no rows in
    the tables written at the end (/coflows, /iterations, /links), nor /meta
    attributes."""
    rng = np.random.default_rng(seed)
    scale = 400_000_000_000 / rate_bps  # faster links, shorter transfers
    compute, coflows, flows, iters = [], [], [], []
    t = 0
    task = cid = fid = 0
    groups = [list(range(g, min(g + 4, gpus))) for g in range(0, gpus, 4)]
    for it in range(iterations):
        it_start = t
        for mb in range(micro_batches):
            for layer in range(layers):
                dur = 1_000_000 + 1000 * int(rng.integers(0, 500))  # ~1 us
                for g in range(gpus):
                    compute.append((task, g, 0, it, mb, layer, FWD, t, t + dur))
                    task += 1
                t += dur
                # EP all-to-all per group: flows between every ordered pair.
                cct_end = t
                for grp in groups:
                    members = []
                    for s in grp:
                        for d in grp:
                            if s == d:
                                continue
                            fs = t + 1000 * int(rng.integers(0, 50))
                            fe = fs + int(scale * (200_000 + 1000 * int(rng.integers(0, 800))))
                            b = 1_000_000 + int(rng.integers(0, 1000))
                            members.append((fid, cid, s, d, b, fs, fe))
                            fid += 1
                    start = min(m[5] for m in members)
                    end = max(m[6] for m in members)
                    cct_end = max(cct_end, end)
                    coflows.append((cid, 0, it, mb, layer, 0, EP, cid % 7, cid % 8,
                                    len(members), sum(m[4] for m in members), start, end))
                    flows.extend(members)
                    cid += 1
                t = cct_end
                dur = 2 * dur
                for g in range(gpus):
                    compute.append((task, g, 0, it, mb, layer, BWD, t, t + dur))
                    task += 1
                t += dur
        # DP: one ring of flows g -> g+1 over all GPUs.
        members = []
        for s in range(gpus):
            fs = t + 1000 * int(rng.integers(0, 100))
            fe = fs + int(scale * (3_000_000 + 1000 * int(rng.integers(0, 2000))))
            members.append((fid, cid, s, (s + 1) % gpus, 4_000_000, fs, fe))
            fid += 1
        start = min(m[5] for m in members)
        end = max(m[6] for m in members)
        coflows.append((cid, 0, it, micro_batches - 1, layers - 1, 0, DP, 100 + it, 7,
                        len(members), sum(m[4] for m in members), start, end))
        flows.extend(members)
        cid += 1
        t = end
        for g in range(gpus):
            compute.append((task, g, 0, it, 0, 0, OPT, t, t + 500_000))
            task += 1
        t += 500_000
        iters.append((0, it, it_start, t, 1000 * int(rng.integers(100, 900)),
                      1000 * int(rng.integers(900, 2000))))

    coflows = np.array(coflows, dtype=COFLOW_DT)
    flows = np.array(flows, dtype=FLOW_DT)
    if unfinished_coflow:
        # The last EP coflow never finished: its last flow has no end.
        last_ep = np.flatnonzero(coflows["type"] == EP)[-1]
        c = coflows["id"][last_ep]
        coflows["end_ps"][last_ep] = -1
        mine = np.flatnonzero(flows["coflow"] == c)
        flows["end_ps"][mine[-1]] = -1
    compute = np.array(compute, dtype=COMPUTE_DT)
    iters = np.array(iters if with_iterations else [], dtype=ITER_DT)

    # Links: GPU -> leaf uplinks (tier 1) and a few spine links (tier 2).
    links = []
    for g in range(gpus):
        sent = int(flows["bytes"][flows["src_gpu"] == g].sum()) // 20
        per_class = np.zeros(8, dtype=np.int64)
        per_class[0] = sent // 2
        per_class[7] = sent - sent // 2
        links.append((g, g, gpus + g // 4, 1, rate_bps, sent, *per_class,
                      int(sent * 8 * 1e12 / rate_bps)))
    for s in range(4):
        b = 1_000_000 * (s + 1)
        links.append((gpus + s, gpus + gpus // 4 + s, gpus, 2, 2 * rate_bps, b, b, 0, 0, 0, 0, 0,
                      0, 0, int(b * 8 * 1e12 / (2 * rate_bps))))
    links = np.array(links, dtype=LINK_DT)
    util = link_util(flows, gpus, rate_bps)

    if killed:
        cut = int(np.median(flows["end_ps"]))
        flows = flows[(flows["end_ps"] >= 0) & (flows["end_ps"] <= cut)]
        compute = compute[compute["end_ps"] <= cut]
        coflows, iters, links, util = coflows[:0], iters[:0], links[:0], util[:0]

    def shuffled(a):
        return a[rng.permutation(len(a))]

    written = {"coflows": shuffled(coflows), "flows": shuffled(flows),
               "compute": shuffled(compute), "iterations": shuffled(iters),
               "links": shuffled(links), "link_util": shuffled(util)}
    with h5py.File(path, "w") as f:
        units = "ps for *_ps columns, bytes, bits/s"
        for name, rows in written.items():
            if name == "flows" and not with_flows:
                continue
            if name == "coflows" and not with_coflows:
                continue
            ds = f.create_dataset(name, data=rows, maxshape=(None,), chunks=True)
            ds.attrs["units"] = np.bytes_(units)  # fixed-length, as the C++ writer does
        if with_coflows:
            f["coflows"].attrs["type_names"] = np.bytes_("EP,PP,DP,TP,OTHER")
        f["compute"].attrs["kind_names"] = np.bytes_("other,fwd,bwd,optimizer")
        f["links"].attrs["tier_names"] = np.bytes_("nvlink,host,spine,core")
        f["link_util"].attrs["bin_ps"] = UTIL_BIN_PS
        m = f.create_group("meta")
        if not killed:  # /meta attributes are written at the end
            m.attrs["config"] = f"# synthetic\n[policy]\nname = \"{policy}\"\n"
            m.attrs["version"] = "0.0-test"
            m.attrs["commit"] = "0000000"
            m.attrs["seed"] = seed
            m.attrs["ranks"] = 2
            m.attrs["partition"] = "block"
            m.attrs["cell_size"] = 4096
            m.attrs["wall_seconds"] = 0.25
            m.attrs["events"] = 12345
            m.attrs["completed"] = 1 if completed else 0
            m.attrs["policy"] = np.bytes_(policy)  # fixed-length strings, as the C++ writer does
            m.attrs["fabric"] = np.bytes_(f"fat-tree (2-tier radix=8 gpus={gpus})")
            m.attrs["gpus"] = gpus
            m.attrs["link_rate_bps"] = rate_bps
            m.attrs["workload"] = "synthetic"
    if not with_flows:
        written.pop("flows")
    return written


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path")
    p.add_argument("--gpus", type=int, default=8)
    p.add_argument("--rate", type=float, default=400e9, help="link rate in bits/s")
    p.add_argument("--policy", default="hermod")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-flows", action="store_true")
    a = p.parse_args()
    make_run(a.path, gpus=a.gpus, rate_bps=int(a.rate), policy=a.policy, seed=a.seed,
             with_flows=not a.no_flows)


if __name__ == "__main__":
    main()
