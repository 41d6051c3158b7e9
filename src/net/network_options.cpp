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

}  // namespace shoal::net
