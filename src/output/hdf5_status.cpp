#include "shoal/output/hdf5_status.hpp"

#include <hdf5.h>

#include <cstdint>
#include <filesystem>

namespace shoal::output {
namespace {

/// HDF5 prints its error stack on every failed call; a damaged file is an
/// answer here (incomplete), not a message.
class QuietHdf5Errors {
 public:
  QuietHdf5Errors() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5Errors() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }
  QuietHdf5Errors(const QuietHdf5Errors&) = delete;
  QuietHdf5Errors& operator=(const QuietHdf5Errors&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

}  // namespace

RunFileStatus run_file_status(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return RunFileStatus::kMissing;
  const QuietHdf5Errors quiet;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return RunFileStatus::kIncomplete;
  std::int64_t completed = 0;
  bool read = false;
  if (H5Aexists_by_name(file, "meta", "completed", H5P_DEFAULT) > 0) {
    const hid_t attr = H5Aopen_by_name(file, "meta", "completed", H5P_DEFAULT, H5P_DEFAULT);
    if (attr >= 0) {
      read = H5Aread(attr, H5T_NATIVE_INT64, &completed) >= 0;
      H5Aclose(attr);
    }
  }
  H5Fclose(file);
  return read && completed == 1 ? RunFileStatus::kComplete : RunFileStatus::kIncomplete;
}

const char* to_string(RunFileStatus status) {
  switch (status) {
    case RunFileStatus::kMissing:
      return "todo";
    case RunFileStatus::kIncomplete:
      return "partial";
    case RunFileStatus::kComplete:
      return "done";
  }
  return "?";
}

}  // namespace shoal::output
