#include "coflow_table.hpp"

#include <ostream>

#include "shoal/core/files.hpp"
#include "shoal/exec/outcomes.hpp"

namespace shoal::cli {

std::vector<NamedCoflowRow> coflow_table(const core::Comm& comm, const work::Dag& dag,
                                         const exec::Recorder& recorder, const std::string& csv,
                                         std::size_t table_rows) {
  const bool keep = dag.coflow_count() <= table_rows;
  std::vector<NamedCoflowRow> kept;
  exec::CoflowRowOptions options;
  options.names = keep || !csv.empty();
  if (!options.names) return kept;
  auto merge = [&](std::ostream* out) {
    exec::merge_coflow_rows(
        comm, dag, recorder, options, [&](std::span<const exec::CoflowRow> rows) {
          for (const exec::CoflowRow& row : rows) {
            if (keep) kept.push_back({row, std::string(row.name)});
            if (out == nullptr) continue;
            const exec::CoflowOutcome o = exec::coflow_outcome(row);
            const work::CoflowLabels& l = row.labels;
            *out << row.id << ',' << row.name << ',' << work::coflow_type_name(l.type) << ','
                 << l.job << ',' << l.iteration << ',' << l.micro_batch << ',' << l.layer << ','
                 << l.stage << ',' << row.flow_count << ',' << o.bytes << ','
                 << (o.started() ? o.start : -1) << ',' << (o.done ? o.end : -1) << ',' << o.cct()
                 << '\n';
          }
        });
  };
  if (comm.rank() != 0 || csv.empty()) {
    merge(nullptr);
  } else {
    core::write_file(csv, "output", [&](std::ostream& out) {
      out << "id,name,type,job,iteration,micro_batch,layer,stage,flows,bytes,start_ps,end_ps,"
             "cct_ps\n";
      merge(&out);
    });
  }
  for (NamedCoflowRow& r : kept) r.row.name = {};
  return kept;
}

}  // namespace shoal::cli
