#include "shoal/core/comm.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/mpi/nonblocking.hpp>
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

struct Comm::Impl {
  mpi::communicator comm;
};

Comm::Comm(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)), rank_(impl_->comm.rank()), size_(impl_->comm.size()) {}
Comm::Comm(Comm&&) noexcept = default;
Comm& Comm::operator=(Comm&&) noexcept = default;
Comm::~Comm() = default;

Comm Comm::world() { return Comm(std::make_unique<Impl>(Impl{mpi::communicator()})); }

Comm Comm::self() {
  return Comm(std::make_unique<Impl>(Impl{mpi::communicator(MPI_COMM_SELF, mpi::comm_attach)}));
}

void Comm::exchange_slots(std::span<const WindowSlot> out, std::span<WindowSlot> in) const {
  static_assert(sizeof(WindowSlot) == 4 * sizeof(std::int64_t));
  constexpr int kWords = 4;
  mpi::all_to_all(impl_->comm, reinterpret_cast<const std::int64_t*>(out.data()), kWords,
                  reinterpret_cast<std::int64_t*>(in.data()));
}

void Comm::exchange_events(std::span<const std::vector<Event>> outboxes,
                           std::span<const WindowSlot> in, std::vector<Event>& inbox) const {
  constexpr int kTag = 17;
  std::vector<mpi::request> requests;
  requests.reserve(2 * static_cast<std::size_t>(size_));
  const std::size_t base = inbox.size();
  std::size_t total = base;
  for (int r = 0; r < size_; ++r)
    total += static_cast<std::size_t>(in[static_cast<std::size_t>(r)].count);
  inbox.resize(total);
  auto bytes_of = [](std::size_t events) {
    const std::size_t bytes = events * sizeof(Event);
    if (bytes > static_cast<std::size_t>(INT_MAX)) {
      throw Error(
          "a window exchanged more than 2 GiB of events with one rank; use a smaller "
          "lookahead or more ranks");
    }
    return static_cast<int>(bytes);
  };
  std::size_t offset = base;
  for (int r = 0; r < size_; ++r) {
    const auto n = static_cast<std::size_t>(in[static_cast<std::size_t>(r)].count);
    if (n == 0) continue;
    requests.push_back(
        impl_->comm.irecv(r, kTag, reinterpret_cast<char*>(inbox.data() + offset), bytes_of(n)));
    offset += n;
  }
  for (int r = 0; r < size_; ++r) {
    const auto& box = outboxes[static_cast<std::size_t>(r)];
    if (box.empty()) continue;
    requests.push_back(impl_->comm.isend(r, kTag, reinterpret_cast<const char*>(box.data()),
                                         bytes_of(box.size())));
  }
  mpi::wait_all(requests.begin(), requests.end());
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
template <class T, class Op>
void reduce_to_root(const mpi::communicator& comm, std::span<const T> in, std::span<T> out, Op op) {
  if (comm.size() == 1) {
    std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  // Every rank has the same size; with none, boost would bind a reference to null.
  if (in.empty()) return;
  if (in.size() > static_cast<std::size_t>(INT_MAX)) throw Error("reduce: too many values");
  if (comm.rank() == 0) {
    mpi::reduce(comm, in.data(), static_cast<int>(in.size()), out.data(), op, 0);
  } else {
    mpi::reduce(comm, in.data(), static_cast<int>(in.size()), op, 0);
  }
}
}  // namespace

void Comm::sum_to_root(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const {
  reduce_to_root(impl_->comm, in, out, std::plus<std::uint64_t>());
}

void Comm::sum_all(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const {
  if (in.empty()) return;
  mpi::all_reduce(impl_->comm, in.data(), static_cast<int>(in.size()), out.data(),
                  std::plus<std::uint64_t>());
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
