#include "shoal/output/run_output.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "shoal/exec/outcomes.hpp"
#include "shoal/output/build_info.hpp"

namespace shoal::output {
namespace {

using exec::ComputeRecord;
using exec::FlowRecord;
using Type = Column::Type;

struct CoflowTableRow {
  std::uint32_t id, job, iteration, micro_batch, layer, stage;
  std::uint8_t type, cls;
  std::uint32_t key, flows;
  std::int64_t bytes, start_ps, end_ps;
};

struct IterationRow {
  std::uint32_t job, iteration;
  std::int64_t start_ps, end_ps, exposed_comm_mean_ps, exposed_comm_max_ps;
};

struct NodeRow {
  std::uint32_t id;
  std::uint8_t kind, level;
  std::uint32_t plane, group, index;
  char name[Column::kNameBytes];
};

struct LinkUtilRow {
  std::uint32_t link, bin;
  std::int64_t start_ps, bytes;
  double utilization;  // bytes / (rate x bin width)
};

struct LinkRow {
  std::uint32_t id, src, dst;
  std::uint8_t tier;
  std::int64_t rate_bps, bytes;
  std::int64_t bytes_c[net::kClasses];
  std::int64_t busy_ps;
};

#define SHOAL_COLUMN(row, field, type) \
  Column { #field, offsetof(row, field), type }

}  // namespace

RunOutput::RunOutput(const core::Comm& comm, const std::string& path, bool force, bool flows)
    : comm_(comm), file_(comm, path, force), flows_(flows) {
  const std::string ps = "ps for *_ps columns; bytes";
  if (flows_) {
    flows_table_ = file_.add_table(
        "flows", sizeof(FlowRecord),
        {SHOAL_COLUMN(FlowRecord, id, Type::kU32), SHOAL_COLUMN(FlowRecord, coflow, Type::kU32),
         SHOAL_COLUMN(FlowRecord, src_gpu, Type::kU32),
         SHOAL_COLUMN(FlowRecord, dst_gpu, Type::kU32), SHOAL_COLUMN(FlowRecord, bytes, Type::kI64),
         SHOAL_COLUMN(FlowRecord, start_ps, Type::kI64),
         SHOAL_COLUMN(FlowRecord, end_ps, Type::kI64)},
        ps);
  }
  compute_table_ = file_.add_table(
      "compute", sizeof(ComputeRecord),
      {SHOAL_COLUMN(ComputeRecord, task, Type::kU32), SHOAL_COLUMN(ComputeRecord, gpu, Type::kU32),
       SHOAL_COLUMN(ComputeRecord, job, Type::kU32),
       SHOAL_COLUMN(ComputeRecord, iteration, Type::kU32),
       SHOAL_COLUMN(ComputeRecord, micro_batch, Type::kU32),
       SHOAL_COLUMN(ComputeRecord, layer, Type::kU32), SHOAL_COLUMN(ComputeRecord, kind, Type::kU8),
       SHOAL_COLUMN(ComputeRecord, start_ps, Type::kI64),
       SHOAL_COLUMN(ComputeRecord, end_ps, Type::kI64)},
      ps);
  file_.attribute("compute", "kind_names", std::string("other,fwd,bwd,optimizer"));
  coflows_table_ = file_.add_table(
      "coflows", sizeof(CoflowTableRow),
      {SHOAL_COLUMN(CoflowTableRow, id, Type::kU32), SHOAL_COLUMN(CoflowTableRow, job, Type::kU32),
       SHOAL_COLUMN(CoflowTableRow, iteration, Type::kU32),
       SHOAL_COLUMN(CoflowTableRow, micro_batch, Type::kU32),
       SHOAL_COLUMN(CoflowTableRow, layer, Type::kU32),
       SHOAL_COLUMN(CoflowTableRow, stage, Type::kU32),
       SHOAL_COLUMN(CoflowTableRow, type, Type::kU8), SHOAL_COLUMN(CoflowTableRow, key, Type::kU32),
       Column{"class", offsetof(CoflowTableRow, cls), Type::kU8},
       SHOAL_COLUMN(CoflowTableRow, flows, Type::kU32),
       SHOAL_COLUMN(CoflowTableRow, bytes, Type::kI64),
       SHOAL_COLUMN(CoflowTableRow, start_ps, Type::kI64),
       SHOAL_COLUMN(CoflowTableRow, end_ps, Type::kI64)},
      ps);
  file_.attribute("coflows", "type_names", std::string("EP,PP,DP,TP,OTHER,CP"));
  iterations_table_ = file_.add_table("iterations", sizeof(IterationRow),
                                      {SHOAL_COLUMN(IterationRow, job, Type::kU32),
                                       SHOAL_COLUMN(IterationRow, iteration, Type::kU32),
                                       SHOAL_COLUMN(IterationRow, start_ps, Type::kI64),
                                       SHOAL_COLUMN(IterationRow, end_ps, Type::kI64),
                                       SHOAL_COLUMN(IterationRow, exposed_comm_mean_ps, Type::kI64),
                                       SHOAL_COLUMN(IterationRow, exposed_comm_max_ps, Type::kI64)},
                                      ps);
  std::vector<Column> link_columns = {
      SHOAL_COLUMN(LinkRow, id, Type::kU32),       SHOAL_COLUMN(LinkRow, src, Type::kU32),
      SHOAL_COLUMN(LinkRow, dst, Type::kU32),      SHOAL_COLUMN(LinkRow, tier, Type::kU8),
      SHOAL_COLUMN(LinkRow, rate_bps, Type::kI64), SHOAL_COLUMN(LinkRow, bytes, Type::kI64)};
  for (int c = 0; c < net::kClasses; ++c) {
    link_columns.push_back(Column{"bytes_c" + std::to_string(c),
                                  offsetof(LinkRow, bytes_c) + sizeof(std::int64_t) * c,
                                  Type::kI64});
  }
  link_columns.push_back(SHOAL_COLUMN(LinkRow, busy_ps, Type::kI64));
  links_table_ = file_.add_table("links", sizeof(LinkRow), link_columns,
                                 "bits/s for rate_bps; bytes; ps for busy_ps");
  file_.attribute("links", "tier_names", std::string("nvlink,host,spine,core"));
  link_util_table_ = file_.add_table(
      "link_util", sizeof(LinkUtilRow),
      {SHOAL_COLUMN(LinkUtilRow, link, Type::kU32), SHOAL_COLUMN(LinkUtilRow, bin, Type::kU32),
       SHOAL_COLUMN(LinkUtilRow, start_ps, Type::kI64),
       SHOAL_COLUMN(LinkUtilRow, bytes, Type::kI64),
       SHOAL_COLUMN(LinkUtilRow, utilization, Type::kF64)},
      "ps for start_ps; bytes sent in the bin (a cell split over the bins it spans); "
      "utilization = bytes x 8 / (rate x bin width)");
  // Readable from the start: a rank that dies before the first periodic flush
  // leaves a .partial file with its (empty) tables, not one without a superblock.
  file_.flush();
}

void RunOutput::write_nodes(const topo::Fabric& fabric) {
  const std::size_t table = file_.add_table(
      "nodes", sizeof(NodeRow),
      {SHOAL_COLUMN(NodeRow, id, Type::kU32), SHOAL_COLUMN(NodeRow, kind, Type::kU8),
       SHOAL_COLUMN(NodeRow, level, Type::kU8), SHOAL_COLUMN(NodeRow, plane, Type::kU32),
       SHOAL_COLUMN(NodeRow, group, Type::kU32), SHOAL_COLUMN(NodeRow, index, Type::kU32),
       SHOAL_COLUMN(NodeRow, name, Type::kName)},
      "");
  file_.attribute("nodes", "kind_names", std::string("gpu,nvswitch,switch"));
  file_.attribute("nodes", "level_names", std::string("server,leaf,spine,core"));
  std::vector<NodeRow> rows;
  if (comm_.rank() == 0) {
    rows.reserve(fabric.node_count());
    for (topo::NodeId n = 0; n < fabric.node_count(); ++n) {
      const topo::Node& node = fabric.node(n);
      NodeRow row{
          n, static_cast<std::uint8_t>(node.kind), node.level, node.plane, node.group, node.index,
          {}};
      const std::string name = fabric.node_name(n);
      name.copy(row.name, std::min(name.size(), sizeof row.name));
      rows.push_back(row);
    }
  }
  file_.append(table, rows.data(), rows.size());
}

void RunOutput::write_inputs(const exec::RunSetup& setup) {
  file_.attribute("meta", "inputs", static_cast<std::int64_t>(setup.inputs.size()));
  file_.attribute("meta", "embed_limit", static_cast<std::int64_t>(setup.embed_limit));
  for (std::size_t i = 0; i < setup.inputs.size(); ++i) {
    const config::InputSnapshot& in = setup.inputs[i];
    const std::string object = "meta/inputs/" + std::to_string(i);
    file_.bytes(object, in.contents);
    file_.attribute(object, "role", in.file.role);
    file_.attribute(object, "name", in.file.name);
    file_.attribute(object, "path", in.file.path);
    file_.attribute(object, "bytes", static_cast<std::int64_t>(in.bytes));
    file_.attribute(object, "sha256", in.sha256);
    file_.attribute(object, "embedded", static_cast<std::int64_t>(in.embedded ? 1 : 0));
  }
}

void RunOutput::append_records(exec::Recorder& recorder) {
  auto& flows = recorder.flow_records();
  if (flows_) file_.append(flows_table_, flows.data(), flows.size());
  flows.clear();
  auto& compute = recorder.compute_records();
  file_.append(compute_table_, compute.data(), compute.size());
  compute.clear();
}

void RunOutput::attach(exec::Model& model, std::int64_t events_per_rank) {
  // Paced by events, not by synchronizations: with a 1 us lookahead a training
  // run synchronizes over a million times, and a parallel HDF5 flush every 256
  // of them cost more than the simulation (docs/performance.md).
  const std::int64_t every = events_per_rank * comm_.size();
  model.set_sync_hook([this, &model, every](const core::Simulator& sim) {
    if (sim.global_events() - flushed_at_ < every) return;
    flushed_at_ = sim.global_events();
    append_records(model.recorder());
    // On disk now: if a rank fails later, the .partial file is readable up to here.
    file_.flush();
  });
  if (comm_.size() == 1) {
    // One rank runs one unbounded window: without this its rows would wait in
    // memory until the end (470 MB for the 1,024-GPU Qwen job). Appending is
    // collective, which on one rank it trivially is.
    model.set_batch_hook([this, &model] {
      if (++batches_ % 64 != 0) return;  // every 4 M events
      append_records(model.recorder());
      file_.flush();
    });
  }
}

void RunOutput::write_links(const topo::Fabric& fabric, const exec::RunResults& r) {
  // Each block of links from the rank its counts were summed onto, in order:
  // one collective append a block, the others adding no rows.
  constexpr std::size_t kBlock = exec::RunResults::kLinkBlock;
  std::vector<LinkRow> rows;
  std::size_t held = 0;  // this rank's blocks so far: where the block's counts start
  for (std::size_t first = 0; first < fabric.link_count(); first += kBlock) {
    const std::size_t end = std::min<std::size_t>(fabric.link_count(), first + kBlock);
    rows.clear();
    if (exec::RunResults::link_block_rank(first / kBlock, comm_.size()) == comm_.rank()) {
      for (auto l = static_cast<topo::LinkId>(first); l < end; ++l, ++held) {
        const topo::Link& link = fabric.link(l);
        LinkRow row{l,         link.from, link.to, static_cast<std::uint8_t>(link.tier),
                    link.rate, 0,         {},      0};
        for (int c = 0; c < net::kClasses; ++c) {
          row.bytes_c[c] = r.link_bytes.empty()
                               ? 0
                               : static_cast<std::int64_t>(r.link_bytes[held * net::kClasses + c]);
          row.bytes += row.bytes_c[c];
        }
        row.busy_ps = r.link_busy.empty() ? 0 : static_cast<std::int64_t>(r.link_busy[held]);
        rows.push_back(row);
      }
    }
    file_.append(links_table_, rows.data(), rows.size());
  }
}

std::string RunOutput::finish(const exec::RunSetup& setup, exec::Model& model,
                              const exec::RunResults& r, const core::RunSummary& summary,
                              const std::string& policy, const sched::CoflowPriorities& priorities,
                              bool completed, bool failed) {
  model.set_sync_hook({});
  // A run cut short leaves most of its tasks unfinished: their rows go a
  // block at a time, in as many collective appends on every rank.
  bool left = true;
  while (left) {
    const bool mine = !model.recorder().record_unfinished(Hdf5File::kChunkRows);
    append_records(model.recorder());
    left = comm_.max(std::int64_t{mine}) != 0;
  }
  const work::Dag& dag = setup.dag;
  // Each block's rows, merged from the ranks that hold its coflows, on rank
  // 0, and appended a dataset chunk at a time: merged in smaller blocks, the
  // merge's buffers stay below the chunk's rows.
  std::vector<CoflowTableRow> table;
  table.reserve(comm_.rank() == 0 ? Hdf5File::kChunkRows : 0);
  exec::CoflowRowOptions rows;
  rows.key = priorities.key;
  rows.cls = priorities.cls;
  rows.block = Hdf5File::kChunkRows / kMergesPerChunk;
  const std::size_t blocks = (dag.coflow_count() + rows.block - 1) / rows.block;
  std::size_t merged = 0;
  exec::merge_coflow_rows(
      comm_, dag, model.recorder(), rows, [&](std::span<const exec::CoflowRow> block) {
        for (const exec::CoflowRow& row : block) {
          const work::CoflowLabels& l = row.labels;
          const exec::CoflowOutcome o = exec::coflow_outcome(row);
          table.push_back({row.id, l.job, l.iteration, l.micro_batch, l.layer, l.stage,
                           static_cast<std::uint8_t>(l.type), row.cls, row.key, row.flow_count,
                           o.bytes, o.start == kTimeInfinity ? -1 : o.start, o.done ? o.end : -1});
        }
        // The same blocks on every rank: the appends, collective, match.
        if (++merged % kMergesPerChunk != 0 && merged != blocks) return;
        file_.append(coflows_table_, table.data(), table.size());
        table.clear();
      });
  std::vector<IterationRow> iterations;
  if (comm_.rank() == 0) {
    for (const work::JobSpec& job : setup.jobs) {
      const work::ParallelSpec& p = job.parallel;
      const exec::IterationTimes times = exec::iteration_times(r, job);
      const std::vector<Time>& start = times.start;
      const std::vector<Time>& end = times.end;
      for (std::uint32_t i = 0; i < p.iterations; ++i) {
        // Exposed communication of the iteration: idle time that ended when a
        // coflow made one of its tasks ready, per GPU.
        Time wait_sum = 0, wait_max = 0;
        for (std::uint32_t g = p.first_gpu; g < p.first_gpu + p.gpus; ++g) {
          const Time w =
              i < r.iterations ? r.gpu_iteration_wait[std::size_t{g} * r.iterations + i] : 0;
          wait_sum += w;
          wait_max = std::max(wait_max, w);
        }
        // From the previous iteration's end: -1 where that never came.
        iterations.push_back(
            {job.id, i, i == 0 ? start[0] : end[i - 1], end[i], wait_sum / p.gpus, wait_max});
      }
    }
  }
  file_.append(iterations_table_, iterations.data(), iterations.size());
  const topo::Fabric& fabric = *setup.fabric;
  write_links(fabric, r);
  std::vector<LinkUtilRow> util;
  // Wider than [output] link_util_bin where a long run reached link_util_memory.
  const Time width = r.link_util_width > 0 ? r.link_util_width : setup.network.link_util_bin;
  for (std::size_t i = 0; i < r.link_util_links.size(); ++i) {
    const topo::LinkId l = r.link_util_links[i];
    const double capacity = static_cast<double>(setup.fabric->link(l).rate) / 8.0 *
                            static_cast<double>(width) / 1e12;  // bytes per bin
    for (std::uint64_t b = 0; b < r.link_util_bins; ++b) {
      const auto bytes = static_cast<std::int64_t>(r.link_util_bytes[i * r.link_util_bins + b]);
      util.push_back({l, static_cast<std::uint32_t>(b), static_cast<std::int64_t>(b) * width, bytes,
                      static_cast<double>(bytes) / capacity});
    }
  }
  file_.append(link_util_table_, util.data(), util.size());
  file_.attribute("link_util", "bin_ps", static_cast<std::int64_t>(width));

  const BuildInfo build = build_info();
  file_.attribute("meta", "config", setup.config_text);
  file_.attribute("meta", "config_path", setup.config_path);
  file_.attribute("meta", "config_resolved", setup.config_resolved);
  file_.attribute("meta", "rerun_of", setup.rerun_of);
  file_.attribute("meta", "version", build.shoal_version);
  file_.attribute("meta", "commit", build.git_commit);
  file_.attribute("meta", "seed", static_cast<std::int64_t>(setup.engine.seed));
  file_.attribute("meta", "ranks", static_cast<std::int64_t>(summary.ranks));
  file_.attribute("meta", "partition", summary.partition);
  file_.attribute("meta", "cell_size", static_cast<std::int64_t>(setup.network.cell_size));
  file_.attribute("meta", "wall_seconds", summary.wall_seconds);
  file_.attribute("meta", "events", summary.events);
  file_.attribute("meta", "cell_hops", r.cell_hops);
  file_.attribute("meta", "completed", static_cast<std::int64_t>(completed ? 1 : 0));
  file_.attribute("meta", "policy", policy);
  file_.attribute("meta", "fabric",
                  setup.fabric->kind() + " (" + setup.fabric->description() + ")");
  file_.attribute("meta", "gpus", static_cast<std::int64_t>(setup.fabric->gpu_count()));
  BitsPerSecond rate = 0;
  for (topo::LinkId l = 0; l < setup.fabric->link_count(); ++l) {
    if (setup.fabric->link(l).tier == topo::Tier::kHost) {
      rate = setup.fabric->link(l).rate;
      break;
    }
  }
  file_.attribute("meta", "link_rate_bps", static_cast<std::int64_t>(rate));
  file_.attribute("meta", "workload", setup.workload);
  std::string overrides;
  for (const std::string& o : setup.overrides) overrides += (overrides.empty() ? "" : "\n") + o;
  file_.attribute("meta", "overrides", overrides);
  file_.attribute("meta", "sweep_point", setup.sweep_point);
  write_inputs(setup);
  write_nodes(*setup.fabric);
  using RunEnd = Hdf5File::RunEnd;
  return file_.commit(summary.stopped ? RunEnd::kStopped
                      : failed        ? RunEnd::kFailed
                                      : RunEnd::kFinished);
}

}  // namespace shoal::output
