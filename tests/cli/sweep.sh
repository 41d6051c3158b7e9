#!/usr/bin/env bash
# `shoal sweep` (docs/sweeps.md) end to end on configs/sweeps/tiny.toml:
# --list/--count/--check; --point by index and by name equals `shoal run --set`
# of the same overrides; --all on 2 ranks gives the same tables as 1 rank;
# finished points are skipped (resume), an incomplete one is rerun, a point
# started twice runs once; mistakes
# are one-line errors naming the sweep file, the key or the point.
# Usage: sweep.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
py=/usr/bin/python3  # Debian's Python, where python3-h5py lives
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
sweep=$src/configs/sweeps/tiny.toml
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# --count, --list (names, GPUs, ranks, status), --check.
[ "$("$shoal" sweep "$sweep" --count)" = 4 ] && ok "--count: 4 points" || fail "--count"
"$shoal" sweep "$sweep" --list --results one >list.txt
if [ "$(grep -vc '^#' list.txt)" = 4 ] &&
  grep -qx '3 link-rate-400Gbps_policy-hermod 32 1 todo one/link-rate-400Gbps_policy-hermod.h5' list.txt; then
  ok "--list: index, name, GPUs, ranks, status and file"
else
  fail "--list:"; cat list.txt
fi
"$shoal" sweep "$sweep" --check >check.txt && grep -q "checked 3 of 4 points" check.txt &&
  ok "--check reads one point per axis value" || fail "--check: $(cat check.txt)"

# One point by index and one by name, each equal to `shoal run` with its overrides.
"$shoal" -q sweep "$sweep" --results one --point 3 >/dev/null
"$shoal" -q sweep "$sweep" --results one --point link-rate-100Gbps_policy-fair >/dev/null
"$shoal" -q run "$src/configs/sweeps/tiny-base.toml" --set run.seed=7 --set topology.link_rate=400Gbps \
  --set policy.name=hermod -o direct.h5 >/dev/null
# All four on 2 ranks: 0 and 3 are done and skipped, 1 and 2 run.
timeout 300 "$mpirun" -np 2 "$shoal" -q sweep "$sweep" --results one --all >all.txt
grep -c "already done, skipped" all.txt | grep -qx 2 && ok "--all skips the 2 finished points" ||
  fail "--all did not skip exactly the finished points: $(cat all.txt)"
# The same sweep on 1 rank elsewhere: every table identical, whatever ranked it.
"$shoal" -q sweep "$sweep" --results two --all >/dev/null
PYTHONPATH="$src/tests/cli" "$py" - <<'PY' || failures=$((failures + 1))
import glob, os, sys
from shoal_tables import sorted_tables as tables, differing
bad = 0
names = sorted(os.path.basename(p) for p in glob.glob("one/*.h5"))
assert len(names) == 4, names
for n in names:
    a, ma = tables("one/" + n)
    b, mb = tables("two/" + n)
    same = not differing(a, b)
    good = same and ma["completed"] == 1 and mb["completed"] == 1 and ma["sweep_point"].endswith(":" + n[:-3])
    print("%s   %s: sweep output identical at 1 and 2 ranks, completed, named" % ("ok" if good else "FAIL", n))
    bad += not good
a, ma = tables("one/link-rate-400Gbps_policy-hermod.h5")
d, md = tables("direct.h5")
same = not differing(a, d)
good = same and ma["overrides"] == "run.seed=7\ntopology.link_rate=\"400Gbps\"\npolicy.name=\"hermod\"" and ma["policy"] == "hermod"
print("%s   a point equals shoal run --set with its overrides (recorded in /meta)" % ("ok" if good else "FAIL"))
bad += not good
sys.exit(1 if bad else 0)
PY

# Resume: an incomplete file (completed = 0, as a signal leaves it) is rerun.
"$py" -c "import h5py; h5py.File('one/link-rate-100Gbps_policy-hermod.h5', 'r+')['meta'].attrs['completed'] = 0"
"$shoal" sweep "$sweep" --list --results one | grep -q " partial one/link-rate-100Gbps_policy-hermod.h5" &&
  ok "--list marks an incomplete file partial" || fail "--list does not show the partial point"
"$shoal" -q sweep "$sweep" --results one --all >resume.txt
if grep -q "point 1 of 4 (link-rate-100Gbps_policy-hermod): 32 GPUs on 1 rank; rerunning an incomplete file" resume.txt &&
  [ "$(grep -c 'already done, skipped' resume.txt)" = 3 ] &&
  "$shoal" sweep "$sweep" --list --results one | grep -v '^#' | awk '{print $5}' | sort -u | grep -qx done; then
  ok "a resubmitted sweep reruns only the incomplete point"
else
  fail "resume: $(cat resume.txt)"
fi

# A completed file of another config (here [set] changed) is neither skipped
# as the point's result nor overwritten: --list says stale, running the point
# fails naming the file and why, and submit-sweep submits nothing.
sed -e "s|^base = .*|base = \"$src/configs/sweeps/tiny-base.toml\"|" -e 's/^run.seed = 7/run.seed = 8/' \
  "$sweep" >stale.toml
rc=0; "$shoal" sweep stale.toml --point 0 --results one 2>stale.err >/dev/null || rc=$?
rc2=0; SHOAL_BIN=$shoal SHOAL_RESULTS=one "$src/slurm/submit-sweep" stale.toml >/dev/null 2>submit.err || rc2=$?
if [ "$("$shoal" sweep stale.toml --list --results one | grep -v '^#' | awk '{print $5}' | sort -u)" = stale ] &&
  [ "$rc" -ne 0 ] && grep -q "one/link-rate-100Gbps_policy-fair.h5 is a completed run, but its config differs from the point's" stale.err &&
  [ "$rc2" -ne 0 ] && grep -q "point(s) .* hold completed results of another config" submit.err &&
  "$shoal" sweep "$sweep" --list --results one | grep -v '^#' | awk '{print $5}' | sort -u | grep -qx done; then
  ok "a completed file of another config: stale, refused by --point and submit-sweep, kept"
else
  fail "stale results: exit $rc ($(cat stale.err)), submit-sweep exit $rc2 ($(cat submit.err))"
fi

# The same point started twice at once (two overlapping submit-sweep calls):
# the second exits 0 at once, naming the run that holds the point; --list
# says running; the first finishes and leaves no lock behind.
sed -e 's/^micro_batch_tokens = .*/micro_batch_tokens = 4096/' -e 's/^micro_batches = .*/micro_batches = 8/' -e "s|^job = .*|job = \"$src/jobs/qwen1.5-moe-a2.7b.toml\"|" \
  "$src/configs/sweeps/tiny-base.toml" >long-base.toml
printf '[sweep]\nbase = "long-base.toml"\nresults = "twice"\n[axes]\npolicy.name = ["fair"]\n' >twice.toml
timeout 300 "$shoal" -q sweep twice.toml --point 0 >first.txt 2>&1 &
first=$!
for _ in $(seq 600); do [ -e twice/policy-fair.h5.partial ] && break; sleep 0.1; done
"$shoal" sweep twice.toml --list >twice-list.txt
rc=0; timeout 60 "$shoal" sweep twice.toml --point 0 >second.txt 2>&1 || rc=$?
still=no; kill -0 "$first" 2>/dev/null && still=yes
rc1=0; wait "$first" || rc1=$?
if [ "$rc" -eq 0 ] && [ "$still" = yes ] && [ "$rc1" -eq 0 ] &&
  grep -q "point 0 (policy-fair): already running elsewhere (twice/policy-fair.h5.lock: .* pid [0-9]* since [0-9]*), skipped" second.txt &&
  grep -q " running twice/policy-fair.h5$" twice-list.txt &&
  "$shoal" sweep twice.toml --list | grep -q " done twice/policy-fair.h5$" && [ ! -e twice/policy-fair.h5.lock ]; then
  ok "a point started twice at once: $(cat second.txt); the first finished"
else
  fail "a point started twice: second exit $rc ($(cat second.txt)), first exit $rc1, first still running then: $still; $(cat first.txt twice-list.txt)"
fi

# Mistakes: one line, naming the file, key or point; non-zero exit.
expect_error() {  # expect_error WHAT PATTERN COMMAND...
  local what=$1 pattern=$2
  shift 2
  if "$@" >out.txt 2>err.txt; then
    fail "$what: accepted"
  elif [ "$(wc -l <err.txt)" = 1 ] && grep -qF -- "$pattern" err.txt; then
    ok "$what: $(cat err.txt)"
  else
    fail "$what: $(cat err.txt)"
  fi
}
expect_error "a point out of range" "point 4 does not exist (0 to 3)" "$shoal" sweep "$sweep" --point 4
expect_error "an unknown point name" "no point named \"policy-x\"" "$shoal" sweep "$sweep" --point policy-x
printf '[sweep]\nbase = "%s"\n[axes]\ntopology.link_rat = ["100Gbps"]\n' "$src/configs/sweeps/tiny-base.toml" >typo.toml
expect_error "a misspelt swept key" "sweep typo.toml, point 0 (link-rat-100Gbps): config" "$shoal" sweep typo.toml --check
sed -e 's/^name = "fair"/compare = ["fair", "hermod"]/' -e "s|^job = .*|job = \"$src/jobs/qwen1.5-moe-a2.7b.toml\"|" \
  "$src/configs/sweeps/tiny-base.toml" >compare-base.toml
printf '[sweep]\nbase = "compare-base.toml"\n[axes]\ntopology.link_rate = ["100Gbps"]\n' >compare.toml
expect_error "several policies in one point" "runs one policy; sweep policy.name" "$shoal" sweep compare.toml --point 0 --results c
printf '[sweep]\nbase = "missing.toml"\n' >nobase.toml
expect_error "a missing base config" "sweep.base: missing.toml does not exist" "$shoal" sweep nobase.toml --list
expect_error "no action" "give one of --list, --count, --check, --point I, --all" "$shoal" sweep "$sweep"

if [ "$failures" -gt 0 ]; then
  echo "sweep: $failures failure(s)"
  exit 1
fi
echo "sweep: all checks passed"
