#include "shoal/work/workload_loader.hpp"

#include <filesystem>

#include "shoal/core/error.hpp"
#include "shoal/work/chakra_trace.hpp"
#include "shoal/work/dag_file.hpp"
#include "shoal/work/htsim_import.hpp"

namespace shoal::work {

void load_workload(const std::string& path, std::string_view format, Dag& dag) {
  const std::string extension = std::filesystem::path(path).extension().string();
  const bool dag_file = format == "toml" || format == "json" ||
                        (format == "auto" && (extension == ".toml" || extension == ".json"));
  if (format != "auto" && format != "toml" && format != "json" && format != "htsim" &&
      format != "chakra") {
    throw Error("unknown workload format \"" + std::string(format) +
                "\" (use auto, toml, json, htsim or chakra)");
  }
  if (format == "chakra") {
    const auto same = [](const std::string& name) { return name; };
    load_chakra_trace(path, chakra_rank_names(path, same), ChakraOptions{}, dag);
  } else if (dag_file) {
    load_dag_file(path, dag, format == "json" || (format == "auto" && extension == ".json"));
  } else {
    load_htsim_connection_matrix(path, dag);
  }
}

}  // namespace shoal::work
