#include "shoal/cli/guard.hpp"

#include <cstdio>
#include <exception>
#include <string>

namespace shoal::cli {

void print_error(const std::string& message) {
  std::fprintf(stderr, "shoal: error: %s\n", message.c_str());
  std::fflush(stderr);
}

bool setup_everywhere(const core::Comm& comm, const std::function<void()>& setup) {
  std::string error;
  try {
    setup();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "unknown error";
  }
  const std::int64_t first_failed = comm.min(error.empty() ? comm.size() : comm.rank());
  if (first_failed == comm.size()) return true;
  if (comm.rank() == first_failed) print_error(error);
  return false;
}

int on_rank_zero(const core::Comm& comm, const std::function<int()>& body) {
  std::int64_t code = 0;
  if (comm.rank() == 0) {
    try {
      code = body();
    } catch (const std::exception& e) {
      print_error(e.what());
      code = 1;
    }
  }
  return static_cast<int>(comm.max(code));
}

int run_or_abort(const core::Comm& comm, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    if (comm.size() == 1) {
      print_error(e.what());
      return 1;
    }
    print_error(std::string(e.what()) + " (rank " + std::to_string(comm.rank()) +
                "; stopping all ranks)");
    comm.abort(1);
  }
}

}  // namespace shoal::cli
