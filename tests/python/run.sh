#!/usr/bin/env bash
# Runs the tests of the Python post-processing tools (tools/shoal-report,
# tools/shoal-trace) on small synthetic HDF5 files. Exits non-zero on failure.
# Needs python3-h5py python3-numpy python3-pandas python3-matplotlib (Debian);
# uses `python3` when it has them, else Debian's /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")"
py=python3
if ! "$py" -c 'import h5py, numpy, pandas, matplotlib' 2>/dev/null; then
  if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import h5py, numpy, pandas, matplotlib' 2>/dev/null; then
    py=/usr/bin/python3
  else
    echo "tests/python/run.sh: needs h5py, numpy, pandas, matplotlib:" \
      "apt-get install python3-h5py python3-numpy python3-pandas python3-matplotlib" >&2
    exit 1
  fi
fi
export MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1
exec "$py" -m unittest discover -s . -p 'test_*.py' "$@"
