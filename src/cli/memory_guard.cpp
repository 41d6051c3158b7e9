#include "memory_guard.hpp"

#include <spdlog/spdlog.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>

#include "shoal/core/error.hpp"
#include "shoal/core/units.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/exec/pilot.hpp"
#include "shoal/net/link_meters.hpp"
#include "shoal/net/rank_share.hpp"

namespace shoal::cli {
namespace {

constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();

/// A number from the first line of a file ("max" and errors: unknown).
std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || text.size() > 19 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return kUnknown;
  }
  return std::stoull(text);
}

/// What this node (or this job's cgroup, as Slurm sets one) can still give.
std::uint64_t available_bytes() {
  std::uint64_t available = kUnknown;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") available = kib * 1024;
  }
  // This process's cgroup (Slurm puts each job in one): v2 ("0::/path"), then
  // v1's memory controller ("N:memory:/path"); the limit less what it uses.
  std::string v2;
  std::string v1;
  std::ifstream groups("/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
    const auto memory = line.find(":memory:");
    if (memory != std::string::npos) v1 = line.substr(memory + 8);
  }
  const std::string base2 = "/sys/fs/cgroup" + v2;
  const std::string base1 = "/sys/fs/cgroup/memory" + v1;
  for (const auto& [limit_path, usage_path] :
       {std::pair{base2 + "/memory.max", base2 + "/memory.current"},
        std::pair{base1 + "/memory.limit_in_bytes", base1 + "/memory.usage_in_bytes"}}) {
    const std::uint64_t limit = read_number(limit_path.c_str());
    const std::uint64_t usage = read_number(usage_path.c_str());
    if (limit != kUnknown && usage != kUnknown && limit < (std::uint64_t{1} << 60)) {
      available = std::min(available, limit > usage ? limit - usage : 0);
      break;
    }
  }
  return available;
}

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string gib(std::uint64_t bytes) { return format_bytes_short(static_cast<Bytes>(bytes)); }

/// Bytes free to this user in the file system that holds `folder` (unknown
/// where it cannot be asked).
std::uint64_t free_disk_bytes(const std::string& folder) {
  struct ::statvfs fs {};
  if (::statvfs(folder.c_str(), &fs) != 0) return kUnknown;
  return static_cast<std::uint64_t>(fs.f_bavail) * static_cast<std::uint64_t>(fs.f_frsize);
}

/// The /link_util bins settle in scratch files beside the output: all ranks'
/// together must fit in what that disk has free.
void check_scratch(const RunSetup& setup, bool record, const std::string& scratch) {
  net::NetworkOptions options = setup.network;
  options.record = record;
  options.link_util_scratch = scratch;
  const std::uint64_t need = net::LinkMeters::estimate_scratch_bytes(
      *setup.fabric, options, setup.perturbations.links, setup.engine.end_time);
  if (need == 0) return;
  const std::uint64_t free = free_disk_bytes(scratch);
  if (free != kUnknown && need > free) {
    throw Error("/link_util: its bins need about " + gib(need) + " of scratch space in " + scratch +
                " (beside the output file) and it has " + gib(free) +
                " free; use a smaller [output] link_util_memory, a wider link_util_bin or "
                "link_util_top = 0");
  }
}

}  // namespace

exec::RecorderOptions recording_for(const RunSetup& setup, bool record) {
  // The reports and the output file need coflows, tasks per job and
  // iteration, and the tasks that milestones name.
  exec::RecorderOptions recording = exec::RecorderOptions::coflows_only();
  recording.compute_rows = record;
  recording.flow_rows = record && setup.output_flows;
  for (const exec::Milestone& m : setup.milestones) {
    if (!m.node) continue;  // phase-end, last-byte
    if (m.node->kind == work::NodeRef::Kind::kTask) {
      recording.watched_tasks.push_back(work::TaskId{m.node->index});
    } else {
      recording.watched_coflows.push_back(work::CoflowId{m.node->index});
    }
  }
  return recording;
}

namespace {

/// What rank `rank` holds under `partition`.
net::RankShare share_of(const RunSetup& setup, const core::Partition& partition, int rank) {
  const topo::Fabric& fabric = *setup.fabric;
  return net::RankShare::of(fabric, setup.dag, partition.entity_ranks(fabric.layout()), rank);
}

/// Bytes the network, the engine and the output buffers of a rank holding
/// `share` will add to what read_config already allocated (the fabric and the
/// DAG, of whose flows each rank of several builds its fragment:
/// exec/fragment.hpp).
exec::Model::EstimatedBytes estimate_run_bytes(const RunSetup& setup, bool record,
                                               const net::RankShare& share) {
  net::NetworkOptions options = setup.network;
  options.record = record;
  return exec::Model::estimate_bytes(*setup.fabric, setup.dag, options,
                                     recording_for(setup, record), share);
}

/// Bytes a rank's /link_util bins will take in memory at most (0 unless
/// `record`): its share of [output] link_util_memory for the `links_here` it
/// sends on, or less in a run with a run.end; with a scratch folder, the
/// blocks not yet settled.
std::uint64_t estimate_link_util_bytes(const RunSetup& setup, bool record, std::uint64_t links_here,
                                       const std::string& scratch) {
  net::NetworkOptions options = setup.network;
  options.record = record;
  options.link_util_scratch = scratch;
  return net::LinkMeters::estimate_bin_bytes(*setup.fabric, options, setup.perturbations.links,
                                             links_here, setup.engine.end_time);
}

}  // namespace

void check_memory(int rank, int ranks_on_node, const RunSetup& setup, bool record,
                  std::uint64_t limit, const std::string& scratch) {
  check_scratch(setup, record, scratch);
  const net::RankShare share = share_of(setup, *setup.partition, rank);
  const std::uint64_t bins = estimate_link_util_bytes(setup, record, share.links, scratch);
  const exec::Model::EstimatedBytes model = estimate_run_bytes(setup, record, share);
  const std::uint64_t more = model.total() + bins;
  const std::uint64_t now = resident_bytes();
  const std::string what =
      "memory: this run needs about " + gib(now + more) + " per rank (" + gib(now) +
      " for the fabric and the rank's share of the workload, + " + gib(more - bins) +
      " for the network and engine" +
      (bins > 0 ? " + " + gib(bins) + " for the /link_util bins" : std::string{}) + ")";
  // Where the bins are a large part, their cap is the knob to name.
  const std::string bins_hint =
      bins > more / 4 ? ", a smaller [output] link_util_memory (or link_util_top = 0)" : "";
  if (limit > 0 && now + more > limit) {
    throw Error(what + ", over run.memory_limit = " + gib(limit) +
                "; raise the limit, use larger cells" + bins_hint + " or a smaller workload");
  }
  const std::uint64_t available = available_bytes();
  spdlog::debug(
      "memory: {} resident after reading the config, about {} more to run (network {}, executor "
      "{}, recorder and its rows {}, /link_util bins {}); {} available",
      gib(now), gib(more), gib(model.network), gib(model.executor), gib(model.recorder), gib(bins),
      available == kUnknown ? "unknown" : gib(available));
  const std::uint64_t need = more * static_cast<std::uint64_t>(ranks_on_node);
  if (available != kUnknown && need > available) {
    throw Error(what + "; the " + std::to_string(ranks_on_node) + " rank" +
                (ranks_on_node == 1 ? "" : "s") + " on this node need " + gib(need) +
                " more and it has " + gib(available) +
                " available: run fewer ranks per node, on a node with more memory, or with "
                "larger cells" +
                bins_hint);
  }
}

void check_pilot_memory(int rank, int ranks, const RunSetup& setup) {
  const net::RankShare share = share_of(setup, exec::pilot_partition(*setup.fabric, ranks), rank);
  const std::uint64_t more =
      exec::pilot_estimate_bytes(*setup.fabric, setup.dag, setup.network, share);
  const std::uint64_t now = resident_bytes();
  const std::string what = "memory: the weighted partition's pilot run needs about " +
                           gib(now + more) + " per rank (" + gib(now) +
                           " for the fabric and workload + " + gib(more) + " for its model)";
  if (setup.memory_limit > 0 && now + more > setup.memory_limit) {
    throw Error(what + ", over run.memory_limit = " + gib(setup.memory_limit) +
                "; raise the limit, or use run.partition = \"topology\"");
  }
  const std::uint64_t available = available_bytes();
  const std::uint64_t need = more * static_cast<std::uint64_t>(setup.ranks_on_node);
  if (available != kUnknown && need > available) {
    throw Error(what + "; the " + std::to_string(setup.ranks_on_node) + " rank" +
                (setup.ranks_on_node == 1 ? "" : "s") + " on this node need " + gib(need) +
                " more and it has " + gib(available) +
                " available: run fewer ranks per node, or use run.partition = \"topology\"");
  }
}

work::Dag::GrowthCheck dag_growth_guard(int ranks_on_node, const RunSetup& setup) {
  const std::uint64_t start = resident_bytes();
  const std::uint64_t available = available_bytes();
  return [=, &setup](const work::Dag& dag, std::uint64_t growing) {
    // `growing`: an array about to be reallocated (both held for a moment).
    const std::uint64_t resident = resident_bytes();
    const std::uint64_t taken = resident > start ? resident - start : 0;
    const std::string what = "memory: building the workload took " + gib(taken) + " per rank by " +
                             std::to_string(dag.task_count()) + " tasks, " +
                             std::to_string(dag.coflow_count()) + " coflows and " +
                             std::to_string(dag.flow_count()) + " flows, and it is not done";
    const std::string growth =
        growing > 0 ? " plus " + gib(growing) + " for an array about to grow" : std::string{};
    if (setup.memory_limit > 0 && resident + growing > setup.memory_limit) {
      throw Error(what + ": " + gib(resident) + " resident" + growth +
                  ", over run.memory_limit = " + gib(setup.memory_limit) +
                  "; raise the limit or use a smaller workload");
    }
    const std::uint64_t need = (taken + growing) * static_cast<std::uint64_t>(ranks_on_node);
    if (available != kUnknown && need > available) {
      throw Error(what + growth + "; the " + std::to_string(ranks_on_node) + " rank" +
                  (ranks_on_node == 1 ? "" : "s") +
                  " on this node (each builds its share of the workload) need more than the " +
                  gib(available) +
                  " it had available: run fewer ranks per node, on a node with more memory, or a "
                  "smaller workload");
    }
  };
}

}  // namespace shoal::cli
