// A crash on one rank (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) says which
// rank and which signal on stderr before the process dies with that signal;
// the MPI launcher then stops every other rank (docs/reliability.md).
#pragma once

namespace shoal::core {

/// Installs the handlers for this process, naming it `rank` in the message.
/// Does nothing in sanitizer builds, whose own handlers report more.
void install_fatal_signal_handlers(int rank);

}  // namespace shoal::core
