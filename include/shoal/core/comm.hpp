// The one place that talks to MPI (through Boost.MPI). Everything the engine
// needs from the communicator is here, so nothing else includes an MPI header.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "shoal/core/event.hpp"

namespace shoal::core {

/// Initializes MPI for the life of the process; create one, first thing in main().
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The MPI library and its version, e.g. "Open MPI v4.1.4".
std::string mpi_library_version();

/// What each rank tells every other rank at the end of a window.
struct WindowSlot {
  std::int64_t count = 0;      // events sent to the receiving rank in this window
  std::int64_t next_time = 0;  // earliest pending event of the sender (queue or outgoing)
  std::int64_t events = 0;     // events the sender has processed so far
  std::int64_t flags = 0;      // reserved for stop requests
};

class Comm {
 public:
  static Comm world();
  /// A one-rank communicator: the serial reference run inside an MPI program.
  static Comm self();

  Comm(Comm&&) noexcept;
  Comm& operator=(Comm&&) noexcept;
  ~Comm();

  int rank() const { return rank_; }
  int size() const { return size_; }

  /// out[r] goes to rank r; in[r] is what rank r sent here.
  void exchange_slots(std::span<const WindowSlot> out, std::span<WindowSlot> in) const;
  /// Sends outboxes[r] to rank r and appends what each rank r sends (in[r].count
  /// events, as announced by exchange_slots) to inbox.
  void exchange_events(std::span<const std::vector<Event>> outboxes, std::span<const WindowSlot> in,
                       std::vector<Event>& inbox) const;

  std::int64_t sum(std::int64_t v) const;
  /// The sum of v over the ranks below this one.
  std::int64_t exclusive_sum(std::int64_t v) const;
  /// Points to the MPI_Comm, for libraries that take one (parallel HDF5).
  const void* native() const;
  std::int64_t max(std::int64_t v) const;
  std::int64_t min(std::int64_t v) const;
  double max(double v) const;
  double sum(double v) const;
  /// Element-wise sum onto rank 0 (`out` is written only there).
  void sum_to_root(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const;
  /// Element-wise sum on every rank.
  void sum_all(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const;
  /// Element-wise minimum / maximum onto rank 0.
  void min_to_root(std::span<const std::int64_t> in, std::span<std::int64_t> out) const;
  void max_to_root(std::span<const std::int64_t> in, std::span<std::int64_t> out) const;
  void barrier() const;
  /// Collective: how many ranks of this communicator share this rank's node
  /// (its memory).
  int ranks_on_node() const;
  /// Ends every rank of the job at once with the given exit code.
  [[noreturn]] void abort(int code) const;

 private:
  struct Impl;
  explicit Comm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  int rank_ = 0;
  int size_ = 1;
  mutable std::uint64_t native_storage_[2] = {0, 0};  // holds an MPI_Comm (a pointer or an int)
};

}  // namespace shoal::core
