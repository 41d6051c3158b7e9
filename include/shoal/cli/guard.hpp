// How a command fails under MPI. Set-up runs on every rank and ends in one
// collective check, so an error found by any rank stops all of them cleanly
// (one line from the lowest failing rank, exit 1, no hang). Past set-up, ranks
// run apart, so an error there prints its line and aborts the whole job.
#pragma once

#include <functional>

#include "shoal/core/comm.hpp"

namespace shoal::cli {

/// Runs `setup` on every rank; true when it succeeded everywhere.
bool setup_everywhere(const core::Comm& comm, const std::function<void()>& setup);

/// Runs `body`; an exception prints one line and ends every rank with exit code 1.
int run_or_abort(const core::Comm& comm, const std::function<int()>& body);

/// Runs `body` on rank 0 only (a command with one writer, whatever the
/// launch); every rank returns its exit code, so an error is one line and no
/// MPI_ABORT banner.
int on_rank_zero(const core::Comm& comm, const std::function<int()>& body);

/// The one-line error format: "shoal: error: MESSAGE".
void print_error(const std::string& message);

}  // namespace shoal::cli
