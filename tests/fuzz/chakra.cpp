// Chakra traces, read as [workload] format = "chakra" reads them: the input is
// up to four rank files joined by kRankSeparator (NAME.0.et, NAME.1.et, ...),
// so sends meet receives and collectives meet across files; then the Dag is
// validated against the GPUs it uses, with ring steps and with direct
// coflows. Seeds: ASTRA-sim's traces in tests/data/chakra, joined the same way
// (tests/fuzz/run.sh).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "shoal/work/chakra_trace.hpp"

namespace {

constexpr std::string_view kRankSeparator = "\n--rank--\n";
constexpr std::size_t kMaxRanks = 4;

/// Writes the input's rank files as scratch/trace.K.et, removing any other
/// trace.K.et a longer input left, and returns their paths.
std::vector<std::string> write_ranks(std::string_view input) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < kMaxRanks) {
    const std::size_t at = input.find(kRankSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + kRankSeparator.size());
  }
  parts.push_back(input);
  std::vector<std::string> paths;
  for (std::size_t k = 0; k < kMaxRanks; ++k) {
    const std::filesystem::path name = "trace." + std::to_string(k) + ".et";
    if (k < parts.size()) {
      paths.push_back(shoal::fuzz::write_input(
          reinterpret_cast<const std::uint8_t*>(parts[k].data()), parts[k].size(), name));
    } else {
      std::error_code ignored;
      std::filesystem::remove(shoal::fuzz::scratch_dir() / name, ignored);
    }
  }
  return paths;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> paths = write_ranks(shoal::fuzz::text(data, size));
  const std::string prefix = (shoal::fuzz::scratch_dir() / "trace").string();
  for (const auto algorithm :
       {shoal::work::CollectiveAlgorithm::kRing, shoal::work::CollectiveAlgorithm::kDirect}) {
    shoal::fuzz::expect_only_errors([&] {
      shoal::work::Dag dag;
      shoal::work::ChakraOptions options;
      options.collective = algorithm;
      const auto same = [](const std::string& name) { return name; };
      // As the config reader finds them, which also checks for holes.
      const std::vector<std::string> found = shoal::work::chakra_rank_names(prefix, same);
      if (found.size() != paths.size()) std::abort();
      shoal::work::load_chakra_trace(prefix, found, options, dag).line();
      dag.validate(dag.gpus_used());
      dag.total_bytes();
    });
  }
  return 0;
}
