// The one line an import of a Chakra trace reports: what its nodes became,
// and what it holds that Shoal does not model.
#include <map>
#include <string>
#include <string_view>

#include "chakra_read.hpp"
#include "shoal/work/chakra_trace.hpp"

namespace shoal::work {

namespace {

/// "1 NPU", "2 NPUs".
std::string count_of(std::uint64_t n, std::string_view thing) {
  return std::to_string(n) + " " + std::string(thing) + (n == 1 ? "" : "s");
}

/// "2 METADATA_NODE, 1 MEM_LOAD_NODE" from counts by name.
std::string list_counts(const std::map<std::string, std::uint64_t>& counts, bool count_after) {
  std::string out;
  for (const auto& [what, n] : counts) {
    out += (out.empty() ? "" : ", ") +
           (count_after ? what + " (" + std::to_string(n) + ")" : std::to_string(n) + " " + what);
  }
  return out;
}

}  // namespace

std::string ChakraSummary::line() const {
  std::string out = "chakra trace " + trace + ": " + count_of(npus, "NPU") + ", " +
                    count_of(nodes, "node") + ": " + count_of(compute, "compute task");
  if (compute_from_ops > 0) out += " (" + std::to_string(compute_from_ops) + " timed by num_ops)";
  std::uint64_t total = 0;
  for (const auto& [kind, n] : collectives) total += n;
  out += ", " + count_of(messages, "message") + ", " + count_of(total, "collective");
  if (total > 0) out += " (" + list_counts(collectives, false) + ")";
  if (single_npu_collectives > 0) {
    out += " (" + std::to_string(single_npu_collectives) + " on one NPU: zero-time tasks)";
  }
  out += ", as " + count_of(coflows, "coflow");
  std::uint64_t zero = 0;
  for (const auto& [type, n] : zero_time) zero += n;
  out += "; " + count_of(zero, "zero-time node");
  if (zero > 0) out += " (" + list_counts(zero_time, false) + ")";
  if (join_tasks > 0) out += ", " + count_of(join_tasks, "zero-time wait") + " at receivers";
  out += "; not modelled: " +
         (not_modelled.empty() ? std::string("nothing") : list_counts(not_modelled, true));
  for (const std::string& v : unknown_versions) {
    out += "; version \"" + v + "\" read as " + std::string(chakra::kChakraVersion);
  }
  return out;
}

}  // namespace shoal::work
