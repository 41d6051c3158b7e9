// SIGTERM and SIGINT (Slurm's time limit, Ctrl-C) as a request to stop: the
// handler only sets a flag; the simulator reads it at each window's
// synchronization, and every rank stops after the same window. The flag is
// process-wide state by nature (a signal reaches the process).
#pragma once

namespace shoal::core {

/// Installs the handlers (idempotent).
void install_stop_handlers();
/// Whether this process received SIGTERM or SIGINT since the handlers were installed.
bool stop_requested();
/// The signal's name ("SIGTERM", "SIGINT"), or "" if none arrived.
const char* stop_signal_name();

}  // namespace shoal::core
