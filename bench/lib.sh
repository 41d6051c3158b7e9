# shellcheck shell=bash
# Helpers sourced by the bench scripts.

# The median of the numbers on stdin, separated by spaces or newlines (the
# mean of the middle two for an even count).
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# count_option SCRIPT WHAT VALUE: prints VALUE, the argument of a script's -n
# option, if it is a positive whole number; else says so on stderr and fails.
count_option() {
  if ! [[ $3 =~ ^[1-9][0-9]*$ ]]; then
    echo "$1: -n needs a positive number of $2, got '$3'" >&2
    return 2
  fi
  echo "$3"
}

# The loop's wall in seconds from a `shoal run` report (its "wall N s").
run_wall() { grep -oE 'wall [0-9.]+ s' "$1" | head -1 | awk '{print $2}'; }
