#include "shoal/exec/recorder.hpp"

#include <algorithm>
#include <span>

#include "shoal/exec/coflow_rows.hpp"
#include "shoal/exec/outcomes.hpp"

namespace shoal::exec {

Recorder::Recorder(const topo::Fabric& fabric, const work::Dag& dag, const core::Simulator& sim,
                   const RecorderOptions& options)
    : fabric_(fabric),
      dag_(dag),
      sim_(sim),
      options_(options),
      coflow_start_(dag.coflows().size(), kTimeInfinity),
      coflow_end_(dag.coflows().size(), -1),
      coflow_flows_ended_(dag.coflows().size(), 0),
      task_start_(dag.tasks().size(), kTimeInfinity),
      task_end_(dag.tasks().size(), -1),
      gpu_busy_(fabric.gpu_count(), 0),
      gpu_comm_wait_(fabric.gpu_count(), 0) {
  iterations_ = std::max(iterations_, dag.task_iterations());
  gpu_iteration_wait_.assign(std::size_t{fabric.gpu_count()} * iterations_, 0);
  if (options.flow_starts) {
    flow_start_.assign(dag.flow_count(), kTimeInfinity);
  } else if (options.flow_rows) {
    flow_start_.assign(dag.held_count(), kTimeInfinity);
  }
  if (options.flow_ends) flow_end_.assign(dag.flow_count(), -1);
  if (options.flow_rows) flow_recorded_.assign(dag.held_count(), 0);
  if (options.compute_rows) task_recorded_.assign(dag.tasks().size(), 0);
}

void Recorder::task_ended(work::TaskId task, Time now) {
  const std::size_t slot = dag_.task_slot(task);
  if (task_end_[slot] >= 0) [[unlikely]]
    invariant_violated(now, "task " + std::to_string(task) + " ended twice");
  task_end_[slot] = now;
  if (!options_.compute_rows) return;
  const work::ComputeTask& t = dag_.tasks()[slot];
  const work::TaskLabels& l = t.labels;
  compute_records_.push_back({task, t.gpu, l.job, l.iteration, l.micro_batch, l.layer,
                              static_cast<std::uint8_t>(l.kind), task_start_[slot], now});
  task_recorded_[slot] = 1;
}

bool Recorder::record_unfinished(std::size_t rows) {
  if (options_.flow_rows) {
    const std::size_t coflows = dag_.coflows().size();
    for (; unfinished_coflow_ < coflows && flow_records_.size() < rows; ++unfinished_coflow_) {
      const std::uint32_t c = static_cast<std::uint32_t>(unfinished_coflow_);
      dag_.for_each_flow(dag_.coflows()[c], [&](work::FlowId f, const work::Flow& flow) {
        if (flow_recorded_[dag_.held_index(f)] != 0 || !sim_.owns(fabric_.gpu_node(flow.src))) {
          return;
        }
        const Time at = flow_start_[start_slot(f)];
        const Time start = at == kTimeInfinity ? -1 : at;
        flow_records_.push_back(
            {f, dag_.held_coflow_id(c), flow.src, flow.dst, flow.bytes, start, -1});
      });
    }
  }
  const bool flows_done = !options_.flow_rows || unfinished_coflow_ == dag_.coflows().size();
  if (!options_.compute_rows) return flows_done;
  const std::size_t tasks = dag_.tasks().size();
  for (; unfinished_task_ < tasks && compute_records_.size() < rows; ++unfinished_task_) {
    const std::size_t t = unfinished_task_;
    const work::ComputeTask& task = dag_.tasks()[t];
    if (task_recorded_[t] != 0 || !sim_.owns(fabric_.gpu_node(task.gpu))) continue;
    const work::TaskLabels& l = task.labels;
    const Time start = task_start_[t] == kTimeInfinity ? -1 : task_start_[t];
    compute_records_.push_back({dag_.held_task_id(t), task.gpu, l.job, l.iteration, l.micro_batch,
                                l.layer, static_cast<std::uint8_t>(l.kind), start, -1});
  }
  return flows_done && unfinished_task_ == tasks;
}

namespace {
/// Each rank's times reduced onto rank 0 (empty elsewhere): the earliest, or the latest.
void to_root(const core::Comm& comm, const std::vector<Time>& mine, bool earliest,
             std::vector<Time>& out) {
  out.assign(comm.rank() == 0 ? mine.size() : 0, 0);
  if (earliest) {
    comm.min_to_root(mine, out);
  } else {
    comm.max_to_root(mine, out);
  }
}
}  // namespace

void Recorder::coflow_results(const core::Comm& comm, RunResults& r) const {
  CoflowSummary& summary = r.coflows;
  for (const work::CoflowId c : options_.watched_coflows) summary.watched.push_back(c);
  std::sort(summary.watched.begin(), summary.watched.end());
  summary.watched.erase(std::unique(summary.watched.begin(), summary.watched.end()),
                        summary.watched.end());
  summary.watched_outcomes.assign(summary.watched.size(), CoflowOutcome{});
  const bool root = comm.rank() == 0;
  if (options_.coflow_times && root) {
    r.coflow_start.reserve(dag_.coflow_count());
    r.coflow_end.reserve(dag_.coflow_count());
    r.coflow_flows_ended.reserve(dag_.coflow_count());
  }
  merge_coflow_rows(comm, dag_, *this, {}, [&](std::span<const CoflowRow> rows) {
    summarize(rows, summary);
    if (!options_.coflow_times) return;
    for (const CoflowRow& row : rows) {
      r.coflow_start.push_back(row.start);
      r.coflow_end.push_back(row.end);
      r.coflow_flows_ended.push_back(row.flows_ended);
    }
  });
}

RunResults Recorder::results(const core::Comm& comm, net::Network& network) const {
  RunResults r;
  auto gather = [&](const std::vector<Time>& mine, bool earliest, std::vector<Time>& out) {
    to_root(comm, mine, earliest, out);
  };
  if (options_.flow_starts) gather(flow_start_, true, r.flow_start);
  if (options_.flow_ends) gather(flow_end_, false, r.flow_end);
  coflow_results(comm, r);
  task_results(comm, r);
  // Each GPU's figures are non-zero on its rank only.
  gather(gpu_busy_, false, r.gpu_busy);
  gather(gpu_comm_wait_, false, r.gpu_comm_wait);
  gather(gpu_iteration_wait_, false, r.gpu_iteration_wait);
  r.iterations = iterations_;
  r.bytes_delivered = comm.sum(network.bytes_received());
  r.cell_hops = comm.sum(network.cell_hops());
  r.routes_noted = comm.sum(network.routes_taken());
  net::LinkMeters& meters = network.meters();
  if (!meters.on()) return r;
  const topo::LinkId links = fabric_.link_count();
  // A block of links at a time, each summed onto its rank (RunResults::link_block_rank).
  constexpr topo::LinkId kBlock = RunResults::kLinkBlock;
  std::vector<std::uint64_t> bytes, busy;
  for (topo::LinkId first = 0; first < links; first += kBlock) {
    const topo::LinkId end = std::min(links, first + kBlock);
    bytes.clear();
    busy.clear();
    for (topo::LinkId l = first; l < end; ++l) {
      for (int c = 0; c < net::kClasses; ++c) bytes.push_back(meters.bytes(l, c));
      busy.push_back(meters.busy(l));
    }
    const int owner = RunResults::link_block_rank(first / kBlock, comm.size());
    const auto room = [&](std::vector<std::uint64_t>& out, std::size_t count) {
      if (comm.rank() != owner) return std::span<std::uint64_t>();
      out.resize(out.size() + count);
      return std::span(out).last(count);
    };
    comm.sum_to(owner, bytes, room(r.link_bytes, bytes.size()));
    comm.sum_to(owner, busy, room(r.link_busy, busy.size()));
  }
  if (!meters.binning()) return r;
  // Every rank learns every link's total (each link is counted on one rank),
  // so all pick the same busiest links; their bins are summed onto rank 0.
  net::LinkBins& bins = meters.bins();
  std::vector<std::uint64_t> all(links, 0);
  for (topo::LinkId l = 0; l < links; ++l) {
    for (int c = 0; c < net::kClasses; ++c) all[l] += meters.bytes(l, c);
  }
  // A rank whose links went quiet early may have widened less: all take the widest.
  bins.widen_to(static_cast<Time>(comm.max(static_cast<std::int64_t>(bins.width()))));
  r.link_util_width = bins.width();  // on every rank: the file's attribute is collective
  comm.sum_all_in_place(all);
  const auto rows = static_cast<std::uint64_t>(comm.max(static_cast<std::int64_t>(bins.rows())));
  std::vector<topo::LinkId> order(links);
  for (topo::LinkId l = 0; l < links; ++l) order[l] = l;
  const std::size_t top = std::min<std::size_t>(network.options().link_util_top, order.size());
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
      [&](topo::LinkId a, topo::LinkId b) { return all[a] != all[b] ? all[a] > all[b] : a < b; });
  order.resize(top);
  std::vector<std::uint64_t> mine(top * rows, 0);
  for (std::size_t i = 0; i < top; ++i) {
    bins.column(order[i], std::span(mine).subspan(i * rows, rows));
  }
  r.link_util_bytes.assign(comm.rank() == 0 ? mine.size() : 0, 0);
  comm.sum_to_root(mine, r.link_util_bytes);
  if (comm.rank() == 0) {
    r.link_util_links = order;
    r.link_util_bins = rows;
  }
  return r;
}

void Recorder::task_results(const core::Comm& comm, RunResults& r) const {
  // Each task is counted by the rank whose GPU runs it (a fragment holds
  // little else); the others add nothing to a minimum or maximum.
  const std::uint32_t iterations = dag_.task_iterations();
  const std::size_t cells = std::size_t{dag_.training_jobs()} * iterations;
  std::vector<Time> start(cells, kTimeInfinity), end(cells, -1), unfinished(cells, 0);
  std::vector<Time> last{-1}, first_unfinished{-static_cast<Time>(dag_.task_count())};
  for (std::size_t t = 0; t < dag_.tasks().size(); ++t) {
    if (!sim_.owns(fabric_.gpu_node(dag_.tasks()[t].gpu))) continue;
    const work::TaskLabels& l = dag_.tasks()[t].labels;
    last[0] = std::max(last[0], task_end_[t]);
    // The largest of the negated ids is the lowest id.
    if (task_end_[t] < 0) {
      first_unfinished[0] = std::max(first_unfinished[0], -static_cast<Time>(dag_.held_task_id(t)));
    }
    if (l.kind == work::TaskKind::kOther) continue;
    const std::size_t cell = std::size_t{l.job} * iterations + l.iteration;
    start[cell] = std::min(start[cell], task_start_[t]);
    end[cell] = std::max(end[cell], task_end_[t]);
    if (task_end_[t] < 0) unfinished[cell] = 1;
  }
  auto gather = [&](const std::vector<Time>& mine, bool earliest, std::vector<Time>& out) {
    to_root(comm, mine, earliest, out);
  };
  gather(start, true, r.job_iteration_start);
  gather(end, false, r.job_iteration_end);
  gather(unfinished, false, r.job_iteration_unfinished);
  r.task_iterations = iterations;
  std::vector<Time> reduced;
  gather(last, false, reduced);
  if (comm.rank() == 0) r.last_task_end = reduced[0];
  gather(first_unfinished, false, reduced);
  if (comm.rank() == 0 && dag_.task_count() > 0 &&
      reduced[0] > -static_cast<Time>(dag_.task_count())) {
    r.first_unfinished_task = -reduced[0];
  }
  // The tasks watched, and with task_times every task, by TaskId.
  auto by_id = [&](std::span<const work::TaskId> ids, const std::vector<Time>& held, Time none) {
    std::vector<Time> v(ids.size(), none);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (dag_.holds_task(ids[i])) v[i] = held[dag_.task_slot(ids[i])];
    }
    return v;
  };
  const std::vector<work::TaskId>& watched = options_.watched_tasks;
  gather(by_id(watched, task_start_, kTimeInfinity), true, r.watched_start);
  gather(by_id(watched, task_end_, -1), false, r.watched_end);
  if (comm.rank() == 0) r.watched_tasks.assign(watched.begin(), watched.end());
  if (!options_.task_times) return;
  std::vector<work::TaskId> every(dag_.task_count());
  for (std::uint32_t t = 0; t < every.size(); ++t) every[t] = work::TaskId{t};
  gather(by_id(every, task_start_, kTimeInfinity), true, r.task_start);
  gather(by_id(every, task_end_, -1), false, r.task_end);
}

std::uint64_t Recorder::estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                       const RecorderOptions& options, std::uint64_t flows_sent) {
  // Kept, and gathered.
  std::uint64_t per_flow = 2 * sizeof(Time) * (int{options.flow_starts} + int{options.flow_ends});
  std::uint64_t per_task = 2 * sizeof(Time) + 16;  // held, with the tracker's share
  std::uint64_t rows = 0;
  if (options.flow_rows) {
    // Rows are written by the flows' senders and wait for the next append
    // (every 4 M events per rank, RunOutput::attach), where HDF5 converts and
    // compresses them in buffers of its own. Counted as if every row the rank
    // writes waited at once: a ceiling, far above what one append holds, so
    // the guard errs towards refusing. Each held flow also has its start and
    // a mark.
    rows = flows_sent * 320 + dag.held_count() * (options.flow_starts ? 1 : sizeof(Time) + 1);
  }
  if (options.compute_rows) per_task += 160;
  // A sender group holds at least one of the flows the rank sends.
  const std::uint64_t group_starts = options.group_starts ? flows_sent * sizeof(Time) : 0;
  // Each held coflow's times and count (a fragment's own coflows once it
  // dropped the others); every coflow's again where kept for the results.
  const std::uint64_t per_coflow = 2 * sizeof(Time) + sizeof(std::uint64_t);
  const std::uint64_t every_coflow = options.coflow_times ? dag.coflow_count() * per_coflow : 0;
  // Every task's times, where kept for the results: gathered by TaskId.
  const std::uint64_t every_task = options.task_times ? dag.task_count() * 4 * sizeof(Time) : 0;
  return group_starts + rows + dag.flow_count() * per_flow + dag.coflows().size() * per_coflow +
         every_coflow + dag.tasks().size() * per_task + every_task +
         std::uint64_t{fabric.gpu_count()} * 3 * sizeof(Time);
}

}  // namespace shoal::exec
