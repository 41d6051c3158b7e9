// Sequence-length files (work/sequence_lengths.hpp): read, then packed into
// micro-batches of 512 tokens for two iterations, three micro-batches and two
// replicas.
#include "shoal/work/sequence_lengths.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = shoal::fuzz::write_input(data, size, "lengths.txt");
  shoal::fuzz::expect_only_errors([&] {
    const auto lengths = shoal::work::read_sequence_lengths(path);
    shoal::work::SequenceSpec spec;
    spec.law = shoal::work::LengthLaw::kFile;
    const shoal::work::SequencePacking packing(spec, 512, 2, 3, 2, 0, lengths);
    for (std::uint32_t it = 0; it < 2; ++it) packing.square_sum(it, 2, 1);
  });
  return 0;
}
