#include "shoal/core/comm.hpp"

#include <algorithm>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/mpi/nonblocking.hpp>
#include <boost/mpi/operations.hpp>
#include <climits>
#include <cstring>
#include <functional>

#include "shoal/core/error.hpp"

namespace mpi = boost::mpi;

namespace shoal::core {

struct MpiSession::Impl {
  Impl(int& argc, char**& argv) : env(argc, argv, mpi::threading::single, false) {}
  mpi::environment env;
};

MpiSession::MpiSession(int& argc, char**& argv) : impl_(std::make_unique<Impl>(argc, argv)) {}
MpiSession::~MpiSession() = default;

std::string mpi_library_version() {
  // Raw MPI: Boost.MPI 1.74 has no call for the library's own version string.
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(library, &length);
  std::string text(library, static_cast<std::size_t>(length));
  if (const auto comma = text.find(','); comma != std::string::npos) {
    text.resize(comma);  // the first clause names the library and its version
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

namespace {
constexpr std::size_t kStateWords = 5;
/// A window's reduction: the WindowState's fields, then one count per rank.
void reduce_window_words(void* in, void* inout, int* count, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  const std::size_t words = static_cast<std::size_t>(bytes) / sizeof(std::int64_t);
  const auto* a = static_cast<const std::int64_t*>(in);
  auto* b = static_cast<std::int64_t*>(inout);
  for (int i = 0; i < *count; ++i, a += words, b += words) {
    b[0] = std::min(a[0], b[0]);
    b[1] += a[1];
    b[2] = std::max(a[2], b[2]);
    b[3] = std::max(a[3], b[3]);
    b[4] = std::max(a[4], b[4]);
    for (std::size_t w = kStateWords; w < words; ++w) b[w] += a[w];
  }
}
}  // namespace

struct Comm::Impl {
  explicit Impl(mpi::communicator c) : comm(std::move(c)) {
    static_assert(sizeof(WindowState) == kStateWords * sizeof(std::int64_t));
    const std::size_t words = kStateWords + static_cast<std::size_t>(comm.size());
    window_out.resize(words);
    window_in.resize(words);
    MPI_Type_contiguous(static_cast<int>(words), MPI_INT64_T, &window_type);
    MPI_Type_commit(&window_type);
    MPI_Op_create(&reduce_window_words, /*commute=*/1, &window_op);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Op_free(&window_op);
    MPI_Type_free(&window_type);
  }
  mpi::communicator comm;
  MPI_Datatype window_type = MPI_DATATYPE_NULL;
  MPI_Op window_op = MPI_OP_NULL;
  // Kept from window to window, so that a window allocates nothing.
  std::vector<std::int64_t> window_out, window_in;
  std::vector<MPI_Request> sends;
};

Comm::Comm(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)), rank_(impl_->comm.rank()), size_(impl_->comm.size()) {}
Comm::Comm(Comm&&) noexcept = default;
Comm& Comm::operator=(Comm&&) noexcept = default;
Comm::~Comm() = default;

Comm Comm::world() { return Comm(std::make_unique<Impl>(mpi::communicator())); }

Comm Comm::self() {
  return Comm(std::make_unique<Impl>(mpi::communicator(MPI_COMM_SELF, mpi::comm_attach)));
}

WindowState Comm::reduce_window(const WindowState& mine, std::span<const std::int64_t> sent_to,
                                std::int64_t& to_here) const {
  // One allreduce, not an all-to-all: O(log N) messages a rank, where the
  // all-to-all of counts took N. Its N counts are 8 bytes a rank, which a
  // reduction carries in the latency of a small message up to thousands of ranks.
  std::vector<std::int64_t>& out = impl_->window_out;
  std::vector<std::int64_t>& in = impl_->window_in;
  out[0] = mine.next_time;
  out[1] = mine.events;
  out[2] = mine.stop;
  out[3] = mine.busiest;
  out[4] = mine.slowest_work;
  std::copy(sent_to.begin(), sent_to.end(), out.begin() + kStateWords);
  MPI_Allreduce(out.data(), in.data(), 1, impl_->window_type, impl_->window_op,
                static_cast<MPI_Comm>(impl_->comm));
  to_here = in[kStateWords + static_cast<std::size_t>(rank_)];
  return {in[0], in[1], in[2], in[3], in[4]};
}

namespace {

// Two tags, by the exchange's parity. Exchange k's batches are sent before
// reduction k and received after it. The next exchange's may be sent before
// every rank has received this one's, so they take the other tag. Exchange
// k + 2's cannot: a rank sends them only after reduction k + 1, which none
// leaves before all have entered it, that is, before all have received
// exchange k's.
int batch_tag(std::int64_t exchange) { return 17 + static_cast<int>(exchange & 1); }

}  // namespace

void Comm::send_events(std::span<const std::vector<Event>> outboxes, std::int64_t exchange) const {
  // Only the batches that exist travel, each to its rank.
  const MPI_Comm comm = static_cast<MPI_Comm>(impl_->comm);
  auto bytes_of = [](std::size_t events) {
    const std::size_t bytes = events * sizeof(Event);
    if (bytes > static_cast<std::size_t>(INT_MAX)) {
      throw Error(
          "a window exchanged more than 2 GiB of events with one rank; use a smaller "
          "lookahead or more ranks");
    }
    return static_cast<int>(bytes);
  };
  std::vector<MPI_Request>& sends = impl_->sends;
  sends.clear();
  for (int r = 0; r < size_; ++r) {
    const auto& box = outboxes[static_cast<std::size_t>(r)];
    if (box.empty()) continue;
    sends.emplace_back();
    MPI_Isend(box.data(), bytes_of(box.size()), MPI_BYTE, r, batch_tag(exchange), comm,
              &sends.back());
  }
}

void Comm::receive_events(std::int64_t expected, std::int64_t exchange,
                          std::vector<Event>& inbox) const {
  // As many batches as reduce_window counted for this rank, from whichever
  // rank's arrives first.
  const MPI_Comm comm = static_cast<MPI_Comm>(impl_->comm);
  for (std::int64_t i = 0; i < expected; ++i) {
    MPI_Message message;
    MPI_Status status;
    MPI_Mprobe(MPI_ANY_SOURCE, batch_tag(exchange), comm, &message, &status);
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    const std::size_t base = inbox.size();
    inbox.resize(base + static_cast<std::size_t>(bytes) / sizeof(Event));
    MPI_Mrecv(inbox.data() + base, bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
  }
  std::vector<MPI_Request>& sends = impl_->sends;
  MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
  sends.clear();
}

std::int64_t Comm::exclusive_sum(std::int64_t v) const {
  // scan is inclusive; subtracting our own value makes it exclusive.
  return mpi::scan(impl_->comm, v, std::plus<std::int64_t>()) - v;
}

const void* Comm::native() const {
  static_assert(sizeof(MPI_Comm) <= sizeof(native_storage_));
  const MPI_Comm handle = static_cast<MPI_Comm>(impl_->comm);
  std::memcpy(native_storage_, &handle, sizeof handle);
  return native_storage_;
}

int Comm::ranks_on_node() const {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(static_cast<MPI_Comm>(impl_->comm), MPI_COMM_TYPE_SHARED, rank_,
                      MPI_INFO_NULL, &node);
  int size = 1;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return size;
}

std::int64_t Comm::sum(std::int64_t v) const {
  return mpi::all_reduce(impl_->comm, v, std::plus<std::int64_t>());
}
std::int64_t Comm::max(std::int64_t v) const {
  return mpi::all_reduce(impl_->comm, v, mpi::maximum<std::int64_t>());
}
std::int64_t Comm::min(std::int64_t v) const {
  return mpi::all_reduce(impl_->comm, v, mpi::minimum<std::int64_t>());
}
double Comm::max(double v) const { return mpi::all_reduce(impl_->comm, v, mpi::maximum<double>()); }
double Comm::sum(double v) const { return mpi::all_reduce(impl_->comm, v, std::plus<double>()); }

namespace {
/// Large reductions go a block of values at a time: Open MPI's reduce holds
/// buffers the size of its message at every inner rank of its tree, and the
/// results' per-link and per-GPU arrays made that the largest transient of a
/// run with output. The values are reduced element by element, so the result
/// is the same.
constexpr std::size_t kReduceBlock = std::size_t{1} << 15;

template <class T, class Op>
void reduce_to_root(const mpi::communicator& comm, std::span<const T> in, std::span<T> out, Op op,
                    int root = 0) {
  if (comm.size() == 1) {
    std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  // Every rank has the same size; with none, boost would bind a reference to null.
  for (std::size_t first = 0; first < in.size(); first += kReduceBlock) {
    const std::size_t count = std::min(kReduceBlock, in.size() - first);
    if (comm.rank() == root) {
      mpi::reduce(comm, in.data() + first, static_cast<int>(count), out.data() + first, op, root);
    } else {
      mpi::reduce(comm, in.data() + first, static_cast<int>(count), op, root);
    }
  }
}
}  // namespace

void Comm::sum_to_root(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const {
  reduce_to_root(impl_->comm, in, out, std::plus<std::uint64_t>());
}

void Comm::sum_to(int root, std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const {
  reduce_to_root(impl_->comm, in, out, std::plus<std::uint64_t>(), root);
}

void Comm::sum_all(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const {
  for (std::size_t first = 0; first < in.size(); first += kReduceBlock) {
    const std::size_t count = std::min(kReduceBlock, in.size() - first);
    mpi::all_reduce(impl_->comm, in.data() + first, static_cast<int>(count), out.data() + first,
                    std::plus<std::uint64_t>());
  }
}

void Comm::sum_all_in_place(std::span<std::uint64_t> values) const {
  for (std::size_t first = 0; first < values.size(); first += kReduceBlock) {
    const std::size_t count = std::min(kReduceBlock, values.size() - first);
    MPI_Allreduce(MPI_IN_PLACE, values.data() + first, static_cast<int>(count), MPI_UINT64_T,
                  MPI_SUM, static_cast<MPI_Comm>(impl_->comm));
  }
}

namespace {
/// Each rank's count and where its items start, over `comm`: on every rank
/// (`root` < 0) or on `root` alone.
int counts_and_starts(MPI_Comm comm, int size, std::size_t mine, int root, std::vector<int>& counts,
                      std::vector<int>& starts) {
  if (mine > static_cast<std::size_t>(INT_MAX)) {
    throw Error("internal: a gather of more than 2^31 values from one rank");
  }
  const int count = static_cast<int>(mine);
  counts.assign(static_cast<std::size_t>(size), 0);
  if (root < 0) {
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  } else {
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  }
  starts.assign(static_cast<std::size_t>(size), 0);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    starts[r] = static_cast<int>(total);
    total += counts[r];
  }
  if (total > INT_MAX) throw Error("internal: a gather of more than 2^31 values");
  return static_cast<int>(total);
}
}  // namespace

std::vector<std::uint64_t> Comm::all_gather(std::span<const std::uint64_t> in) const {
  const auto comm = static_cast<MPI_Comm>(impl_->comm);
  std::vector<int> counts, starts;
  const int total = counts_and_starts(comm, size_, in.size(), -1, counts, starts);
  std::vector<std::uint64_t> out(static_cast<std::size_t>(total));
  MPI_Allgatherv(in.data(), static_cast<int>(in.size()), MPI_UINT64_T, out.data(), counts.data(),
                 starts.data(), MPI_UINT64_T, comm);
  return out;
}

std::vector<char> Comm::gather_to_root(std::span<const char> in) const {
  const auto comm = static_cast<MPI_Comm>(impl_->comm);
  std::vector<int> counts, starts;
  const int total = counts_and_starts(comm, size_, in.size(), 0, counts, starts);
  std::vector<char> out(rank_ == 0 ? static_cast<std::size_t>(total) : 0);
  MPI_Gatherv(in.data(), static_cast<int>(in.size()), MPI_CHAR, out.data(), counts.data(),
              starts.data(), MPI_CHAR, 0, comm);
  return out;
}

void Comm::or_all(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const {
  for (std::size_t first = 0; first < in.size(); first += kReduceBlock) {
    const std::size_t count = std::min(kReduceBlock, in.size() - first);
    mpi::all_reduce(impl_->comm, in.data() + first, static_cast<int>(count), out.data() + first,
                    mpi::bitwise_or<std::uint64_t>());
  }
}

void Comm::min_to_root(std::span<const std::int64_t> in, std::span<std::int64_t> out) const {
  reduce_to_root(impl_->comm, in, out, mpi::minimum<std::int64_t>());
}

void Comm::max_to_root(std::span<const std::int64_t> in, std::span<std::int64_t> out) const {
  reduce_to_root(impl_->comm, in, out, mpi::maximum<std::int64_t>());
}

void Comm::barrier() const { impl_->comm.barrier(); }

void Comm::abort(int code) const {
  impl_->comm.abort(code);
  std::abort();
}

}  // namespace shoal::core
