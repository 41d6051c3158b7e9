"""Shared helpers of tools/shoal-report and tools/shoal-trace: reading a Shoal
HDF5 output file (docs/output.md) into numpy / pandas, in bounded memory.

Every dataset is a 1-D compound table; rows are in no particular order (ranks
append in any order), so everything here sorts or aggregates before use.
Times are int64 picoseconds; -1 marks an end (or start) that never happened.
"""

import os
import sys

PROG = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "shoal-tools"

DEBIAN_PACKAGES = "python3-h5py python3-numpy python3-pandas python3-matplotlib"
_SYSTEM_PYTHON = "/usr/bin/python3"


def require(modules):
    """Imports `modules` or, when one is missing, re-runs the tool under Debian's
    /usr/bin/python3 (where python3-h5py and friends live) when the current
    interpreter is another one (pyenv, venv); else exits with one line."""
    missing = []
    for m in modules:
        try:
            __import__(m)
        except ImportError:
            missing.append(m)
    if not missing:
        return
    here = os.path.realpath(sys.executable or "")
    if (os.access(_SYSTEM_PYTHON, os.X_OK) and here != os.path.realpath(_SYSTEM_PYTHON)
            and not os.environ.get("SHOAL_TOOLS_REEXEC") and sys.argv and sys.argv[0]
            and os.path.exists(sys.argv[0])):
        os.environ["SHOAL_TOOLS_REEXEC"] = "1"
        os.execv(_SYSTEM_PYTHON, [_SYSTEM_PYTHON] + sys.argv)
    sys.stderr.write(f"{PROG}: error: Python module(s) {', '.join(missing)} missing: "
                     f"apt-get install {DEBIAN_PACKAGES}\n")
    sys.exit(2)


require(("numpy", "pandas", "h5py"))

# `tools/shoal-report ... | head` ends quietly; Ctrl-C without a traceback.
import signal  # noqa: E402
if hasattr(signal, "SIGPIPE"):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.SIG_DFL)

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

TYPE_NAMES = ["EP", "PP", "DP", "TP", "OTHER", "CP"]
KIND_NAMES = ["other", "fwd", "bwd", "optimizer"]
TIER_NAMES = ["nvlink", "host", "spine", "core"]

NO_LABEL = -1  # a coflow's labels when /coflows lacks its row (a .partial file)

CHUNK_ROWS = 1 << 21  # rows read at a time from big tables

COFLOW_COLUMNS = ["id", "job", "iteration", "micro_batch", "layer", "stage", "type", "key",
                  "class", "flows", "bytes", "start_ps", "end_ps"]
FLOW_COLUMNS = ["id", "coflow", "src_gpu", "dst_gpu", "bytes", "start_ps", "end_ps"]
COMPUTE_COLUMNS = ["task", "gpu", "job", "iteration", "micro_batch", "layer", "kind",
                   "start_ps", "end_ps"]
ITERATION_COLUMNS = ["job", "iteration", "start_ps", "end_ps", "exposed_comm_mean_ps",
                     "exposed_comm_max_ps"]
LINK_COLUMNS = ["id", "src", "dst", "tier", "rate_bps", "bytes", "busy_ps"]
SCHEMA = {"coflows": COFLOW_COLUMNS, "flows": FLOW_COLUMNS, "compute": COMPUTE_COLUMNS,
          "iterations": ITERATION_COLUMNS, "links": LINK_COLUMNS}


class ShoalError(Exception):
    """A problem with the input worth one line to the user."""


def fail(message, code=1):
    """Prints `PROG: error: message` (one line) and exits."""
    sys.stderr.write(f"{PROG}: error: {' '.join(str(message).split())}\n")
    sys.exit(code)


def note(message):
    sys.stderr.write(f"{PROG}: {message}\n")


# ---------------------------------------------------------------- attributes

def attr_value(v):
    """An HDF5 attribute as a plain Python value (bytes -> str, 0-d arrays and
    numpy scalars -> Python scalars, 1-element arrays -> their element)."""
    if isinstance(v, np.ndarray):
        if v.size == 1:
            v = v.reshape(-1)[0]
        else:
            return [attr_value(x) for x in v.tolist()]
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode("utf-8", "replace").rstrip("\x00")
    if isinstance(v, np.generic):
        return v.item()
    return v


def names_attr(ds, attr, default):
    """A comma-separated names attribute (`type_names`, `kind_names`) as a list."""
    if ds is not None and attr in ds.attrs:
        v = attr_value(ds.attrs[attr])
        if isinstance(v, list):
            return [str(x).strip() for x in v]
        return [x.strip() for x in str(v).split(",")]
    return list(default)


def name_of(names, code, fallback="type"):
    code = int(code)
    return names[code] if 0 <= code < len(names) else f"{fallback}{code}"


# ---------------------------------------------------------------- opening

def open_output(path, need=("coflows",)):
    """Opens a Shoal output file for reading, with one-line errors for the usual
    mistakes (no such file, not HDF5, not a Shoal file)."""
    if not os.path.exists(path):
        hint = ""
        if os.path.exists(path + ".partial"):
            hint = (f" ({path}.partial exists: the run is still going or stopped early;"
                    " pass that file to read it)")
        raise ShoalError(f"{path}: no such file{hint}")
    if os.path.isdir(path):
        raise ShoalError(f"{path}: is a folder, not an HDF5 file")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise ShoalError(f"{path}: cannot open as HDF5 ({str(e).splitlines()[0]})") from None
    try:
        for name in need:
            if name not in f or not isinstance(f[name], h5py.Dataset):
                raise ShoalError(f"{path}: no /{name} dataset (not a Shoal output file?)")
        for name, columns in SCHEMA.items():
            ds = dataset(f, name)
            if ds is not None:
                if ds.dtype.names is None or len(ds.shape) != 1:
                    raise ShoalError(f"{path}: /{name} is not a 1-D table (compound dataset)")
                check_columns(f, name, columns)
    except BaseException:
        f.close()
        raise
    return f


def dataset(f, name):
    """The dataset `name`, or None when absent."""
    obj = f.get(name)
    return obj if isinstance(obj, h5py.Dataset) else None


def check_columns(f, name, columns):
    ds = dataset(f, name)
    if ds is None:
        return
    have = ds.dtype.names or ()
    lacking = [c for c in columns if c not in have]
    if lacking:
        raise ShoalError(f"{f.filename}: /{name} lacks column(s) {', '.join(lacking)}")


def read_meta(f):
    """The attributes of /meta as a dict (absent ones are simply missing)."""
    g = f.get("meta")
    if g is None:
        return {}
    return {k: attr_value(v) for k, v in g.attrs.items()}


def read_table(f, name, columns=None, where=None, chunk=CHUNK_ROWS):
    """Reads `columns` (all when None) of dataset `name` into a DataFrame, chunk
    by chunk; `where(frame) -> bool mask` keeps only the rows it selects, so a
    big table need not fit in memory. None when the dataset is absent."""
    ds = dataset(f, name)
    if ds is None:
        return None
    have = ds.dtype.names or ()
    columns = list(have) if columns is None else list(columns)
    lacking = [c for c in columns if c not in have]
    if lacking:
        raise ShoalError(f"{f.filename}: /{name} lacks column(s) {', '.join(lacking)}")
    n = ds.shape[0] if ds.shape else 0
    parts = []
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        if len(columns) == len(have):
            rows = ds[a:b]
        else:
            rows = ds.fields(columns)[a:b]
            if rows.dtype.names is None:  # one field comes back as a plain array
                rows = np.rec.fromarrays([rows], names=columns)
        if len(rows) == 0:
            continue
        frame = pd.DataFrame(rows)[columns]
        if where is not None:
            frame = frame[np.asarray(where(frame), dtype=bool)]
        parts.append(frame)
    if not parts:
        return pd.DataFrame(np.empty(0, dtype=[(c, ds.dtype[c]) for c in columns]))
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def column_max(f, name, column, chunk=CHUNK_ROWS):
    """Largest value of one column (None when the dataset is absent or empty)."""
    ds = dataset(f, name)
    if ds is None or not ds.shape or ds.shape[0] == 0:
        return None
    if column not in (ds.dtype.names or ()):
        raise ShoalError(f"{f.filename}: /{name} lacks column {column}")
    best = None
    for a in range(0, ds.shape[0], chunk):
        v = ds.fields([column])[a:min(ds.shape[0], a + chunk)]
        v = v[column] if v.dtype.names else v
        m = int(v.max())
        best = m if best is None else max(best, m)
    return best


def node_names(f):
    """{node id: name} from /nodes ('leaf 0', 'gpu 12'), or None in files
    written before Shoal wrote /nodes."""
    ds = dataset(f, "nodes")
    if ds is None or not len(ds):
        return None
    rows = ds[:]
    return {int(i): n.decode() if isinstance(n, bytes) else str(n)
            for i, n in zip(rows["id"], rows["name"])}


def phase_end_ps(f):
    """The phase end: the last compute or coflow end (unfinished ones, -1, do not
    count); 0 when nothing finished. A .partial file has no /coflows rows (they
    are written at the end), so there the last flow end stands in for them."""
    cof = column_max(f, "coflows", "end_ps")
    if cof is None:
        cof = column_max(f, "flows", "end_ps")
    ends = [e for e in (column_max(f, "compute", "end_ps"), cof) if e is not None]
    return max([0] + ends)


def last_time_ps(f):
    """The latest start or end of a compute task, flow or coflow in the file:
    where a stopped run had got to, short of any events after it (0: none)."""
    times = [column_max(f, name, column) for name in ("compute", "flows", "coflows")
             for column in ("start_ps", "end_ps")]
    return max([0] + [t for t in times if t is not None])


def missing_tables(f):
    """The end-of-run tables a file lacks or holds no rows of (a .partial file:
    only /flows and /compute are written as the run goes), e.g.
    ['/coflows', '/links']; /flows off by [output] flows = false is not counted."""
    out = []
    for name in ("coflows", "iterations", "links", "link_util"):
        ds = dataset(f, name)
        if ds is None or not ds.shape or ds.shape[0] == 0:
            out.append(f"/{name}")
    return out


def stopped(path, meta):
    """Why a file holds an unfinished run, or None for a finished one: /meta
    completed = 0 (stopped by a signal), or a .partial name without it (the run
    was killed, failed, or is still going)."""
    if "completed" in meta:
        return None if meta["completed"] else "stopped early (completed = 0)"
    if str(path).endswith(".partial"):
        return "unfinished (.partial: killed, failed or still running)"
    return None


def nearest_rank(values, q):
    """The percentile of `shoal run`: the sorted value at index
    floor(q * (n - 1) + 0.5). NaN for no values."""
    v = np.sort(np.asarray(values))
    if v.size == 0:
        return float("nan")
    return v[int(q * (v.size - 1) + 0.5)]


# ---------------------------------------------------------------- GPUs

def parse_gpus(spec):
    """'0-7', '0,2,5-9', '3' -> sorted list of GPU ids."""
    out = set()
    for part in str(spec).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                a, b = int(a), int(b)
                if b < a:
                    raise ValueError
                out.update(range(a, b + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise ShoalError(f"bad GPU list '{spec}' (expected e.g. 0-7 or 0,2,5-9)") from None
    if not out or min(out) < 0:
        raise ShoalError(f"bad GPU list '{spec}' (expected e.g. 0-7 or 0,2,5-9)")
    return sorted(out)


def check_gpus(f, gpus):
    total = read_meta(f).get("gpus")
    if isinstance(total, (int, float)) and total > 0:
        outside = [g for g in gpus if g >= total]
        if outside:
            raise ShoalError(f"{f.filename}: GPU {outside[0]} out of range "
                             f"(the run has {int(total)} GPUs: 0-{int(total) - 1})")


def gpu_compute(f, gpus):
    """Compute tasks of the chosen GPUs, sorted by (gpu, start_ps, task); None
    when /compute is absent."""
    wanted = np.asarray(sorted(gpus), dtype=np.int64)
    frame = read_table(f, "compute", COMPUTE_COLUMNS,
                       where=lambda d: np.isin(d["gpu"].to_numpy(), wanted))
    if frame is None:
        return None
    frame = frame[frame["start_ps"] >= 0]
    return frame.sort_values(["gpu", "start_ps", "task"], kind="mergesort").reset_index(drop=True)


def gpu_coflows(f, gpus):
    """Per chosen GPU, each coflow it has flows in (as sender or receiver): the
    first flow start and last flow end on that GPU, the flows and bytes there,
    and the coflow's labels from /coflows. end_ps is -1 when one of its flows
    on the GPU never finished. Sorted by (gpu, start_ps, coflow). None when
    /flows is absent. Coflows that /coflows lacks (a .partial file) have
    NO_LABEL in every label column; unlabelled() counts them."""
    if dataset(f, "flows") is None:
        return None
    wanted = np.asarray(sorted(gpus), dtype=np.int64)
    flows = read_table(f, "flows", ["coflow", "src_gpu", "dst_gpu", "bytes", "start_ps", "end_ps"],
                       where=lambda d: np.isin(d["src_gpu"].to_numpy(), wanted)
                       | np.isin(d["dst_gpu"].to_numpy(), wanted))
    flows = flows[flows["start_ps"] >= 0]
    # One row per (flow, GPU it touches); a flow from a GPU to itself counts once.
    send = flows[np.isin(flows["src_gpu"].to_numpy(), wanted)].assign(gpu=lambda d: d["src_gpu"])
    recv = flows[np.isin(flows["dst_gpu"].to_numpy(), wanted)
                 & (flows["dst_gpu"] != flows["src_gpu"])].assign(gpu=lambda d: d["dst_gpu"])
    both = pd.concat([send, recv], ignore_index=True)
    cols = ["gpu", "coflow", "start_ps", "end_ps", "flows", "bytes", "unfinished"]
    if both.empty:
        out = pd.DataFrame({c: pd.Series(dtype="int64") for c in cols})
    else:
        both["gpu"] = both["gpu"].astype("int64")
        both["coflow"] = both["coflow"].astype("int64")
        both["unfinished"] = both["end_ps"] < 0
        out = both.groupby(["gpu", "coflow"], sort=False).agg(
            start_ps=("start_ps", "min"), end_ps=("end_ps", "max"), flows=("start_ps", "size"),
            bytes=("bytes", "sum"), unfinished=("unfinished", "any")).reset_index()
        out.loc[out["unfinished"], "end_ps"] = -1
    ids = np.unique(out["coflow"].to_numpy())
    labels = read_table(f, "coflows", ["id", "job", "iteration", "micro_batch", "layer", "stage",
                                       "type", "key", "class", "bytes"],
                        where=lambda d: np.isin(d["id"].to_numpy(), ids))
    labels = labels.rename(columns={"id": "coflow", "bytes": "coflow_bytes"})
    labels["coflow"] = labels["coflow"].astype("int64")
    labels = labels.drop_duplicates("coflow")
    out = out.merge(labels, on="coflow", how="left")
    # A file whose run was killed or failed (OUT.h5.partial) has the flows
    # flushed so far but no /coflows rows, which are written at the end: keep
    # its coflows, with every label NO_LABEL, rather than show nothing.
    for c in ["job", "iteration", "micro_batch", "layer", "stage", "type", "key", "class",
              "coflow_bytes"]:
        out[c] = out[c].fillna(NO_LABEL).astype("int64")
    return out.sort_values(["gpu", "start_ps", "coflow"], kind="mergesort").reset_index(drop=True)


def unlabelled(comm):
    """How many distinct coflows of a gpu_coflows() frame /coflows lacks."""
    if comm is None or comm.empty:
        return 0
    return int(comm.loc[comm["type"] == NO_LABEL, "coflow"].nunique())


def assign_lanes(starts, ends):
    """Greedy interval partitioning: for slices sorted by start, the lowest lane
    whose last slice ended at or before this start. Returns a lane per slice."""
    import heapq
    free = []  # (end, lane) of lanes in use
    lanes = []
    next_lane = 0
    spare = []  # lanes whose slice ended, smallest first
    for s, e in zip(starts, ends):
        while free and free[0][0] <= s:
            heapq.heappush(spare, heapq.heappop(free)[1])
        if spare:
            lane = heapq.heappop(spare)
        else:
            lane = next_lane
            next_lane += 1
        lanes.append(lane)
        heapq.heappush(free, (e, lane))
    return lanes


# ---------------------------------------------------------------- formatting

def fmt_time(ps):
    """Picoseconds in a readable unit: '1.234 ms'."""
    if ps is None or (isinstance(ps, float) and not np.isfinite(ps)):
        return "-"
    ps = float(ps)
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("us", 1e6), ("ns", 1e3)):
        if abs(ps) >= scale:
            return f"{ps / scale:.4g} {unit}"
    return f"{ps:.0f} ps"


def fmt_rate(bps):
    if bps is None or (isinstance(bps, float) and not np.isfinite(bps)):
        return "-"
    bps = float(bps)
    for unit, scale in (("Tb/s", 1e12), ("Gb/s", 1e9), ("Mb/s", 1e6)):
        if bps >= scale:
            return f"{bps / scale:g} {unit}"
    return f"{bps:g} b/s"
