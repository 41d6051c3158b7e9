// The peak resident memory of a run, the largest over the ranks, and how far
// it had come by the end of each phase (building the workload, the weighted
// partition's pilot): what a user sizes a job's memory per rank by, and where
// it grows. The peak is the kernel's (VmHWM in /proc/self/status, which
// `/usr/bin/time -f %M` reports too); it is read, never reset, so that tools
// outside see the whole process's.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "shoal/core/comm.hpp"

namespace shoal::cli {

/// The process's peak resident memory so far, in bytes; 0 where the system
/// does not say.
std::uint64_t peak_resident_bytes();

class PhasePeaks {
 public:
  enum Phase : std::uint8_t { kBuild, kPilot, kRun, kPhases };

  /// A phase ends on this rank: the peak so far is its figure (the pilot's
  /// includes reading the config again where the weighted partition moved
  /// the fragments; the run's, each policy's run so far, with the policies'
  /// keys and the output).
  void end(Phase phase);
  /// Collective over `comm`: the line for the report, on every rank, e.g.
  /// "peak resident memory 123.8 MB on the largest rank (119.1 MB once
  /// built, 121.7 MB after the pilot)"; empty where the system does not say.
  std::string report(const core::Comm& comm) const;

 private:
  std::array<std::uint64_t, kPhases> peak_{};
};

}  // namespace shoal::cli
