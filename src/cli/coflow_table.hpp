// The run report's per-coflow table and the coflow CSV (-o FILE.csv), from
// every coflow's row merged over the ranks a block at a time
// (exec/coflow_rows.hpp): rank 0 writes each block as it comes.
#pragma once

#include <string>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/exec/coflow_rows.hpp"
#include "shoal/exec/recorder.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::cli {

struct NamedCoflowRow {
  exec::CoflowRow row;  // its name is `name`
  std::string name;
};

/// Collective over `comm`: writes every coflow's row to `csv` on rank 0
/// (nothing where it is empty), and returns there the rows with their names
/// where the DAG has at most `table_rows` coflows (none otherwise).
std::vector<NamedCoflowRow> coflow_table(const core::Comm& comm, const work::Dag& dag,
                                         const exec::Recorder& recorder, const std::string& csv,
                                         std::size_t table_rows);

}  // namespace shoal::cli
