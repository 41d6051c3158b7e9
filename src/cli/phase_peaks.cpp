#include "shoal/cli/phase_peaks.hpp"

#include <algorithm>
#include <fstream>
#include <string_view>

#include <spdlog/spdlog.h>

#include "shoal/core/units.hpp"

namespace shoal::cli {

std::uint64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  constexpr std::string_view kKey = "VmHWM:";
  while (std::getline(status, line)) {
    if (line.compare(0, kKey.size(), kKey) != 0) continue;
    return std::stoull(line.substr(kKey.size())) * 1024;  // "VmHWM:   123456 kB"
  }
  return 0;
}

bool reset_peak_resident() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

void PhasePeaks::end(Phase phase) { peak_[phase] = peak_resident_bytes(); }

std::string PhasePeaks::report(const core::Comm& comm) const {
  // The same reductions on every rank.
  std::array<std::uint64_t, kPhases> largest{};
  for (std::size_t p = 0; p < kPhases; ++p) {
    largest[p] = static_cast<std::uint64_t>(comm.max(static_cast<std::int64_t>(peak_[p])));
  }
  const std::uint64_t whole = *std::max_element(largest.begin(), largest.end());
  if (whole == 0) return {};
  auto mb = [](std::uint64_t bytes) { return format_bytes_decimal(static_cast<Bytes>(bytes)); };
  // Each rank's own figures (the log names the rank): which is the largest, and where.
  spdlog::debug("this rank's peak resident memory: {} once built{}, {} at the end",
                mb(peak_[kBuild]),
                peak_[kPilot] > 0 ? ", " + mb(peak_[kPilot]) + " after the pilot" : std::string(),
                mb(peak_[kRun]));
  const bool own = comm.min(std::int64_t{own_}) != 0;
  std::string text = "peak resident memory " + std::string(own ? "" : "of the process ") +
                     mb(whole) + (comm.size() > 1 ? " on the largest rank" : std::string());
  std::string before;
  if (largest[kBuild] > 0) before = mb(largest[kBuild]) + " once built";
  if (largest[kPilot] > 0) before += ", " + mb(largest[kPilot]) + " after the pilot";
  return before.empty() ? text : text + " (" + before + ")";
}

}  // namespace shoal::cli
