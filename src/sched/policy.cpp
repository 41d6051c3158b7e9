#include "shoal/sched/policy.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "shoal/core/error.hpp"

namespace shoal::sched {

using work::CoflowType;

void parse_policy_name(std::string_view name, PolicyConfig& config) {
  std::string_view intra = name;
  config.crux = false;
  if (intra.starts_with("crux+")) {
    config.crux = true;
    intra.remove_prefix(5);
  } else if (intra == "crux") {
    config.crux = true;  // crux alone: fair inside each job
    intra = "fair";
  }
  if (intra == "fair") {
    config.intra = IntraJob::kFair;
  } else if (intra == "lina") {
    config.intra = IntraJob::kLina;
  } else if (intra == "ep-pp-first") {
    config.intra = IntraJob::kEpPpFirst;
  } else if (intra == "hermod") {
    config.intra = IntraJob::kHermod;
  } else {
    throw Error("unknown policy \"" + std::string(name) +
                "\" (choose fair, lina, ep-pp-first, hermod, crux, or crux+ one of the others)");
  }
}

std::string policy_name(const PolicyConfig& config) {
  std::string intra;
  switch (config.intra) {
    case IntraJob::kFair:
      intra = "fair";
      break;
    case IntraJob::kLina:
      intra = "lina";
      break;
    case IntraJob::kEpPpFirst:
      intra = "ep-pp-first";
      break;
    case IntraJob::kHermod:
      intra = "hermod";
      break;
  }
  return config.crux ? "crux+" + intra : intra;
}

namespace {

using Key = std::array<std::uint64_t, 5>;

/// A fragment that keeps only its own coflows (work::Dag::drop_unheld_coflows)
/// learns what every rank's coflows add to a fact that spans them: the
/// collective over `comm` a whole DAG does without.
bool spans_ranks(const work::Dag& dag, const core::Comm* comm) {
  if (!dag.coflows_dropped()) return false;
  if (comm == nullptr) throw Error("internal: a fragment's coflow keys asked without its ranks");
  return true;
}

/// Every rank's `items` of `Width` words, end to end (collective over `comm`).
template <std::size_t Width>
std::vector<std::array<std::uint64_t, Width>> gather_all(
    const core::Comm& comm, const std::vector<std::array<std::uint64_t, Width>>& items) {
  std::vector<std::uint64_t> words;
  words.reserve(items.size() * Width);
  for (const auto& item : items) words.insert(words.end(), item.begin(), item.end());
  const std::vector<std::uint64_t> all = comm.all_gather(words);
  std::vector<std::array<std::uint64_t, Width>> out(all.size() / Width);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(i * Width), Width, out[i].begin());
  }
  return out;
}

/// Jobs ranked by GPU intensity, highest first (ties: lower job id first).
/// A fragment's GPUs are counted by the rank that owns them (it holds every
/// flow to or from them) and summed over `comm`.
std::map<std::uint32_t, std::uint32_t> crux_job_ranks(const work::Dag& dag,
                                                      const topo::Fabric& fabric,
                                                      const core::Comm* comm) {
  if (!dag.whole() && comm == nullptr) {
    throw Error("internal: crux weighs every rank's flows, and no ranks were given");
  }
  // Each GPU belongs to the job whose coflows it has flows in: by GPU, that
  // job plus one (0: none yet), and the bytes it sends and receives.
  const std::size_t gpus = fabric.gpu_count();
  std::vector<std::uint64_t> job_of(gpus, 0), sent(gpus, 0), received(gpus, 0);
  std::string conflict;  // thrown once the ranks have summed, so that none waits
  struct JobLoad {
    std::uint64_t compute = 0;  // ps of compute, all its GPUs and iterations
    std::uint32_t iterations = 1;
  };
  std::map<std::uint32_t, JobLoad> jobs;
  for (const work::Coflow& c : dag.coflows()) {
    JobLoad& job = jobs[c.labels.job];
    job.iterations = std::max(job.iterations, c.labels.iteration + 1);
    const std::uint64_t id = std::uint64_t{c.labels.job} + 1;
    for (const work::Flow& f : dag.flows_of(c)) {
      for (const work::GpuId g : {f.src, f.dst}) {
        if (!dag.owns(g)) continue;
        if (job_of[g] != 0 && job_of[g] != id && conflict.empty()) {
          conflict = "crux: GPU " + std::to_string(g) + " has flows of jobs " +
                     std::to_string(job_of[g] - 1) + " and " + std::to_string(c.labels.job) +
                     "; each GPU must belong to one job";
        }
        job_of[g] = id;
      }
      if (dag.owns(f.src)) sent[f.src] += static_cast<std::uint64_t>(f.bytes);
      if (dag.owns(f.dst)) received[f.dst] += static_cast<std::uint64_t>(f.bytes);
    }
  }
  // A fragment's counts, summed over the ranks: each rank adds those of its own GPUs.
  auto sum_over_ranks = [&](std::vector<std::uint64_t>& v) {
    if (dag.whole()) return;
    std::vector<std::uint64_t> all(v.size());
    comm->sum_all(v, all);
    v = std::move(all);
  };
  // Every rank's jobs, where each holds only its own coflows: the ranks then
  // sum the same jobs' compute in the same order.
  if (spans_ranks(dag, comm)) {
    std::vector<std::array<std::uint64_t, 2>> mine;
    for (const auto& [job, load] : jobs) mine.push_back({job, load.iterations});
    for (const auto& [job, iterations] : gather_all(*comm, mine)) {
      JobLoad& load = jobs[static_cast<std::uint32_t>(job)];
      load.iterations = std::max(load.iterations, static_cast<std::uint32_t>(iterations));
    }
  }
  for (std::vector<std::uint64_t>* v : {&job_of, &sent, &received}) sum_over_ranks(*v);
  if (!conflict.empty()) throw Error(conflict);
  // Each job's compute in whole picoseconds, over the tasks this DAG holds
  // (a fragment's are its own GPUs'), then summed over the ranks: the same
  // integer at any rank count.
  for (const work::ComputeTask& t : dag.tasks()) {
    if (t.gpu >= gpus || job_of[t.gpu] == 0) continue;  // a GPU without flows: no job to charge
    // Every rank has every job (gathered above), so none adds one the others lack.
    const auto it = jobs.find(static_cast<std::uint32_t>(job_of[t.gpu] - 1));
    if (it != jobs.end()) it->second.compute += static_cast<std::uint64_t>(t.duration);
  }
  std::vector<std::uint64_t> compute;
  for (const auto& [job, load] : jobs) compute.push_back(load.compute);
  sum_over_ranks(compute);
  std::size_t j = 0;
  for (auto& [job, load] : jobs) load.compute = compute[j++];
  std::map<std::uint32_t, double> transfer_ps;  // per job: the largest per-GPU transfer time
  std::map<std::uint32_t, std::uint32_t> job_gpus;
  for (work::GpuId g = 0; g < gpus; ++g) {
    if (job_of[g] == 0) continue;
    const auto job = static_cast<std::uint32_t>(job_of[g] - 1);
    BitsPerSecond rate = 0;
    for (const topo::LinkId l : fabric.nic_links(g)) rate += fabric.link(l).rate;
    const double bytes = static_cast<double>(std::max(sent[g], received[g]));
    const double ps = bytes * 8.0 * 1e12 / static_cast<double>(rate);
    transfer_ps[job] = std::max(transfer_ps[job], ps);
    ++job_gpus[job];
  }
  std::vector<std::pair<double, std::uint32_t>> order;  // (-intensity, job)
  for (const auto& [job, load] : jobs) {
    const double per_gpu_iteration = static_cast<double>(load.compute) /
                                     std::max<double>(1, job_gpus[job]) /
                                     std::max<double>(1, load.iterations);
    const double transfer = transfer_ps[job] / std::max<double>(1, load.iterations);
    const double intensity = transfer > 0 ? per_gpu_iteration / transfer : 1e300;
    order.emplace_back(-intensity, job);
  }
  std::sort(order.begin(), order.end());
  std::map<std::uint32_t, std::uint32_t> rank;
  for (std::uint32_t i = 0; i < order.size(); ++i) rank[order[i].second] = i;
  return rank;
}

// CP (ring attention, Ulysses) blocks the layer's compute like TP's all-reduces,
// so Hermod ranks it with the activation traffic, ahead of DP.
std::uint64_t type_rank(CoflowType type) {
  return type == CoflowType::kEp || type == CoflowType::kPp || type == CoflowType::kTp ||
                 type == CoflowType::kCp
             ? 0
             : 1;
}

}  // namespace

std::vector<std::uint32_t> coflow_keys(const work::Dag& dag, const topo::Fabric& fabric,
                                       const PolicyConfig& config, const core::Comm* comm) {
  const auto& coflows = dag.coflows();
  std::map<std::uint32_t, std::uint32_t> job_rank;
  if (config.crux) job_rank = crux_job_ranks(dag, fabric, comm);
  // Each iteration's last micro-batch, per job (Hermod's DP reading).
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> last_mid;
  for (const work::Coflow& c : coflows) {
    if (c.labels.type == CoflowType::kDp) continue;
    auto& m = last_mid[{c.labels.job, c.labels.iteration}];
    m = std::max(m, c.labels.micro_batch);
  }
  const bool spans = spans_ranks(dag, comm);
  if (spans) {
    std::vector<std::array<std::uint64_t, 3>> mine;
    for (const auto& [at, mid] : last_mid) mine.push_back({at.first, at.second, mid});
    for (const auto& [job, iteration, mid] : gather_all(*comm, mine)) {
      auto& m = last_mid[{static_cast<std::uint32_t>(job), static_cast<std::uint32_t>(iteration)}];
      m = std::max(m, static_cast<std::uint32_t>(mid));
    }
  }
  std::vector<Key> keys(coflows.size());
  for (std::size_t i = 0; i < coflows.size(); ++i) {
    const work::CoflowLabels& l = coflows[i].labels;
    Key& k = keys[i];
    k.fill(0);
    if (config.crux) k[0] = job_rank.at(l.job);
    switch (config.intra) {
      case IntraJob::kFair:
        break;
      case IntraJob::kLina:
        k[3] = l.type == CoflowType::kEp ? 0 : 1;
        break;
      case IntraJob::kEpPpFirst:
        k[3] = l.type == CoflowType::kEp || l.type == CoflowType::kPp ? 0 : 1;
        break;
      case IntraJob::kHermod: {
        std::uint32_t mid = l.micro_batch;
        if (l.type == CoflowType::kDp && config.dp_last_micro_batch) {
          const auto it = last_mid.find({l.job, l.iteration});
          if (it != last_mid.end()) mid = it->second;
        }
        if (config.iteration_first) k[1] = l.iteration;
        k[2] = mid;
        k[3] = type_rank(l.type);
        k[4] = l.layer;
        break;
      }
    }
  }
  std::vector<Key> distinct = keys;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  // A key's rank counts the keys below it on every rank.
  if (spans) {
    distinct = gather_all(*comm, distinct);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  }
  std::vector<std::uint32_t> ranks(coflows.size());
  for (std::size_t i = 0; i < coflows.size(); ++i) {
    ranks[i] = static_cast<std::uint32_t>(
        std::lower_bound(distinct.begin(), distinct.end(), keys[i]) - distinct.begin());
  }
  return ranks;
}

CoflowPriorities coflow_priorities(const work::Dag& dag, const topo::Fabric& fabric,
                                   const PolicyConfig& config, const core::Comm* comm) {
  if (config.classes != 1 && config.classes != 2 && config.classes != 4 && config.classes != 8) {
    throw Error("policy.classes must be 1, 2, 4 or 8, not " + std::to_string(config.classes));
  }
  const std::vector<std::uint32_t> ranks = coflow_keys(dag, fabric, config, comm);
  std::uint32_t keys = 1;
  for (const std::uint32_t r : ranks) keys = std::max(keys, r + 1);
  // The distinct keys of every rank's coflows, where each holds its own.
  if (spans_ranks(dag, comm)) keys = static_cast<std::uint32_t>(comm->max(std::int64_t{keys}));
  CoflowPriorities p;
  p.key.resize(ranks.size());
  p.cls.resize(ranks.size());
  const auto classes = static_cast<std::uint64_t>(config.classes);
  for (std::size_t c = 0; c < ranks.size(); ++c) {
    const auto folded = static_cast<std::uint8_t>(std::uint64_t{ranks[c]} * classes / keys);
    p.key[c] = config.enforce == Enforcement::kSwitch ? folded : ranks[c];
    p.cls[c] = config.enforce == Enforcement::kNic ? 0 : folded;
  }
  p.keys = config.enforce == Enforcement::kSwitch ? static_cast<std::uint32_t>(classes) : keys;
  return p;
}

}  // namespace shoal::sched
