// The HDF5 output of one run (docs/output.md): flows and compute rows appended
// collectively as the run goes, coflows, iterations, links and /meta at the end.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/exec/run_results.hpp"
#include "shoal/exec/run_setup.hpp"
#include "shoal/output/hdf5_table.hpp"
#include "shoal/sched/policy.hpp"

namespace shoal::output {

class RunOutput {
 public:
  /// Collective. `flows`: write /flows (off for huge runs).
  RunOutput(const core::Comm& comm, const std::string& path, bool force, bool flows);

  /// Appends the model's rows and flushes the file (collective, in step) at
  /// the first synchronization after every `events_per_rank` x ranks events,
  /// counted over all ranks (identical everywhere at a synchronization); one
  /// rank, which runs one long window, every 4 M events between them too.
  void attach(exec::Model& model, std::int64_t events_per_rank = std::int64_t{1} << 22);
  /// Collective: the last rows, the end tables and /meta; renames the file
  /// (Hdf5File::commit) and returns the one that holds the results. `failed`:
  /// flows were left with no end time set (the same on every rank).
  std::string finish(const exec::RunSetup& setup, exec::Model& model,
                     const exec::RunResults& results, const core::RunSummary& summary,
                     const std::string& policy, const sched::CoflowPriorities& priorities,
                     bool completed, bool failed);

 private:
  /// The coflow table's chunk is merged over the ranks in this many blocks.
  static constexpr std::size_t kMergesPerChunk = 4;
  void append_records(exec::Recorder& recorder);
  /// /meta/inputs: each file the config named, whole up to [output]
  /// embed_limit, with its SHA-256 (docs/output.md).
  void write_inputs(const exec::RunSetup& setup);
  /// /nodes: every node of the fabric with its name as perturbations spell it.
  void write_nodes(const topo::Fabric& fabric);
  /// /links: a row per link with the counts the results hold in blocks.
  void write_links(const topo::Fabric& fabric, const exec::RunResults& r);

  const core::Comm& comm_;
  output::Hdf5File file_;
  bool flows_;
  std::size_t flows_table_ = 0, compute_table_ = 0, coflows_table_ = 0, iterations_table_ = 0,
              links_table_ = 0, link_util_table_ = 0;
  std::int64_t flushed_at_ = 0;  // global events at the last periodic flush
  std::int64_t batches_ = 0;     // one rank: rows are also appended between syncs (one long window)
};

}  // namespace shoal::output
