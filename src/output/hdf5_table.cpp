// Parallel HDF5's header includes MPI's: with core/comm.cpp the only place
// that sees MPI types.
#include "shoal/output/hdf5_table.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>

#include "shoal/core/error.hpp"
#include "shoal/output/hdf5_status.hpp"

namespace shoal::output {
namespace {

hid_t native(Column::Type t) {
  switch (t) {
    case Column::Type::kU8:
      return H5T_NATIVE_UINT8;
    case Column::Type::kU32:
      return H5T_NATIVE_UINT32;
    case Column::Type::kI64:
      return H5T_NATIVE_INT64;
    case Column::Type::kF64:
      return H5T_NATIVE_DOUBLE;
    case Column::Type::kName:
      break;  // made per column in add_table
  }
  return H5T_NATIVE_INT64;
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw Error("HDF5: " + what + " failed");
}

hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) throw Error("HDF5: " + what + " failed");
  return id;
}

}  // namespace

struct Hdf5File::Impl {
  struct Table {
    std::string name;
    hid_t dataset = -1;
    hid_t memtype = -1;
    std::size_t row_size = 0;
    hsize_t rows = 0;  // in the file, all ranks
  };
  hid_t file = -1;
  hid_t meta = -1;
  hid_t xfer = -1;
  std::vector<Table> tables;
  bool open = false;

  void close() {
    if (!open) return;
    for (Table& t : tables) {
      H5Tclose(t.memtype);
      H5Dclose(t.dataset);
    }
    H5Pclose(xfer);
    H5Gclose(meta);
    H5Fclose(file);
    open = false;
  }
};

Hdf5File::Hdf5File(const core::Comm& comm, const std::string& path, bool force)
    : comm_(comm), path_(path), impl_(std::make_unique<Impl>()) {
  if (!force && std::filesystem::exists(path)) {
    throw Error("output " + path + " exists (use --force to overwrite it)");
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become Errors, not stack dumps
  const hid_t fapl = check_id(H5Pcreate(H5P_FILE_ACCESS), "a file access list");
  MPI_Comm mpi_comm;
  std::memcpy(&mpi_comm, comm.native(), sizeof mpi_comm);
  check(H5Pset_fapl_mpio(fapl, mpi_comm, MPI_INFO_NULL), "MPI-IO access");
  const std::string partial = path + ".partial";
  impl_->file = H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (impl_->file < 0) throw Error("output " + partial + ": cannot be created");
  impl_->meta = check_id(H5Gcreate2(impl_->file, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         "the /meta group");
  impl_->xfer = check_id(H5Pcreate(H5P_DATASET_XFER), "a transfer list");
  check(H5Pset_dxpl_mpio(impl_->xfer, H5FD_MPIO_COLLECTIVE), "collective transfers");
  impl_->open = true;
}

Hdf5File::~Hdf5File() { impl_->close(); }

std::size_t Hdf5File::add_table(const std::string& name, std::size_t row_size,
                                std::vector<Column> columns, const std::string& units) {
  Impl::Table t;
  t.name = name;
  t.row_size = row_size;
  t.memtype = check_id(H5Tcreate(H5T_COMPOUND, row_size), "a compound type");
  for (const Column& c : columns) {
    if (c.type == Column::Type::kName) {
      const hid_t text = H5Tcopy(H5T_C_S1);
      H5Tset_size(text, Column::kNameBytes);
      H5Tset_strpad(text, H5T_STR_NULLPAD);
      const herr_t status = H5Tinsert(t.memtype, c.name.c_str(), c.offset, text);
      H5Tclose(text);
      check(status, "column " + c.name);
      continue;
    }
    check(H5Tinsert(t.memtype, c.name.c_str(), c.offset, native(c.type)), "column " + c.name);
  }
  const hsize_t zero = 0, unlimited = H5S_UNLIMITED;
  const hid_t space = H5Screate_simple(1, &zero, &unlimited);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk = kChunkRows;
  check(H5Pset_chunk(dcpl, 1, &chunk), "chunking");
  // Rows of ids and times compress well (shuffle + deflate 1: a training run's
  // file shrank 9.5x, 18.4 MB to 1.9 MB); parallel HDF5 writes
  // compressed chunks through its collective path, which append() uses.
  check(H5Pset_shuffle(dcpl), "the shuffle filter");
  check(H5Pset_deflate(dcpl, 1), "compression");
  t.dataset =
      H5Dcreate2(impl_->file, name.c_str(), t.memtype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  check_id(t.dataset, "dataset /" + name);
  impl_->tables.push_back(t);
  attribute(name, "units", units);
  return impl_->tables.size() - 1;
}

void Hdf5File::append(std::size_t table, const void* rows, std::size_t count) {
  Impl::Table& t = impl_->tables.at(table);
  const auto mine = static_cast<std::int64_t>(count);
  const std::int64_t before = comm_.exclusive_sum(mine);
  const std::int64_t total = comm_.sum(mine);
  if (total == 0) return;
  const hsize_t new_rows = t.rows + static_cast<hsize_t>(total);
  check(H5Dset_extent(t.dataset, &new_rows), "extending /" + t.name);
  const hid_t file_space = H5Dget_space(t.dataset);
  const hsize_t n = count;
  const hid_t mem_space = H5Screate_simple(1, &n, nullptr);
  if (count > 0) {
    const hsize_t offset = t.rows + static_cast<hsize_t>(before);
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &offset, nullptr, &n, nullptr);
  } else {
    H5Sselect_none(file_space);
    H5Sselect_none(mem_space);
  }
  const herr_t status = H5Dwrite(t.dataset, t.memtype, mem_space, file_space, impl_->xfer, rows);
  H5Sclose(mem_space);
  H5Sclose(file_space);
  check(status, "writing /" + t.name);
  t.rows = new_rows;
}

namespace {

hid_t object_of(hid_t file, hid_t meta, const std::string& object) {
  return object == "meta" ? meta : H5Oopen(file, object.c_str(), H5P_DEFAULT);
}

void write_attribute(hid_t object, const std::string& name, hid_t type, const void* value) {
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Sclose(space);
  check_id(attr, "attribute " + name);
  const herr_t status = H5Awrite(attr, type, value);
  H5Aclose(attr);
  check(status, "writing attribute " + name);
}

}  // namespace

void Hdf5File::attribute(const std::string& object, const std::string& name,
                         const std::string& value) {
  const hid_t o = object_of(impl_->file, impl_->meta, object);
  // Variable-length UTF-8: h5py reads it as str.
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const char* text = value.c_str();
  write_attribute(o, name, type, &text);
  H5Tclose(type);
  if (o != impl_->meta) H5Oclose(o);
}

void Hdf5File::attribute(const std::string& object, const std::string& name, std::int64_t value) {
  const hid_t o = object_of(impl_->file, impl_->meta, object);
  write_attribute(o, name, H5T_NATIVE_INT64, &value);
  if (o != impl_->meta) H5Oclose(o);
}

void Hdf5File::attribute(const std::string& object, const std::string& name, double value) {
  const hid_t o = object_of(impl_->file, impl_->meta, object);
  write_attribute(o, name, H5T_NATIVE_DOUBLE, &value);
  if (o != impl_->meta) H5Oclose(o);
}

void Hdf5File::bytes(const std::string& path, std::string_view data) {
  const hsize_t size = data.size();
  const hid_t space = H5Screate_simple(1, &size, nullptr);
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  check(H5Pset_create_intermediate_group(lcpl, 1), "intermediate groups");
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (size > 0) {
    const hsize_t chunk = std::min<hsize_t>(size, hsize_t{1} << 20);
    check(H5Pset_chunk(dcpl, 1, &chunk), "chunking");
    check(H5Pset_deflate(dcpl, 6), "compression");
  }
  const hid_t dataset =
      H5Dcreate2(impl_->file, path.c_str(), H5T_NATIVE_UINT8, space, lcpl, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Pclose(lcpl);
  if (dataset < 0) {
    H5Sclose(space);
    throw Error("HDF5: dataset /" + path + " failed");
  }
  herr_t status = 0;
  if (size > 0) {
    // Collective, as compressed datasets need: rank 0 writes all, the others none.
    const hid_t file_space = H5Scopy(space);
    const hid_t mem_space = H5Scopy(space);
    if (comm_.rank() != 0) {
      H5Sselect_none(file_space);
      H5Sselect_none(mem_space);
    }
    status = H5Dwrite(dataset, H5T_NATIVE_UINT8, mem_space, file_space, impl_->xfer, data.data());
    H5Sclose(mem_space);
    H5Sclose(file_space);
  }
  H5Sclose(space);
  H5Dclose(dataset);
  check(status, "writing /" + path);
}

void Hdf5File::flush() { check(H5Fflush(impl_->file, H5F_SCOPE_GLOBAL), "flushing"); }

std::string Hdf5File::commit(RunEnd end) {
  impl_->close();
  comm_.barrier();
  const std::string partial = path_ + ".partial";
  if (end == RunEnd::kFailed) return partial;  // the same on every rank
  std::uint64_t keep_old = 0;                  // rank 0 looks; every rank learns its answer
  if (comm_.rank() == 0 && end == RunEnd::kStopped) {
    keep_old = run_file_status(path_) == RunFileStatus::kComplete ? 1 : 0;
  }
  std::uint64_t kept = 0;
  comm_.sum_all(std::span(&keep_old, 1), std::span(&kept, 1));
  if (kept != 0) return partial;
  if (comm_.rank() == 0) {
    std::error_code ec;
    std::filesystem::rename(partial, path_, ec);
    if (ec) throw Error("output " + path_ + ": cannot rename the finished file: " + ec.message());
  }
  comm_.barrier();
  return path_;
}

}  // namespace shoal::output
