// The peak resident memory of a run, the largest over the ranks, and how far
// it had come by the end of each phase (building the workload, the weighted
// partition's pilot): what a user sizes a job's memory per rank by, and where
// it grows. The peak is the kernel's (VmHWM in /proc/self/status, which
// `/usr/bin/time -f %M` reports too), reset as the run begins, so that each
// run of a process that runs several (`shoal sweep --all`) has its own.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "shoal/core/comm.hpp"

namespace shoal::cli {

/// The process's peak resident memory so far (or since the last reset), in
/// bytes; 0 where the system does not say.
std::uint64_t peak_resident_bytes();
/// Makes the peak what is resident now (Linux: 5 written to
/// /proc/self/clear_refs); false where the system does not allow it.
bool reset_peak_resident();

class PhasePeaks {
 public:
  enum Phase : std::uint8_t { kBuild, kPilot, kRun, kPhases };

  /// Starts the run's count: the peak is reset to what is resident now.
  PhasePeaks() : own_(reset_peak_resident()) {}

  /// A phase ends on this rank: the peak so far is its figure (the pilot's
  /// includes reading the config again where the weighted partition moved
  /// the fragments; the run's, each policy's run so far, with the policies'
  /// keys and the output).
  void end(Phase phase);
  /// Collective over `comm`: the line for the report, on every rank, e.g.
  /// "peak resident memory 123.8 MB on the largest rank (119.1 MB once
  /// built, 121.5 MB after the pilot)"; "of the process" after "memory"
  /// where the peak could not be reset; empty where the system does not say.
  std::string report(const core::Comm& comm) const;

 private:
  std::array<std::uint64_t, kPhases> peak_{};
  bool own_;  // the peak was reset as the run began
};

}  // namespace shoal::cli
