// htsim's connection-matrix workload format, read into a Dag. The format is the
// one htsim's ConnectionMatrix::load reads (csg-htsim, sim/datacenter/
// connection_matrix.cpp); one item a line, tokens separated by spaces:
//
//   Nodes 16                  header: host count (hosts 0..15)
//   Connections 3             header: connection lines that follow
//   Triggers 1                header, optional (default 0): trigger lines
//   0->1 id 1 start 0 size 4096 send_done_trigger 7
//   1->2 id 2 trigger 7 size 4096
//   2->3 id 3 start 1000000 size 65536 prio 5
//   trigger id 7 oneshot      also: multishot, barrier (with "count C")
//
// A connection "SRC->DST" takes, in any order: "id I" (flow id, not 0),
// "start PS" (start time in picoseconds), "trigger T" (start when trigger T fires
// instead; exactly one of start and trigger), "size BYTES", "send_done_trigger T"
// (activate T when the sender is done), "recv_done_trigger T" (when the receiver
// has everything), "prio P" (read and ignored). How htsim's triggers fire:
// oneshot starts all its connections at its first activation, multishot starts
// its k-th connection at its k-th activation, barrier starts all its
// connections at its count-th activation.
//
// Each connection becomes one coflow "htsim-<id>" ("htsim-conn<k>" for the k-th
// connection when it has no id) of type OTHER with one flow SRC->DST of `size`
// bytes and earliest start `start`; host i is GPU i. A connection started by
// trigger T depends on every connection that activates T, which is exact for a
// barrier whose count is its number of activations and for a oneshot or
// multishot trigger with a single activation (and, for multishot, a single
// connection to start); anything else ("the first of", "the k-th of") cannot be
// said with Shoal's all-of dependencies and is an Error, as are link failures
// ("failure" lines), the "addon" re-arming flag, and flows without a size
// (htsim runs those forever).
#pragma once

#include <string>

#include "shoal/work/dag.hpp"

namespace shoal::work {

/// Appends the connections of the htsim matrix at `path` to `dag` (which may
/// already hold nodes) and resolves dependencies. Every problem is one Error,
/// "htsim matrix PATH, line N: what is wrong". Does not check GPU ids against a
/// fabric or the locality of dependencies: call validate().
void load_htsim_connection_matrix(const std::string& path, Dag& dag);

}  // namespace shoal::work
