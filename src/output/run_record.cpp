#include "shoal/output/run_record.hpp"

#include <hdf5.h>

#include <cstdint>

#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"

namespace shoal::output {
namespace {

/// An open HDF5 object, closed with the function that fits its kind.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/// Reads /meta's attributes and the input datasets of one file.
class Reader {
 public:
  explicit Reader(std::string path)
      : path_(std::move(path)),
        file_(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose) {
    if (!file_.ok()) throw Error("rerun " + path_ + ": not an HDF5 file Shoal can read");
  }

  bool has(const std::string& object, const std::string& name) const {
    return H5Aexists_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
  }

  std::string text(const std::string& object, const std::string& name) const {
    const Handle attr(open(object, name), H5Aclose);
    const Handle type(H5Aget_type(attr.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0) {
      throw Error(where(object, name) + " is not a string");
    }
    const Handle memtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memtype.get(), H5T_VARIABLE);
    H5Tset_cset(memtype.get(), H5Tget_cset(type.get()));
    char* value = nullptr;
    if (H5Aread(attr.get(), memtype.get(), &value) < 0)
      throw Error(where(object, name) + " unreadable");
    std::string out = value != nullptr ? value : "";
    H5free_memory(value);
    return out;
  }

  std::int64_t integer(const std::string& object, const std::string& name) const {
    const Handle attr(open(object, name), H5Aclose);
    std::int64_t value = 0;
    if (H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0) {
      throw Error(where(object, name) + " unreadable");
    }
    return value;
  }

  std::string bytes(const std::string& object) const {
    const Handle dataset(H5Dopen2(file_.get(), object.c_str(), H5P_DEFAULT), H5Dclose);
    if (!dataset.ok()) throw Error("rerun " + path_ + ": /" + object + " is missing");
    const Handle space(H5Dget_space(dataset.get()), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    std::string out(static_cast<std::size_t>(n < 0 ? 0 : n), '\0');
    if (!out.empty() &&
        H5Dread(dataset.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) {
      throw Error("rerun " + path_ + ": /" + object + " unreadable");
    }
    return out;
  }

 private:
  std::string where(const std::string& object, const std::string& name) const {
    return "rerun " + path_ + ": /" + object + " attribute " + name;
  }
  hid_t open(const std::string& object, const std::string& name) const {
    if (!has(object, name)) {
      throw Error(
          where(object, name) +
          " is missing (a file from an older Shoal, before /meta kept what a rerun needs, or "
          "the .partial file of a run killed before its end)");
    }
    return H5Aopen_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  }

  std::string path_;
  Handle file_;
};

}  // namespace

RunRecord read_run_record(const std::string& path) {
  core::require_input_file(path, "rerun");
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become Errors, not stack dumps
  const Reader reader(path);
  RunRecord record;
  record.file = path;
  record.config_path = reader.text("meta", "config_path");
  record.config_resolved = reader.text("meta", "config_resolved");
  record.policy = reader.text("meta", "policy");
  record.sweep_point = reader.text("meta", "sweep_point");
  record.completed = reader.integer("meta", "completed") == 1;
  const std::int64_t inputs = reader.integer("meta", "inputs");
  for (std::int64_t i = 0; i < inputs; ++i) {
    const std::string object = "meta/inputs/" + std::to_string(i);
    config::InputSnapshot in;
    in.file.role = reader.text(object, "role");
    in.file.name = reader.text(object, "name");
    in.file.path = reader.text(object, "path");
    in.bytes = static_cast<std::uint64_t>(reader.integer(object, "bytes"));
    in.sha256 = reader.text(object, "sha256");
    in.embedded = reader.integer(object, "embedded") == 1;
    if (in.embedded) in.contents = reader.bytes(object);
    record.inputs.push_back(std::move(in));
  }
  return record;
}

}  // namespace shoal::output
