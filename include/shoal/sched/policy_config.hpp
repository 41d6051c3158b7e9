// The [policy] table of a run config (docs/policies.md).
#pragma once

#include <vector>

#include "shoal/config/config_file.hpp"
#include "shoal/sched/policy.hpp"

namespace shoal::sched {

/// The policy `name` names, or each of `compare`, with the table's other keys
/// (classes, enforce, iteration_first, dp_micro_batch, starvation_after);
/// fair sharing when the table is absent. An Error names the file and key.
std::vector<PolicyConfig> read_policies(config::ConfigFile& config);

}  // namespace shoal::sched
