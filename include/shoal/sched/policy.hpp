// Coflow scheduling policies: which coflow goes first on a shared link.
//
// A policy gives every coflow a key; lower keys go first, equal keys share
// fairly. Keys are compared as tuples and numbered densely (rank 0 first):
//   fair         ()                                   every coflow equal (Megatron)
//   lina         (EP ? 0 : 1)                         EP before everything else
//   ep-pp-first  (EP or PP ? 0 : 1)                   EP and PP before DP and the rest
//   hermod       ([iteration,] MID, type, LID)         type: EP = PP = TP = 0 < DP = OTHER = 1
// Hermod's DP coflows carry the MID of their iteration's last micro-batch (the
// Hermod digest's reading: the type then puts DP behind that micro-batch's EP
// and PP) unless `dp_micro_batch = "label"` keeps their own label.
// `crux+P` puts a job rank in front of P's key: jobs by GPU intensity (compute
// per iteration per GPU / the largest per-GPU transfer time per iteration),
// highest first.
//
// Enforcement: the NIC orders its flows by the full key (strict across keys,
// round-robin among equal keys); switches have 8 strict-priority classes, so
// keys fold into `classes` classes: key rank r of K goes to class
// floor(r * C / K) (contiguous bins of the order: order between classes is
// kept, order inside a class is lost to round-robin).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/units.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::sched {

enum class IntraJob : std::uint8_t { kFair, kLina, kEpPpFirst, kHermod };
enum class Enforcement : std::uint8_t { kNic, kSwitch, kBoth };

struct PolicyConfig {
  IntraJob intra = IntraJob::kFair;
  bool crux = false;
  bool iteration_first = false;     // hermod: the iteration leads the key
  bool dp_last_micro_batch = true;  // hermod: DP keyed by its iteration's last micro-batch
  int classes = 8;                  // switch classes the keys fold into: 1, 2, 4 or 8
  Enforcement enforce = Enforcement::kBoth;
  Time starvation_after = kTimeInfinity;  // a flow waiting longer at its NIC goes first
};

/// "fair", "lina", "ep-pp-first", "hermod", each optionally after "crux+"
/// (e.g. "crux+hermod"); an Error lists the names otherwise.
void parse_policy_name(std::string_view name, PolicyConfig& config);
/// The name parse_policy_name reads back.
std::string policy_name(const PolicyConfig& config);

/// What a policy decides for each coflow: the key its flows' NICs order them
/// by and the class its cells take at switches.
struct CoflowPriorities {
  std::vector<std::uint32_t> key;  // by coflow: dense rank of its key, 0 first
  std::vector<std::uint8_t> cls;   // by coflow: switch class, 0 first
  std::uint32_t keys = 1;          // distinct keys
};

/// Keys of every coflow (dense ranks). An Error if crux cannot tell a GPU's job.
/// Crux weighs every flow: a DAG that is a rank's fragment (work::Dag::owns)
/// gives `comm`, its run's ranks, over which the call is collective.
std::vector<std::uint32_t> coflow_keys(const work::Dag& dag, const topo::Fabric& fabric,
                                       const PolicyConfig& config,
                                       const core::Comm* comm = nullptr);

/// From coflow_keys and the enforcement: NIC keys are the full key ranks (or
/// the class, when only switches enforce); switch classes are the folded keys
/// (or all 0, when only NICs enforce).
CoflowPriorities coflow_priorities(const work::Dag& dag, const topo::Fabric& fabric,
                                   const PolicyConfig& config, const core::Comm* comm = nullptr);

}  // namespace shoal::sched
