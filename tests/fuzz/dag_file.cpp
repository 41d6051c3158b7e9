// Workload files, read as `shoal workload check` does: load_workload in the
// format SHOAL_FUZZ_FORMAT ("toml" or "json", the DAG format; "htsim", a
// connection matrix), then validate against the GPUs it uses, and the totals.
#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "shoal/work/workload_loader.hpp"

namespace {

/// Patterns expand to up to n^2 flows for n GPUs; the reader allows 2^24 in all
/// (dag_file.cpp), which takes minutes under the sanitizers: valid, but past the
/// fuzzer's 10 s timeout. Inputs with a pattern over more than 256 GPUs are
/// skipped (64K flows at most); the bound itself has a unit test.
constexpr std::uint64_t kMaxPatternGpus = 256;

/// GPUs in a range "A..B" (0 if it is not one).
std::uint64_t range_size(std::string_view text) {
  const auto dots = text.find("..");
  std::uint64_t first = 0, last = 0;
  if (dots == std::string_view::npos) return 0;
  std::from_chars(text.data(), text.data() + dots, first);
  std::from_chars(text.data() + dots + 2, text.data() + text.size(), last);
  return last >= first ? last - first + 1 : 0;
}

bool over_budget_toml(std::string_view text) {
  toml::table root;
  try {
    root = toml::parse(text);
  } catch (const toml::parse_error&) {
    return false;
  }
  const toml::array* patterns = root["pattern"].as_array();
  if (patterns == nullptr) return false;
  for (const toml::node& p : *patterns) {
    if (!p.is_table()) continue;
    for (const char* key : {"gpus", "sources", "destinations"}) {
      const toml::node* n = p.as_table()->get(key);
      if (n == nullptr) continue;
      const std::uint64_t size = n->is_array()    ? n->as_array()->size()
                                 : n->is_string() ? range_size(n->as_string()->get())
                                                  : 0;
      if (size > kMaxPatternGpus) return true;
    }
  }
  return false;
}

bool over_budget_json(std::string_view text) {
  const nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object() || !root.contains("pattern") || !root["pattern"].is_array()) return false;
  for (const nlohmann::json& p : root["pattern"]) {
    if (!p.is_object()) continue;
    for (const char* key : {"gpus", "sources", "destinations"}) {
      if (!p.contains(key)) continue;
      const nlohmann::json& n = p[key];
      const std::uint64_t size = n.is_array()    ? n.size()
                                 : n.is_string() ? range_size(n.get<std::string>())
                                                 : 0;
      if (size > kMaxPatternGpus) return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::string_view format = SHOAL_FUZZ_FORMAT;
  const std::string_view text = shoal::fuzz::text(data, size);
  if (format == "toml" && shoal::fuzz::hits_toml_unicode_bug(text)) {
    return -1;  // not ours (fuzz_common.hpp)
  }
  if ((format == "toml" && over_budget_toml(text)) ||
      (format == "json" && over_budget_json(text))) {
    return -1;
  }
  const std::string path = shoal::fuzz::write_input(
      data, size, format == "htsim" ? "workload.cm" : "workload." + std::string(format));
  shoal::fuzz::expect_only_errors([&] {
    shoal::work::Dag dag;
    shoal::work::load_workload(path, "auto", dag);  // the format from the extension
    dag.validate(dag.gpus_used());
    dag.total_bytes();
  });
  return 0;
}
