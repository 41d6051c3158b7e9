#include "shoal/sched/policy_config.hpp"

#include "shoal/core/error.hpp"

namespace shoal::sched {

std::vector<PolicyConfig> read_policies(config::ConfigFile& config) {
  const std::string prefix = "config " + config.path() + ": ";
  std::vector<PolicyConfig> policies;
  // [policy]: which coflow goes first (docs/policies.md).
  constexpr std::string_view pol = "policy";
  PolicyConfig policy;
  const std::int64_t classes = config.integer(pol, "classes").value_or(8);
  if (classes != 1 && classes != 2 && classes != 4 && classes != 8) {
    throw Error(prefix + "policy.classes must be 1, 2, 4 or 8, not " + std::to_string(classes));
  }
  policy.classes = static_cast<int>(classes);
  const std::string enforce = config.string(pol, "enforce").value_or("both");
  if (enforce == "nic") {
    policy.enforce = Enforcement::kNic;
  } else if (enforce == "switch") {
    policy.enforce = Enforcement::kSwitch;
  } else if (enforce == "both") {
    policy.enforce = Enforcement::kBoth;
  } else {
    throw Error(prefix + "policy.enforce must be \"nic\", \"switch\" or \"both\", not \"" +
                enforce + "\"");
  }
  policy.iteration_first = config.boolean(pol, "iteration_first").value_or(false);
  const std::string dp_mid = config.string(pol, "dp_micro_batch").value_or("last");
  if (dp_mid != "last" && dp_mid != "label") {
    throw Error(prefix +
                "policy.dp_micro_batch must be \"last\" (the iteration's last "
                "micro-batch) or \"label\" (the coflow's own), not \"" +
                dp_mid + "\"");
  }
  policy.dp_last_micro_batch = dp_mid == "last";
  policy.starvation_after = config.time(pol, "starvation_after").value_or(kTimeInfinity);
  if (policy.starvation_after <= 0) {
    throw Error(prefix + "policy.starvation_after must be positive");
  }
  const auto name = config.string(pol, "name");
  const auto compare = config.strings(pol, "compare");
  if (name && compare) throw Error(prefix + "policy: give name or compare, not both");
  std::vector<std::string> names =
      compare.value_or(std::vector<std::string>{name.value_or("fair")});
  if (names.empty()) throw Error(prefix + "policy.compare is empty");
  for (const std::string& each : names) {
    try {
      parse_policy_name(each, policy);
    } catch (const Error& e) {
      throw Error(prefix + (compare ? "policy.compare: " : "policy.name: ") + e.what());
    }
    // Each compared policy writes its own OUT-POLICY file and report column.
    for (const PolicyConfig& earlier : policies) {
      if (policy_name(earlier) == policy_name(policy)) {
        throw Error(prefix + "policy.compare names " + policy_name(policy) + " twice");
      }
    }
    policies.push_back(policy);
  }
  return policies;
}

}  // namespace shoal::sched
