"""Tests of tools/shoal-report and tools/shoal-trace on real `shoal run`
output, when SHOAL_BIN names the simulator (skipped otherwise): a finished
run, one stopped by SIGTERM and one killed by SIGKILL. About 15 s on two cores.

    SHOAL_BIN=build/shoal tests/python/run.sh
"""

import csv
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import test_tools  # its ToolsTest not imported by name, or unittest would run it twice here
from test_tools import REPORT, ROOT, TRACE, command, png_text, run_all, shoal_time, tools_module


@unittest.skipUnless(os.environ.get("SHOAL_BIN"),
                     "set SHOAL_BIN=build/shoal to test on a real output file")
class RealRunTest(unittest.TestCase):
    """The tools on a small real `shoal run` output (64-GPU Qwen example,
    shrunk to about 2 s): their numbers match what `shoal run` prints."""

    @classmethod
    def setUpClass(cls):
        import re
        cls.tmp = tempfile.mkdtemp(prefix="shoal-tools-real-")
        cls.h5 = os.path.join(cls.tmp, "qwen.h5")
        config = os.path.join(ROOT, "configs", "examples", "qwen-64.toml")
        run = subprocess.run(
            [os.environ["SHOAL_BIN"], "run", config, "--set", "job.micro_batches=2",
             "--set", "job.micro_batch_tokens=128", "--set", "network.cell_size=256KiB",
             "--quiet", "-o", cls.h5], capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            raise RuntimeError(f"shoal run failed: {run.stderr[-2000:]}")
        cls.cct = {m[0]: (int(m[1]), shoal_time(m[2]), shoal_time(m[3])) for m in re.findall(
            r"CCT (\w+)\s+n=(\d+) p50 ([\d.]+ \w+) p99 ([\d.]+ \w+)", run.stdout)}
        cls.iterations = [shoal_time(t) for t in
                          re.findall(r"iteration \d+: ([\d.]+ \w+) \(ends", run.stdout)]
        cls.out = os.path.join(cls.tmp, "report")
        cls.res = run_all({
            "report": command(REPORT, cls.h5, "-o", cls.out, "--gpus", "0-1"),
            "trace": command(TRACE, cls.h5, "--gpus", "0-3", "-o",
                             os.path.join(cls.tmp, "trace.json")),
        })

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_report_matches_shoal_run(self):
        res = self.res["report"]
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(os.path.join(self.out, "summary.csv")) as r:
            row = next(csv.DictReader(r))
        self.assertTrue(self.cct)
        for t, (n, p50, p99) in self.cct.items():
            with self.subTest(type=t):
                self.assertEqual(int(row[f"cct_n_{t}"]), n)
                self.assertEqual(int(float(row[f"cct_p50_ps_{t}"])), p50)
                self.assertEqual(int(float(row[f"cct_p99_ps_{t}"])), p99)
        self.assertEqual(row["completed"], "True")
        self.assertEqual(int(row["gpus"]), 64)
        self.assertEqual(row["policy"], "fair")
        if self.iterations:
            self.assertAlmostEqual(float(row["iter_time_ps_job0"]), np.mean(self.iterations),
                                   delta=1)
        for name in ("cct_cdf_EP.png", "link_util_qwen.png", "link_util_time_qwen.png",
                     "timeline_qwen.png"):
            self.assertGreater(os.path.getsize(os.path.join(self.out, name)), 1000)

    def test_link_util_matrix_of_real_run(self):
        # Real bins split a cell over the bins it spans: none above the line rate.
        import h5py
        import pandas as pd
        plots = tools_module("shoal_plots")
        sh = tools_module("shoal_h5")
        with h5py.File(self.h5, "r") as f:
            util, links = pd.DataFrame(f["link_util"][:]), pd.DataFrame(f["links"][:])
            names = sh.node_names(f)
        matrix, labels, ids, k = plots.link_util_matrix(util, links, top=20, node_names=names)
        self.assertEqual(matrix.shape[0], min(20, util["link"].nunique()))
        self.assertEqual(matrix.shape[1], -(-(int(util["bin"].max()) + 1) // k))
        self.assertLessEqual(float(matrix.max()), 1.0 + 1e-9)
        self.assertTrue(all(lab.startswith(f"link {i}: ") for i, lab in zip(ids, labels)))
        # Named as perturbations spell the nodes, from /nodes.
        ends = {int(r.id): (int(r.src), int(r.dst)) for r in links.itertuples()}
        for i, lab in zip(ids, labels):
            src, dst = ends[int(i)]
            self.assertEqual(lab, f"link {i}: {names[src]} -> {names[dst]}")
        self.assertTrue(any(" -> leaf " in lab or "leaf " in lab.split(": ")[1] for lab in labels))

    def test_trace_of_real_run(self):
        res = self.res["trace"]
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(os.path.join(self.tmp, "trace.json")) as r:
            trace = json.load(r)
        test_tools.ToolsTest.check_trace_shape(self, trace, [0, 1, 2, 3])
        names = {e["name"].split()[0] for e in trace["traceEvents"] if e["ph"] == "X"}
        self.assertTrue({"fwd", "bwd", "EP", "DP"} <= names, names)


@unittest.skipUnless(os.environ.get("SHOAL_BIN"),
                     "set SHOAL_BIN=build/shoal to test on real unfinished output files")
class StoppedRunTest(unittest.TestCase):
    """The tools on real unfinished files (docs/output.md): a run stopped by
    SIGTERM (OUT.h5 with completed = 0) and one killed by SIGKILL (only
    OUT.h5.partial, with the /flows and /compute rows flushed so far)."""

    @classmethod
    def setUpClass(cls):
        import signal
        import time
        cls.tmp = tempfile.mkdtemp(prefix="shoal-tools-stopped-")
        config = os.path.join(ROOT, "configs", "examples", "qwen-64.toml")
        cls.files = {}
        for sig, name in ((signal.SIGTERM, "stopped"), (signal.SIGKILL, "killed")):
            out = os.path.join(cls.tmp, f"{name}.h5")
            # 8,192 tokens a micro-batch: a minute of work, so no machine
            # finishes it before the signal (as tests/cli/hdf5_output.sh).
            p = subprocess.Popen([os.environ["SHOAL_BIN"], "run", config, "--set",
                                  "job.micro_batch_tokens=8192", "--quiet", "-o", out],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 60
            while (not os.path.exists(out + ".partial") and p.poll() is None
                   and time.monotonic() < deadline):
                time.sleep(0.1)
            # 3 s of running: past the first flush of /flows rows (every 4 M events).
            time.sleep(3)
            p.send_signal(sig)
            _, err = p.communicate(timeout=120)
            cls.files[name] = out if sig == signal.SIGTERM else out + ".partial"
            if not os.path.exists(cls.files[name]):
                raise RuntimeError(f"shoal run left no {cls.files[name]}: {err[-2000:]}")
        cls.res = run_all({
            f"trace-{k}": command(TRACE, path, "--gpus", "0-1", "-o",
                                  os.path.join(cls.tmp, f"trace-{k}.json"))
            for k, path in cls.files.items()} | {
            "report": command(REPORT, cls.files["stopped"], cls.files["killed"], "--gpus", "0",
                              "-o", os.path.join(cls.tmp, "report"))})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def trace(self, name):
        res = self.res[f"trace-{name}"]
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)  # the note
        with open(os.path.join(self.tmp, f"trace-{name}.json")) as r:
            trace = json.load(r)
        test_tools.ToolsTest.check_trace_shape(self, trace, [0, 1])
        return res, [e for e in trace["traceEvents"] if e["ph"] == "X"]

    def test_trace_of_killed_run(self):
        res, slices = self.trace("killed")
        self.assertIn("/coflows", res.stderr)
        cats = {e["cat"] for e in slices}
        self.assertEqual(cats, {"compute", "coflow"}, cats)
        self.assertTrue(all(e["name"].startswith("coflow ") for e in slices
                            if e["cat"] == "coflow"))

    def test_trace_of_stopped_run(self):
        res, slices = self.trace("stopped")
        self.assertIn("completed = 0", res.stderr)
        names = {e["name"].split()[0] for e in slices}
        self.assertTrue({"fwd", "EP"} <= names, names)

    def test_report_of_unfinished_runs(self):
        res = self.res["report"]
        self.assertEqual(res.returncode, 0, res.stderr)
        for name in ("stopped.h5", "killed.h5.partial"):
            line = next(l for l in res.stdout.splitlines() if l.startswith(name))
            self.assertIn(" NO ", line)
        for plot in ("timeline_stopped.png", "timeline_killed-partial.png",
                     "link_util_time_stopped.png"):
            self.assertGreater(os.path.getsize(os.path.join(self.tmp, "report", plot)), 1000)
        title = png_text(os.path.join(self.tmp, "report", "link_util_time_stopped.png"))["Title"]
        self.assertIn("STOPPED at", title)


if __name__ == "__main__":
    unittest.main()
