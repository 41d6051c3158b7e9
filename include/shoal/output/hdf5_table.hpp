// Parallel HDF5 output: one file written collectively by all ranks (MPI-IO),
// tables as extendable, chunked 1-D compound datasets that ranks append to
// together in bounded pieces, and attributes. Every call here is collective:
// all ranks make it, in the same order, with the same names (and, for
// attributes, the same values). The file is written as PATH.partial and
// renamed to PATH by commit().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/core/comm.hpp"

namespace shoal::output {

/// One column of a table: its name, the offset of its field in the row struct,
/// and its type.
struct Column {
  /// kName: a char[kNameBytes] field, zero-padded (h5py reads it as bytes).
  enum class Type : std::uint8_t { kU8, kU32, kI64, kF64, kName };
  static constexpr std::size_t kNameBytes = 32;
  std::string name;
  std::size_t offset;
  Type type;
};

class Hdf5File {
 public:
  /// Rows per chunk of every table (each chunk compressed on its own). A
  /// collective write of a chunk holds it several times over on the rank that
  /// filters it (the rows, shuffled, deflated, MPI-IO's copy): a chunk of a
  /// few hundred KB keeps that small beside a rank's share of a large run.
  static constexpr std::size_t kChunkRows = 4096;
  /// Creates PATH.partial (truncating an old partial file). An existing PATH is
  /// an Error unless `force`.
  Hdf5File(const core::Comm& comm, const std::string& path, bool force);
  ~Hdf5File();
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;

  /// Declares a table of rows of `row_size` bytes; returns its index.
  std::size_t add_table(const std::string& name, std::size_t row_size, std::vector<Column> columns,
                        const std::string& units);
  /// Appends each rank's rows (any number, 0 included) to the table.
  void append(std::size_t table, const void* rows, std::size_t count);
  /// A string or number attribute on a table or on the group /meta.
  void attribute(const std::string& object, const std::string& name, const std::string& value);
  void attribute(const std::string& object, const std::string& name, std::int64_t value);
  void attribute(const std::string& object, const std::string& name, double value);
  /// A 1-D dataset of bytes at `path` ("meta/inputs/0"; groups made as
  /// needed), compressed; every rank gives the same `data`, rank 0 writes it.
  void bytes(const std::string& path, std::string_view data);
  /// Writes what is buffered in HDF5's caches to the file (it stays readable).
  void flush();
  /// How a run ended, for commit.
  enum class RunEnd {
    kFinished,  // its end time, or every flow done
    kStopped,   // by a signal
    kFailed,    // flows left and no end time: its results say why, but are no result
  };
  /// Closes the file and renames PATH.partial to PATH, except where the run
  /// failed, or was stopped while PATH holds a completed run (a --force
  /// rerun): the results then stay in PATH.partial, and PATH is kept. Returns
  /// the file that holds them (the same on every rank).
  std::string commit(RunEnd end);

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  const core::Comm& comm_;
  std::string path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal::output
