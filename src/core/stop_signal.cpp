#include "shoal/core/stop_signal.hpp"

#include <csignal>

namespace shoal::core {
namespace {

volatile std::sig_atomic_t received = 0;

extern "C" void on_stop_signal(int signal) { received = signal; }

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

bool stop_requested() { return received != 0; }

const char* stop_signal_name() {
  switch (received) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "";
  }
}

}  // namespace shoal::core
