#include "shoal/output/build_info.hpp"

#include <hdf5.h>

#include <boost/version.hpp>

#include "shoal/core/comm.hpp"
#include "shoal/version.hpp"

namespace shoal::output {

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
  info.mpi_library = core::mpi_library_version();
  info.boost_version = std::to_string(BOOST_VERSION / 100000) + "." +
                       std::to_string(BOOST_VERSION / 100 % 1000) + "." +
                       std::to_string(BOOST_VERSION % 100);
  return info;
}

}  // namespace shoal::output
