#include "shoal/io/build_info.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <boost/version.hpp>

#include "shoal/version.hpp"

namespace shoal::io {

BuildInfo build_info() {
  BuildInfo info;
  info.shoal_version = kVersion;
  info.git_commit = kGitCommit;
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  info.hdf5_version =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
#ifdef H5_HAVE_PARALLEL
  info.hdf5_parallel = true;
#endif
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(library, &length);
  info.mpi_library.assign(library, static_cast<std::size_t>(length));
  if (const auto comma = info.mpi_library.find(','); comma != std::string::npos) {
    info.mpi_library.resize(comma);  // the first clause names library and version
  }
  while (!info.mpi_library.empty() &&
         (info.mpi_library.back() == '\n' || info.mpi_library.back() == ' ')) {
    info.mpi_library.pop_back();
  }
  info.boost_version = std::to_string(BOOST_VERSION / 100000) + "." +
                       std::to_string(BOOST_VERSION / 100 % 1000) + "." +
                       std::to_string(BOOST_VERSION % 100);
  return info;
}

}  // namespace shoal::io
