#include "shoal/core/fatal_signal.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace shoal::core {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The message is built before any signal arrives: the handler may only call
// async-signal-safe functions (write, signal, raise), never allocate or format.
char prefix[64];
std::size_t prefix_length = 0;

void put(const char* text, std::size_t length) {
  while (length > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, length);
    if (n <= 0) return;
    text += n;
    length -= static_cast<std::size_t>(n);
  }
}

const char* name_of(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (aborted)";
    default:
      return "a fatal signal";
  }
}

extern "C" void on_fatal_signal(int signal) {
  put(prefix, prefix_length);
  const char* name = name_of(signal);
  put(name, std::strlen(name));
  static const char tail[] = "; the other ranks stop with it\n";
  put(tail, sizeof tail - 1);
  // Die of the same signal, so the launcher and the shell see what happened.
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void install_fatal_signal_handlers(int rank) {
  if (kSanitized) return;  // ASan and UBSan print the stack themselves
  const int n = std::snprintf(prefix, sizeof prefix, "shoal: rank %d: fatal signal ", rank);
  prefix_length = n > 0 ? std::min(static_cast<std::size_t>(n), sizeof prefix - 1) : 0;
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    sigaction(signal, &action, nullptr);
  }
}

}  // namespace shoal::core
