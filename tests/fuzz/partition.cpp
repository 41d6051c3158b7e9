// Partition files, read against the layout of the shipped one
// (partitions/phold-100k-8blocks-4ranks.part: PHOLD, 100,000 entities in 8
// blocks) at its 4 ranks, then used as `shoal bench phold` uses them.
#include <sstream>

#include "fuzz_common.hpp"
#include "shoal/bench/phold.hpp"
#include "shoal/core/partition.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const shoal::core::Layout layout = [] {
    shoal::bench::PholdConfig config;
    config.entities = 100'000;
    config.blocks = 8;
    return shoal::bench::phold_layout(config);
  }();
  std::istringstream in{std::string(shoal::fuzz::text(data, size))};
  shoal::fuzz::expect_only_errors([&] {
    const auto partition = shoal::core::Partition::parse(in, "input.part", layout, 4);
    partition.entities_per_rank(layout);
    shoal::core::lookahead(layout, partition);
  });
  return 0;
}
