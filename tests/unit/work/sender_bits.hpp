// The rule that each coflow dependency concerns a sender, as two ranks check
// it together: their fragments' bits OR'd (exec::check_sender_dependencies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shoal/work/dag.hpp"

namespace shoal::work::test {

inline std::vector<std::uint64_t> either(const Dag& x, const Dag& y) {
  std::vector<std::uint64_t> bits = x.sender_dependencies();
  const std::vector<std::uint64_t> other = y.sender_dependencies();
  for (std::size_t w = 0; w < bits.size(); ++w) bits[w] |= other[w];
  return bits;
}

}  // namespace shoal::work::test
