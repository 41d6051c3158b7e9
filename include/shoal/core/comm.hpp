// The one place that talks to MPI (through Boost.MPI). Everything the engine
// needs from the communicator is here, so nothing else includes an MPI header
// (but comm_costs.cpp, which times it).
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

/// What the ranks agree on at the end of a window, in one reduction: the
/// earliest pending event anywhere, the events processed so far, whether a
/// rank was asked to stop, the most events a rank processed in the window,
/// the longest a rank took over its window's events, and how many batches of
/// events each rank is sent.
struct WindowState {
  std::int64_t next_time = 0;     // reduced by minimum
  std::int64_t events = 0;        // by sum
  std::int64_t stop = 0;          // by maximum
  std::int64_t busiest = 0;       // by maximum: the events of the window just processed
  std::int64_t slowest_work = 0;  // by maximum: its handling time, ns
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

  /// One reduction of every rank's window state (min, sum, max by field)
  /// and of the batches sent to each rank (sent_to[r]: 1 if this rank sends
  /// one to r, else 0); `to_here` is set to the batches this rank will receive.
  WindowState reduce_window(const WindowState& mine, std::span<const std::int64_t> sent_to,
                            std::int64_t& to_here) const;
  /// Starts sending outboxes[r] to rank r where it is not empty, before the
  /// window's reduction, so that the batches travel while it runs. They must
  /// stay untouched until receive_events(). `exchange` numbers the exchange
  /// (the same on every rank), which keeps its batches apart from the next one's.
  void send_events(std::span<const std::vector<Event>> outboxes, std::int64_t exchange) const;
  /// Appends the `expected` batches of exchange `exchange` sent here (as
  /// reduce_window counted them) to inbox, in the order they arrive, and waits
  /// until this rank's own have gone.
  void receive_events(std::int64_t expected, std::int64_t exchange,
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
  /// The same onto rank `root` (`out` is written only there).
  void sum_to(int root, std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const;
  /// Element-wise sum on every rank.
  void sum_all(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const;
  /// The same, summed into `values` (no second buffer of their size).
  void sum_all_in_place(std::span<std::uint64_t> values) const;
  /// Every rank's `in`, end to end in rank order, on every rank.
  std::vector<std::uint64_t> all_gather(std::span<const std::uint64_t> in) const;
  /// Every rank's `in`, end to end in rank order, on rank 0 (empty elsewhere).
  std::vector<char> gather_to_root(std::span<const char> in) const;
  /// Element-wise bitwise or on every rank.
  void or_all(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const;
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
