# shellcheck shell=bash
# The median of the numbers on stdin, separated by spaces or newlines (the
# mean of the middle two for an even count): sourced by the bench scripts.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
