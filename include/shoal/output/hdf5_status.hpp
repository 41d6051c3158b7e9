// Whether a run's HDF5 file is finished: what `shoal sweep` checks to skip the
// points a resubmitted sweep has already done.
#pragma once

#include <string>

namespace shoal::output {

enum class RunFileStatus {
  kMissing,     // no file (a .partial file from a crashed run does not count)
  kIncomplete,  // a file whose /meta completed is 0 (stopped by a signal) or unreadable
  kComplete,    // /meta completed = 1
};

/// Opens PATH read-only (serial HDF5, on one rank) and reads /meta's completed.
RunFileStatus run_file_status(const std::string& path);

const char* to_string(RunFileStatus status);

}  // namespace shoal::output
