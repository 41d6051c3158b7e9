"""Tests of tools/shoal-report and tools/shoal-trace on small synthetic HDF5
files in the schema of docs/output.md (tests/python/synth.py writes them).

    python3 -m unittest discover -s tests/python -v     (or tests/python/run.sh)

No network, no simulator; about 15 s on two cores (the tools run three at a time).
test_real_runs.py tests them on real `shoal run` output when SHOAL_BIN is set.
"""

import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REPORT = os.path.join(ROOT, "tools", "shoal-report")
TRACE = os.path.join(ROOT, "tools", "shoal-trace")
sys.path.insert(0, HERE)
import synth  # noqa: E402

TYPES = ["EP", "PP", "DP", "TP", "OTHER", "CP"]
KINDS = ["other", "fwd", "bwd", "optimizer"]


def command(tool, *args, direct=False):
    """The command line of a tool; `direct` runs the file itself (its shebang)
    instead of this interpreter with the file."""
    return ([tool] if direct else [sys.executable, tool]) + [str(a) for a in args]


def run_all(commands, parallel=3):
    """Runs {name: command} a few at a time (the tools spend most of their time
    importing pandas and drawing); returns {name: CompletedProcess}."""
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    pending, running, done = list(commands.items()), {}, {}
    while pending or running:
        while pending and len(running) < parallel:
            name, cmd = pending.pop(0)
            running[name] = (cmd, subprocess.Popen(cmd, env=env, text=True,
                                                   stdout=subprocess.PIPE,
                                                   stderr=subprocess.PIPE))
        name = next(iter(running))
        cmd, p = running.pop(name)
        out, err = p.communicate(timeout=120)
        done[name] = subprocess.CompletedProcess(cmd, p.returncode, out, err)
    return done


def rank(values, q):
    """Independent nearest-rank percentile (as `shoal run`): round half up."""
    v = sorted(int(x) for x in values)
    i = int(math.floor(q * (len(v) - 1) + 0.5))
    return v[i]


def expect_summary(rows):
    """The summary numbers computed straight from the rows a file holds."""
    cof, comp, it = rows["coflows"], rows["compute"], rows["iterations"]
    finished = cof[(cof["end_ps"] >= 0) & (cof["start_ps"] >= 0)]
    phase_end = max(int(comp["end_ps"].max()), int(finished["end_ps"].max()))
    out = {"phase_end_ps": phase_end, "unfinished": len(cof) - len(finished), "cct": {}}
    for code in set(int(t) for t in finished["type"]):
        sel = finished[finished["type"] == code]
        cct = sel["end_ps"] - sel["start_ps"]
        out["cct"][TYPES[code]] = (len(cct), rank(cct, 0.5), rank(cct, 0.99))
    if len(it):
        out["iter_time_ps"] = float(np.mean(it["end_ps"] - it["start_ps"]))
        out["exposed_comm_mean_ps"] = float(np.mean(it["exposed_comm_mean_ps"]))
        out["iter_time_source"] = "iterations"
    else:
        out["iter_time_ps"] = float(phase_end)
        out["iter_time_source"] = "phase_end"
    return out


def png_text(path):
    """The text chunks of a PNG ({keyword: text}): the tools put a plot's
    title there (shoal_plots.save), so a test can read what it says."""
    import struct
    import zlib
    with open(path, "rb") as r:
        data = r.read()
    out, pos = {}, 8
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"tEXt":
            key, text = body.split(b"\0", 1)
            out[key.decode("latin-1")] = text.decode("latin-1")
        elif kind == b"iTXt":
            key, rest = body.split(b"\0", 1)
            packed, rest = rest[0], rest[2:]
            text = rest.split(b"\0", 2)[2]
            out[key.decode("latin-1")] = (zlib.decompress(text) if packed else text).decode()
        pos += 12 + n
    return out


def tools_module(name):
    """A module of tools/ (shoal_h5, shoal_plots), imported without bytecode."""
    sys.dont_write_bytecode = True
    path = os.path.join(ROOT, "tools")
    if path not in sys.path:
        sys.path.insert(0, path)
    return __import__(name)


def perfetto_ns(us):
    """What Perfetto's JSON importer makes of a microsecond float."""
    return int(us * 1000.0)


class ToolsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="shoal-tools-test-")
        d = cls.tmp
        cls.paths = {k: os.path.join(d, f"{k}.h5") for k in ("a", "b", "c", "d")}
        # a: hermod 8 GPUs 400G; b: hermod 16 GPUs 400G, no /flows;
        # c: fair 8 GPUs 800G, no /iterations rows, stopped early, one unfinished coflow;
        # d: hermod 8 GPUs 800G (with a: a link-rate sweep).
        cls.rows = {
            "a": synth.make_run(cls.paths["a"], gpus=8, rate_bps=400 * 10**9, policy="hermod",
                                seed=11),
            "b": synth.make_run(cls.paths["b"], gpus=16, rate_bps=400 * 10**9, policy="hermod",
                                seed=12, with_flows=False),
            "c": synth.make_run(cls.paths["c"], gpus=8, rate_bps=800 * 10**9, policy="fair",
                                seed=13, with_iterations=False, completed=False,
                                unfinished_coflow=True),
            "d": synth.make_run(cls.paths["d"], gpus=8, rate_bps=800 * 10**9, policy="hermod",
                                seed=14),
        }
        # What a killed run leaves: flows and compute so far, no /coflows rows.
        cls.partial = os.path.join(d, "killed.h5.partial")
        cls.rows["killed"] = synth.make_run(cls.partial, gpus=8, seed=15, killed=True)
        cls.no_coflows = os.path.join(d, "nocoflows.h5")
        synth.make_run(cls.no_coflows, with_coflows=False)
        cls.not_hdf5 = os.path.join(d, "text.h5")
        with open(cls.not_hdf5, "w") as w:
            w.write("not an HDF5 file\n")
        cls.out = os.path.join(d, "rep")
        missing = os.path.join(d, "missing.h5")
        cls.error_cases = {
            "report-missing": command(REPORT, missing),
            "trace-missing": command(TRACE, missing),
            "report-nocoflows": command(REPORT, cls.no_coflows, "--no-plots"),
            "trace-nocoflows": command(TRACE, cls.no_coflows),
            "report-not-hdf5": command(REPORT, cls.not_hdf5, "--no-plots"),
            "trace-bad-gpus": command(TRACE, cls.paths["a"], "--gpus", "0-99"),
        }
        fl = cls.rows["c"]["flows"]
        cls.open_gpu = int(fl["src_gpu"][fl["end_ps"] < 0][0])
        commands = {
            "report": command(REPORT, cls.paths["a"], cls.paths["b"], cls.paths["c"],
                              "-o", cls.out),
            # a and d: hermod at 400 and 800 Gb/s, both 8 GPUs; no -o: report/ next to a.h5.
            "report-rates": command(REPORT, cls.paths["a"], cls.paths["d"], "--gpus", "0"),
            # Through the shebang: also checks the executable bit and the
            # fallback to /usr/bin/python3 when `python3` lacks h5py.
            "trace": command(TRACE, cls.paths["a"], "--gpus", "0-1,5", "-o",
                             os.path.join(d, "trace.json"), direct=True),
            "trace-b": command(TRACE, cls.paths["b"], "--gpus", "2", "-o",
                               os.path.join(d, "trace-b.json")),
            "trace-c": command(TRACE, cls.paths["c"], "--gpus", cls.open_gpu, "-o",
                               os.path.join(d, "trace-c.json")),
            "trace-partial": command(TRACE, cls.partial, "--gpus", "0,5", "-o",
                                     os.path.join(d, "trace-partial.json")),
            "report-partial": command(REPORT, cls.partial, "--gpus", "0", "-o",
                                      os.path.join(d, "rep-partial")),
            "help-report": command(REPORT, "--help"),
            "help-trace": command(TRACE, "--help"),
        }
        commands.update(cls.error_cases)
        cls.res = run_all(commands)
        cls.report = cls.res["report"]
        cls.summary = {}
        if cls.report.returncode == 0:
            with open(os.path.join(cls.out, "summary.csv")) as r:
                cls.summary = {os.path.basename(row["file"])[0]: row
                               for row in csv.DictReader(r)}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # ------------------------------------------------------------ report

    def test_report_runs(self):
        self.assertEqual(self.report.returncode, 0, self.report.stderr)
        self.assertEqual(set(self.summary), {"a", "b", "c"})

    def test_summary_numbers(self):
        self.assertEqual(self.report.returncode, 0, self.report.stderr)
        for k in ("a", "b", "c"):
            row, want = self.summary[k], expect_summary(self.rows[k])
            with self.subTest(file=k):
                self.assertEqual(int(row["phase_end_ps"]), want["phase_end_ps"])
                self.assertAlmostEqual(float(row["iter_time_ps"]), want["iter_time_ps"], places=3)
                self.assertEqual(row["iter_time_source"], want["iter_time_source"])
                self.assertEqual(int(row["unfinished_coflows"]), want["unfinished"])
                for t, (n, p50, p99) in want["cct"].items():
                    self.assertEqual(int(row[f"cct_n_{t}"]), n)
                    self.assertEqual(int(float(row[f"cct_p50_ps_{t}"])), p50)
                    self.assertEqual(int(float(row[f"cct_p99_ps_{t}"])), p99)
                if "exposed_comm_mean_ps" in want:
                    self.assertAlmostEqual(float(row["exposed_comm_mean_ps"]),
                                           want["exposed_comm_mean_ps"], places=3)
                else:
                    self.assertEqual(row["exposed_comm_mean_ps"], "")
        self.assertEqual(self.summary["a"]["policy"], "hermod")
        self.assertEqual(self.summary["c"]["policy"], "fair")
        self.assertEqual(int(self.summary["b"]["gpus"]), 16)
        self.assertEqual(int(self.summary["c"]["link_rate_bps"]), 800 * 10**9)
        self.assertEqual(self.summary["a"]["completed"], "True")
        self.assertEqual(self.summary["c"]["completed"], "False")
        self.assertEqual(self.summary["c"]["fabric"], "fat-tree (2-tier radix=8 gpus=8)")

    def test_printed_table(self):
        out = self.report.stdout
        lines = out.splitlines()
        header = lines[0]
        for col in ("fabric", "GPUs", "link", "policy", "phase end", "iteration", "exposed",
                    "EP p50/p99", "DP p50/p99"):
            self.assertIn(col, header)
        for name in ("a.h5", "b.h5", "c.h5"):
            self.assertTrue(any(l.startswith(name) for l in lines), out)
        c_line = next(l for l in lines if l.startswith("c.h5"))
        self.assertIn("NO", c_line)        # completed = false
        self.assertIn("800 Gb/s", c_line)
        self.assertIn("(phase)", c_line)   # iteration time from the phase end
        self.assertIn("stopped early", out)
        self.assertIn("never finished", out)

    def test_unfinished_iterations(self):
        # A stopped run's iterations end at -1 (docs/output.md): no iteration
        # time, rather than the stop time passed off as one.
        import h5py
        path = os.path.join(self.tmp, "stopped.h5")
        synth.make_run(path, seed=21, completed=False)
        with h5py.File(path, "r+") as f:
            it = f["iterations"][:]
            it["end_ps"] = -1
            f["iterations"][...] = it
        out = os.path.join(self.tmp, "rep-stopped")
        res = subprocess.run(command(REPORT, path, "--no-plots", "-o", out), capture_output=True,
                             text=True, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        line = next(l for l in res.stdout.splitlines() if l.startswith("stopped.h5"))
        self.assertIn("- (unfinished)", line)
        with open(os.path.join(out, "summary.csv")) as r:
            row = next(csv.DictReader(r))
        self.assertEqual(row["iter_time_source"], "unfinished")
        self.assertEqual(row["iter_time_ps"], "")  # NaN

    def test_plots(self):
        self.assertEqual(self.report.returncode, 0, self.report.stderr)
        expected = ["cct_cdf_EP.png", "cct_cdf_DP.png", "iteration_vs_gpus.png",
                    "link_util_a.png", "link_util_b.png", "link_util_c.png",
                    "timeline_a.png", "timeline_b.png", "timeline_c.png"]
        for name in expected:
            path = os.path.join(self.out, name)
            with self.subTest(plot=name):
                self.assertTrue(os.path.isfile(path), self.report.stdout)
                self.assertGreater(os.path.getsize(path), 1000)
                with open(path, "rb") as r:
                    self.assertEqual(r.read(8), b"\x89PNG\r\n\x1a\n")
        # a (hermod 400G) and c (fair 800G): no policy has two link rates.
        self.assertFalse(os.path.exists(os.path.join(self.out, "iteration_vs_rate.png")))
        self.assertIn("iteration_vs_rate.png: skipped", self.report.stdout)
        self.assertIn("timeline_b.png: b.h5 has no /flows", self.report.stdout)

    def test_link_util_heat_map(self):
        # A heat map per file (links x time bins); the stopped run c is marked
        # in its title, the finished a is not.
        self.assertEqual(self.report.returncode, 0, self.report.stderr)
        titles = {}
        for k in ("a", "c"):
            path = os.path.join(self.out, f"link_util_time_{k}.png")
            self.assertGreater(os.path.getsize(path), 1000)
            titles[k] = png_text(path).get("Title", "")
        self.assertIn("8 busiest links over time", titles["a"])
        self.assertNotIn("STOPPED", titles["a"])
        util = self.rows["c"]["link_util"]
        self.assertIn("STOPPED at", titles["c"])
        self.assertIn("(completed = 0)", titles["c"])
        # The stop shown is the latest time the file knows, at least the
        # last /link_util bin's start.
        self.assertGreaterEqual(shoal_time(titles["c"].split("STOPPED at ")[1].split(" (")[0]),
                                int(util["start_ps"].max()) * (1 - 1e-3))

    def test_link_util_matrix(self):
        plots = tools_module("shoal_plots")
        import pandas as pd
        rows = self.rows["a"]
        util, links = pd.DataFrame(rows["link_util"]), pd.DataFrame(rows["links"])
        bins = int(util["bin"].max()) + 1
        matrix, labels, ids, k = plots.link_util_matrix(util, links, top=20)
        self.assertEqual(k, 1)
        self.assertEqual(matrix.shape, (8, bins))  # the 8 GPU uplinks of synth
        self.assertLessEqual(float(matrix.max()), 1.0 + 1e-9)
        self.assertGreater(float(matrix.max()), 0.5)
        sent = util.groupby("link")["bytes"].sum()
        self.assertEqual(list(ids), sorted(sent.index, key=lambda i: (-sent[i], i)))
        ends = {int(r["id"]): r for r in rows["links"]}
        for i, lab in zip(ids, labels):
            e = ends[int(i)]
            self.assertEqual(lab, f"link {i}: {e['src']}→{e['dst']} host")
        for r in util.itertuples():
            self.assertAlmostEqual(matrix[list(ids).index(r.link), r.bin], r.utilization)
        # Fewer columns than bins: means of k bins, every bin counted once.
        few, _, _, k = plots.link_util_matrix(util, links, top=3, max_columns=10)
        self.assertEqual(k, -(-bins // 10))
        self.assertEqual(few.shape, (3, -(-bins // k)))
        self.assertLessEqual(float(few.max()), 1.0 + 1e-9)
        counts = np.full(few.shape[1], k)
        counts[-1] = bins - k * (few.shape[1] - 1)
        self.assertTrue(np.allclose((few * counts).sum(axis=1), matrix[:3].sum(axis=1)))
        # Without /links: ids only.
        _, labels, _, _ = plots.link_util_matrix(util, None, top=2)
        self.assertEqual(labels, [f"link {i}" for i in ids[:2]])

    def test_iteration_by_policy_legend_clear(self):
        # The legend sits outside every panel, where it cannot cover a bar.
        from importlib.machinery import SourceFileLoader
        from importlib.util import module_from_spec, spec_from_loader
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        tools_module("shoal_h5")
        loader = SourceFileLoader("shoal_report", REPORT)  # no .py: a spec by hand
        report = module_from_spec(spec_from_loader("shoal_report", loader))
        loader.exec_module(report)
        figures = []
        report.save = lambda fig, path, written, title=None: figures.append(fig)
        runs = [{"meta": {"gpus": g, "link_rate_bps": 4 * 10**11, "policy": p},
                 "iter_time_ps": 10**9 * (1 + 0.01 * k), "exposed_comm_mean_ps": 3 * 10**8}
                for g in (8, 16) for k, p in enumerate(("fair", "lina", "ep-pp-first", "hermod"))]
        report.plot_iteration_by_policy(plt, runs, self.tmp, [], [])
        self.assertEqual(len(figures), 1)
        fig = figures[0]
        fig.canvas.draw()
        legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
        self.assertEqual(len(legends), 1)
        box = legends[0].get_window_extent()
        for ax in fig.axes:
            self.assertFalse(box.overlaps(ax.get_window_extent()), ax.get_title())
        plt.close(fig)

    def test_rate_sweep_and_default_folder(self):
        res = self.res["report-rates"]
        self.assertEqual(res.returncode, 0, res.stderr)
        folder = os.path.join(self.tmp, "report")
        self.assertTrue(os.path.isfile(os.path.join(folder, "summary.csv")))
        self.assertGreater(os.path.getsize(os.path.join(folder, "iteration_vs_rate.png")), 1000)
        self.assertFalse(os.path.exists(os.path.join(folder, "iteration_vs_gpus.png")))
        self.assertIn("iteration_vs_gpus.png: skipped", res.stdout)

    # ------------------------------------------------------------ trace

    def check_trace_shape(self, trace, gpus):
        self.assertIsInstance(trace["traceEvents"], list)
        names = {}
        for e in trace["traceEvents"]:
            self.assertIn(e["ph"], ("X", "M"))
            if e["ph"] == "M":
                if e["name"] == "process_name":
                    names[e["pid"]] = e["args"]["name"]
                continue
            for key in ("pid", "tid", "ts", "dur", "name", "ph"):
                self.assertIn(key, e)
            self.assertIsInstance(e["ts"], float)
            self.assertIsInstance(e["dur"], float)
            self.assertGreaterEqual(e["dur"], 0)
        self.assertEqual(names, {g + 1: f"GPU {g}" for g in gpus})
        # Slices of one thread never overlap, also in Perfetto's integer ns.
        by_thread = {}
        for e in trace["traceEvents"]:
            if e["ph"] == "X":
                by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
        for evs in by_thread.values():
            evs.sort(key=lambda e: e["ts"])
            for x, y in zip(evs, evs[1:]):
                self.assertLessEqual(perfetto_ns(x["ts"]) + perfetto_ns(x["dur"]),
                                     perfetto_ns(y["ts"]), (x, y))

    def expected_compute(self, rows, gpu):
        comp = rows["compute"][rows["compute"]["gpu"] == gpu]
        return sorted((f"{KINDS[r['kind']]} mb{r['micro_batch']} L{r['layer']}",
                       int(r["start_ps"]), int(r["end_ps"])) for r in comp)

    def expected_comm(self, rows, gpu):
        fl = rows["flows"]
        mine = fl[(fl["src_gpu"] == gpu) | (fl["dst_gpu"] == gpu)]
        cof = {int(c["id"]): c for c in rows["coflows"]}
        out = []
        for cid in sorted(set(int(c) for c in mine["coflow"])):
            f = mine[mine["coflow"] == cid]
            c = cof[cid]
            end = -1 if (f["end_ps"] < 0).any() else int(f["end_ps"].max())
            out.append((f"{TYPES[c['type']]} mb{c['micro_batch']} L{c['layer']}",
                        int(f["start_ps"].min()), end))
        return sorted(out)

    @staticmethod
    def slices(trace, pid, cat_compute):
        got = []
        for e in trace["traceEvents"]:
            if e["ph"] == "X" and e["pid"] == pid and (e["cat"] == "compute") == cat_compute:
                got.append((e["name"], e["args"]["start_ps"], e["args"]["end_ps"],
                            e["ts"], e["dur"]))
        return sorted(got)

    def test_trace(self):
        out = os.path.join(self.tmp, "trace.json")
        res = self.res["trace"]
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(out) as r:
            trace = json.load(r)
        self.check_trace_shape(trace, [0, 1, 5])
        rows = self.rows["a"]
        for g in (0, 1, 5):
            with self.subTest(gpu=g):
                comp = self.slices(trace, g + 1, True)
                self.assertEqual([s[:3] for s in comp], self.expected_compute(rows, g))
                comm = self.slices(trace, g + 1, False)
                self.assertEqual([s[:3] for s in comm], self.expected_comm(rows, g))
                self.assertTrue(any(s[0].startswith("EP ") for s in comm))
                self.assertTrue(any(s[0].startswith("DP ") for s in comm))
                for name, start, end, ts, dur in comp + comm:
                    self.assertAlmostEqual(ts, start / 1e6, delta=1e-9)
                    self.assertAlmostEqual(dur, (end - start) / 1e6, delta=1e-9)
        threads = {e["args"]["name"] for e in trace["traceEvents"]
                   if e["ph"] == "M" and e["name"] == "thread_name"}
        self.assertTrue({"compute", "comm"} <= threads)

    def test_trace_without_flows(self):
        out = os.path.join(self.tmp, "trace-b.json")
        res = self.res["trace-b"]
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("no /flows", res.stderr)
        with open(out) as r:
            trace = json.load(r)
        self.check_trace_shape(trace, [2])
        self.assertEqual(len(self.slices(trace, 3, False)), 0)
        self.assertEqual([s[:3] for s in self.slices(trace, 3, True)],
                         self.expected_compute(self.rows["b"], 2))

    def test_trace_unfinished_coflow(self):
        rows, gpu = self.rows["c"], self.open_gpu
        out = os.path.join(self.tmp, "trace-c.json")
        res = self.res["trace-c"]
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(out) as r:
            trace = json.load(r)
        self.check_trace_shape(trace, [gpu])
        self.assertEqual([s[:3] for s in self.slices(trace, gpu + 1, False)],
                         self.expected_comm(rows, gpu))
        open_ones = [e for e in trace["traceEvents"]
                     if e["ph"] == "X" and e["args"].get("unfinished")]
        self.assertEqual(len(open_ones), 1)
        phase_end = expect_summary(rows)["phase_end_ps"]
        e = open_ones[0]
        self.assertAlmostEqual(e["ts"] + e["dur"], phase_end / 1e6, delta=1e-6)

    def test_trace_partial_file(self):
        # A killed run's file: /flows names coflows /coflows has no row of yet.
        # The trace draws them by id and says, in one line, what was missing.
        rows = self.rows["killed"]
        self.assertEqual(len(rows["coflows"]), 0)
        res = self.res["trace-partial"]
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn("/coflows", res.stderr)
        self.assertIn(".partial", res.stderr)
        with open(os.path.join(self.tmp, "trace-partial.json")) as r:
            trace = json.load(r)
        self.check_trace_shape(trace, [0, 5])
        fl = rows["flows"]
        for g in (0, 5):
            with self.subTest(gpu=g):
                self.assertEqual([s[:3] for s in self.slices(trace, g + 1, True)],
                                 self.expected_compute(rows, g))
                mine = fl[(fl["src_gpu"] == g) | (fl["dst_gpu"] == g)]
                want = sorted((f"coflow {c}", int(mine["start_ps"][mine["coflow"] == c].min()),
                               int(mine["end_ps"][mine["coflow"] == c].max()))
                              for c in set(int(c) for c in mine["coflow"]))
                self.assertTrue(want)
                self.assertEqual([s[:3] for s in self.slices(trace, g + 1, False)], want)
        self.assertIn("unfinished", trace["otherData"])

    def test_report_partial_file(self):
        res = self.res["report-partial"]
        self.assertEqual(res.returncode, 0, res.stderr)
        line = next(l for l in res.stdout.splitlines() if l.startswith("killed.h5.partial"))
        self.assertIn("NO", line)
        self.assertIn("- (unfinished)", line)  # the kill time is no iteration time
        self.assertIn("tables without rows: /coflows", res.stdout)
        self.assertIn("link_util_time_killed-partial.png: skipped (no /link_util rows (a .partial",
                      res.stdout)
        path = os.path.join(self.tmp, "rep-partial", "timeline_killed-partial.png")
        self.assertGreater(os.path.getsize(path), 1000)

    def test_scale_plot(self):
        # tools/shoal-report --scale: the table of `shoal scale -o` as scaling.png,
        # its speedups in the title; a CSV that is not one is one error line.
        table = os.path.join(self.tmp, "scale.csv")
        with open(table, "w") as f:
            f.write("ranks,partition,lookahead_ps,windows,events,remote_events,batches,balance,"
                    "work_s,reduce_s,exchange_s,loop_s,speedup,efficiency,sync_share,fewest_windows,"
                    "fewest_work_s,causal_work_s,critical_path_s,recommended\n"
                    "1,topology,-1,0,1000,0,0,1,2.0,0,0,2.0,1,1,0,0,2.0,2.0,2.0,0\n"
                    "2,topology,1000000,50,1000,100,80,0.9,1.1,0.05,0.05,1.2,1.6667,0.8333,0.1,40,"
                    "1.04,1.05,1.02,1\n"
                    "4,topology,1000000,50,1000,200,200,0.8,0.6,0.1,0.3,1.0,2.0,0.5,0.4,45,"
                    "0.57,0.58,0.55,0\n")
        out = os.path.join(self.tmp, "rep-scale")
        res = subprocess.run(command(REPORT, "--scale", table, "-o", out), capture_output=True,
                             text=True, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        title = png_text(os.path.join(out, "scaling.png")).get("Title", "")
        self.assertIn("1: 1.00x, 2: 1.67x, 4: 2.00x", title)
        bad = os.path.join(self.tmp, "not-scale.csv")
        with open(bad, "w") as f:
            f.write("a,b\n1,2\n")
        res = subprocess.run(command(REPORT, "--scale", bad), capture_output=True, text=True,
                             timeout=120)
        self.assertNotEqual(res.returncode, 0)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn("not a table of shoal scale -o", res.stderr)

    # ------------------------------------------------------------ errors

    def test_errors_are_one_line(self):
        for name in self.error_cases:
            res = self.res[name]
            with self.subTest(case=name):
                self.assertNotEqual(res.returncode, 0)
                self.assertNotIn("Traceback", res.stderr)
                self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
                self.assertIn("error:", res.stderr)
        self.assertIn("no such file", self.res["report-missing"].stderr)
        self.assertIn("no /coflows", self.res["trace-nocoflows"].stderr)
        self.assertIn("out of range", self.res["trace-bad-gpus"].stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "nocoflows.trace.json")))

    def test_help(self):
        for name in ("help-report", "help-trace"):
            res = self.res[name]
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertIn("usage:", res.stdout)
            self.assertIn("--gpus", res.stdout)


UNIT_PS = {"ps": 1, "ns": 10**3, "us": 10**6, "ms": 10**9, "s": 10**12}


def shoal_time(text):
    """'206.73856 us' (shoal's exact format_time) -> picoseconds."""
    from decimal import Decimal
    value, unit = text.split()
    return int(Decimal(value) * UNIT_PS[unit])


if __name__ == "__main__":
    unittest.main()
