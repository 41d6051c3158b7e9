// Versions of Shoal and the libraries it was built with, for `shoal version`
// and (later) the /meta of every output file.
#pragma once

#include <string>

namespace shoal::output {

struct BuildInfo {
  std::string shoal_version;
  std::string git_commit;
  std::string hdf5_version;
  bool hdf5_parallel = false;
  std::string mpi_library;
  std::string boost_version;
};

BuildInfo build_info();

}  // namespace shoal::output
