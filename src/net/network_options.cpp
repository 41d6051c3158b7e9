#include "shoal/net/network_options.hpp"

#include <algorithm>
#include <string>

#include "shoal/core/error.hpp"
#include "shoal/net/cell_head.hpp"

namespace shoal::net {

void validate(const NetworkOptions& options) {
  if (options.cell_size <= 0 || options.cell_size > kMaxCell) {
    throw Error("network.cell_size must be between 1 B and 16 MiB");
  }
  if (options.buffer_per_class < options.cell_size) {
    throw Error("network.buffer_per_class (" + format_bytes(options.buffer_per_class) +
                ") must hold at least one cell (" + format_bytes(options.cell_size) + ")");
  }
  if (options.buffer_per_class > kMaxBufferPerClass) {
    throw Error("network.buffer_per_class (" + format_bytes(options.buffer_per_class) +
                ") must be at most " + format_bytes(kMaxBufferPerClass));
  }
}

FlowPriorities FlowPriorities::of_coflows(const work::Dag& dag,
                                          std::span<const std::uint32_t> coflow_key,
                                          std::span<const std::uint8_t> coflow_class) {
  FlowPriorities p;
  if (coflow_key.empty() && coflow_class.empty()) return p;
  if (coflow_key.size() != dag.coflows().size() || coflow_class.size() != dag.coflows().size()) {
    throw Error("internal: priorities for " + std::to_string(coflow_key.size()) +
                " coflows, DAG has " + std::to_string(dag.coflows().size()));
  }
  p.key.assign(coflow_key.begin(), coflow_key.end());
  p.cls.assign(coflow_class.begin(), coflow_class.end());
  return p;
}

}  // namespace shoal::net
