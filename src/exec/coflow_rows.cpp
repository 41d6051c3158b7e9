#include "shoal/exec/coflow_rows.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "shoal/exec/recorder.hpp"

namespace shoal::exec {

namespace {
// The fields merged by their maximum over the ranks: a rank that does not
// hold a coflow gives 0 (-1 for the end), below any value a holder gives.
enum Field : std::size_t {
  kEnd,
  kBytes,
  kJob,
  kIteration,
  kMicroBatch,
  kLayer,
  kStage,
  kFlowCount,
  kKey,
  kTypeAndClass,
  kFields
};

/// Appends a held coflow's name to `out`: its id, its length, its characters.
void pack_name(std::uint32_t id, std::string_view name, std::vector<char>& out) {
  const auto length = static_cast<std::uint32_t>(name.size());
  const std::size_t at = out.size();
  out.resize(at + 8 + name.size());
  std::memcpy(out.data() + at, &id, 4);
  std::memcpy(out.data() + at + 4, &length, 4);
  std::memcpy(out.data() + at + 8, name.data(), name.size());
}
}  // namespace

void merge_coflow_rows(const core::Comm& comm, const work::Dag& dag, const Recorder& recorder,
                       const CoflowRowOptions& options,
                       const std::function<void(std::span<const CoflowRow>)>& each_block) {
  const std::size_t count = dag.coflow_count();
  const std::size_t block = std::max<std::size_t>(1, options.block);
  const bool root = comm.rank() == 0;
  const std::span<const Time> starts = recorder.coflow_starts();
  const std::span<const Time> ends = recorder.coflow_ends();
  const std::span<const std::uint64_t> ended = recorder.coflow_flows_ended();
  std::vector<std::int64_t> low, high, low_out, high_out;
  std::vector<std::uint64_t> sum, sum_out;
  std::vector<char> names;
  std::vector<CoflowRow> rows;
  for (std::size_t first = 0; first < count; first += block) {
    const std::size_t end = std::min(count, first + block);
    const std::size_t n = end - first;
    low.assign(n, kTimeInfinity);
    high.assign(n * kFields, 0);
    for (std::size_t i = 0; i < n; ++i) high[i * kFields + kEnd] = -1;
    sum.assign(n, 0);
    names.clear();
    const auto first_id = static_cast<std::uint32_t>(first);
    const auto end_id = static_cast<std::uint32_t>(end);
    for (std::size_t s = dag.coflows_held_below(first_id); s < dag.coflows_held_below(end_id);
         ++s) {
      const work::CoflowId id = dag.held_coflow_id(s);
      const work::Coflow& c = dag.coflows()[s];
      const std::size_t i = std::size_t{id} - first;
      std::int64_t* f = &high[i * kFields];
      low[i] = starts[s];
      sum[i] = ended[s];
      f[kEnd] = ends[s];
      f[kBytes] = c.bytes;
      f[kJob] = c.labels.job;
      f[kIteration] = c.labels.iteration;
      f[kMicroBatch] = c.labels.micro_batch;
      f[kLayer] = c.labels.layer;
      f[kStage] = c.labels.stage;
      f[kFlowCount] = c.flow_count;
      f[kKey] = options.key.empty() ? 0 : options.key[s];
      f[kTypeAndClass] = static_cast<std::int64_t>(static_cast<std::uint32_t>(c.labels.type) << 8 |
                                                   (options.cls.empty() ? 0U : options.cls[s]));
      if (options.names) pack_name(id, c.name, names);
    }
    low_out.assign(root ? n : 0, 0);
    high_out.assign(root ? n * kFields : 0, 0);
    sum_out.assign(root ? n : 0, 0);
    comm.min_to_root(low, low_out);
    comm.max_to_root(high, high_out);
    comm.sum_to_root(sum, sum_out);
    const std::vector<char> all_names =
        options.names ? comm.gather_to_root(names) : std::vector<char>();
    rows.clear();
    if (root) {
      rows.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t* f = &high_out[i * kFields];
        CoflowRow& row = rows[i];
        row.id = static_cast<std::uint32_t>(first + i);
        row.labels.type = static_cast<work::CoflowType>(f[kTypeAndClass] >> 8);
        row.labels.job = static_cast<std::uint32_t>(f[kJob]);
        row.labels.iteration = static_cast<std::uint32_t>(f[kIteration]);
        row.labels.micro_batch = static_cast<std::uint32_t>(f[kMicroBatch]);
        row.labels.layer = static_cast<std::uint32_t>(f[kLayer]);
        row.labels.stage = static_cast<std::uint32_t>(f[kStage]);
        row.flow_count = static_cast<std::uint32_t>(f[kFlowCount]);
        row.bytes = f[kBytes];
        row.start = low_out[i];
        row.end = f[kEnd];
        row.flows_ended = sum_out[i];
        row.key = static_cast<std::uint32_t>(f[kKey]);
        row.cls = static_cast<std::uint8_t>(f[kTypeAndClass] & 0xFF);
      }
      // Each holder sent the name; the lowest rank's is kept (they are the same).
      for (std::size_t at = 0; at < all_names.size();) {
        std::uint32_t id = 0, length = 0;
        std::memcpy(&id, all_names.data() + at, 4);
        std::memcpy(&length, all_names.data() + at + 4, 4);
        CoflowRow& row = rows[id - first];
        if (row.name.empty()) row.name = {all_names.data() + at + 8, length};
        at += 8 + length;
      }
    }
    each_block(rows);
  }
}

}  // namespace shoal::exec
