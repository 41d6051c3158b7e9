#include "shoal/work/workload_loader.hpp"

#include <filesystem>

#include "shoal/core/error.hpp"
#include "shoal/work/dag_file.hpp"
#include "shoal/work/htsim_import.hpp"

namespace shoal::work {

void load_workload(const std::string& path, std::string_view format, Dag& dag) {
  const std::string extension = std::filesystem::path(path).extension().string();
  const bool dag_file = format == "toml" || format == "json" ||
                        (format == "auto" && (extension == ".toml" || extension == ".json"));
  if (format != "auto" && format != "toml" && format != "json" && format != "htsim") {
    throw Error("unknown workload format \"" + std::string(format) +
                "\" (use auto, toml, json or htsim)");
  }
  if (dag_file) {
    load_dag_file(path, dag, format == "json" || (format == "auto" && extension == ".json"));
  } else {
    load_htsim_connection_matrix(path, dag);
  }
}

}  // namespace shoal::work
