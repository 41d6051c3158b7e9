// `shoal run CONFIG.toml [-o coflows.csv]`: a fabric, a workload DAG and the
// packet network on the engine; prints every coflow's completion time.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/io/config_file.hpp"
#include "shoal/net/network.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/fabric_config.hpp"
#include "shoal/work/case_ii_panel.hpp"
#include "shoal/work/job_file.hpp"
#include "shoal/work/training_dag.hpp"
#include "shoal/work/workload_loader.hpp"

namespace shoal::cli {
namespace {

struct RunArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string output;
  double progress_interval = 5.0;
};

/// A time the report names: "NAME.start" / "NAME.end" of a task or coflow,
/// "phase-end" (the last task or flow end) or "last-byte" (the last flow end).
struct Milestone {
  std::string label;
  std::string at;
};

/// Everything a run needs, read from the config on every rank.
struct RunSetup {
  std::vector<sched::PolicyConfig> policies;  // one, or several to compare
  std::vector<Milestone> milestones;
  std::optional<topo::Fabric> fabric;
  std::optional<core::Partition> partition;
  work::Dag dag;
  net::NetworkOptions network;
  net::Perturbations perturbations;
  std::vector<work::JobSpec> jobs;  // training jobs, when the workload is generated from them
  core::EngineOptions engine;
  std::string workload;
};

void read_config(const std::string& path, const std::vector<std::string>& overrides, int ranks,
                 RunSetup& setup) {
  io::ConfigFile config(path, overrides);
  setup.fabric.emplace(topo::build_fabric(config));
  const std::string prefix = "config " + path + ": ";

  constexpr std::string_view n = "network";
  setup.network.cell_size = config.bytes(n, "cell_size").value_or(setup.network.cell_size);
  setup.network.buffer_per_class =
      config.bytes(n, "buffer_per_class").value_or(setup.network.buffer_per_class);
  const std::string forwarding = config.string(n, "forwarding").value_or("cut-through");
  if (forwarding != "cut-through" && forwarding != "store-and-forward") {
    throw Error(prefix + "network.forwarding must be \"cut-through\" or \"store-and-forward\"");
  }
  setup.network.cut_through = forwarding == "cut-through";
  const std::string balancing = config.string(n, "load_balancing").value_or("ecmp");
  if (balancing == "ecmp") {
    setup.network.load_balancing = net::LoadBalancing::kEcmp;
  } else if (balancing == "spray") {
    setup.network.load_balancing = net::LoadBalancing::kSpray;
  } else if (balancing == "adaptive") {
    setup.network.load_balancing = net::LoadBalancing::kAdaptive;
  } else {
    throw Error(prefix + "network.load_balancing must be \"ecmp\", \"spray\" or \"adaptive\"");
  }
  const std::string scheduling = config.string(n, "switch_scheduling").value_or("round-robin");
  if (scheduling != "round-robin" && scheduling != "fifo") {
    throw Error(prefix + "network.switch_scheduling must be \"round-robin\" or \"fifo\"");
  }
  setup.network.switch_round_robin = scheduling == "round-robin";
  try {
    net::validate(setup.network);
  } catch (const Error& e) {
    throw Error(prefix + e.what());
  }

  constexpr std::string_view w = "workload";
  const auto file = config.string(w, "file");
  const auto generator = config.string(w, "generator");
  const auto job = config.string(w, "job");
  const auto jobs = config.strings(w, "jobs");
  if (file.has_value() + generator.has_value() + job.has_value() + jobs.has_value() != 1) {
    throw Error(prefix +
                "workload: give one of file = \"...\" (a workload file), job = \"...\" "
                "or jobs = [...] (training job files), generator = \"case-ii-panel\"");
  }
  auto relative = [&](const std::string& name) {
    const std::filesystem::path p(name);
    return p.is_absolute() ? p.string() : (std::filesystem::path(path).parent_path() / p).string();
  };
  if (job || jobs) {
    const std::vector<std::string> files = jobs.value_or(std::vector<std::string>{*job});
    if (files.empty()) throw Error(prefix + "workload.jobs is empty");
    for (std::size_t j = 0; j < files.size(); ++j) {
      work::JobSpec spec = work::read_job_file(relative(files[j]));
      spec.id = static_cast<std::uint32_t>(j);
      if (job) work::apply_job_overrides(config, "job", spec);  // [job]: this run's changes
      spec.resolve(setup.fabric->gpu_count());
      for (const work::JobSpec& other : setup.jobs) {
        const auto a0 = spec.parallel.first_gpu, a1 = a0 + spec.parallel.gpus;
        const auto b0 = other.parallel.first_gpu, b1 = b0 + other.parallel.gpus;
        if (a0 < b1 && b0 < a1) {
          throw Error(prefix + "workload.jobs: " + spec.file + " and " + other.file +
                      " share GPUs (set parallelism.first_gpu and gpus)");
        }
      }
      work::add_training_job(spec, setup.dag);
      setup.jobs.push_back(std::move(spec));
    }
    setup.dag.resolve();
    setup.workload = files.front();
  } else if (generator) {
    if (*generator != "case-ii-panel") {
      throw Error(prefix + "workload.generator: unknown generator \"" + *generator +
                  "\" (choose case-ii-panel)");
    }
    work::CaseIiPanel panel;
    panel.ep_bytes = config.bytes(w, "ep_bytes").value_or(panel.ep_bytes);
    panel.pp_bytes = config.bytes(w, "pp_bytes").value_or(panel.pp_bytes);
    panel.dp_bytes = config.bytes(w, "dp_bytes").value_or(panel.dp_bytes);
    panel.compute = config.time(w, "compute").value_or(panel.compute);
    const std::int64_t layer = config.integer(w, "layer").value_or(panel.layer);
    if (layer < 1 || layer > UINT32_MAX) throw Error(prefix + "workload.layer must be at least 1");
    panel.layer = static_cast<std::uint32_t>(layer);
    setup.workload = "case-ii-panel";
    try {
      work::add_case_ii_panel(panel, setup.dag);
    } catch (const Error& e) {
      throw Error(prefix + "workload: " + e.what());
    }
  } else {
    const std::filesystem::path p(*file);
    setup.workload =
        p.is_absolute() ? p.string() : (std::filesystem::path(path).parent_path() / p).string();
    const std::string format = config.string(w, "format").value_or("auto");
    try {
      work::load_workload(setup.workload, format, setup.dag);
    } catch (const Error& e) {
      const std::string what = e.what();
      // The readers name the file; a bad format name is the config's mistake.
      if (what.rfind("unknown workload format", 0) == 0)
        throw Error(prefix + "workload.format: " + what);
      throw;
    }
  }
  try {
    setup.dag.validate(setup.fabric->gpu_count());
  } catch (const Error& e) {
    throw Error("workload " + setup.workload + ": " + e.what());
  }

  // [[perturbation]]: a slow or long link ("link = \"leaf 0 -> spine 1\"", both
  // directions unless one_way) or a failed one ("fail = true"), or a straggler GPU
  // ("gpu = 5", "slowdown = 2.0").
  const std::size_t perturbations = config.entries("perturbation");
  for (std::size_t i = 0; i < perturbations; ++i) {
    const std::string entry = "perturbation[" + std::to_string(i) + "]";
    const std::string where = prefix + entry + ": ";
    const Time at = config.time(entry, "at").value_or(0);
    const auto link = config.string(entry, "link");
    const auto gpu = config.integer(entry, "gpu");
    if (link.has_value() == gpu.has_value()) {
      throw Error(where + "give either link = \"FROM -> TO\" or gpu = N");
    }
    if (gpu) {
      if (*gpu < 0 || *gpu >= setup.fabric->gpu_count()) {
        throw Error(where + "gpu " + std::to_string(*gpu) + " is outside the fabric");
      }
      const double slowdown = config.number(entry, "slowdown").value_or(1.0);
      if (!(slowdown > 0)) throw Error(where + "slowdown must be positive");
      setup.perturbations.gpus.push_back({static_cast<work::GpuId>(*gpu), at, slowdown});
      continue;
    }
    const auto arrow = link->find("->");
    if (arrow == std::string::npos) throw Error(where + "link must read \"FROM -> TO\"");
    auto trim = [](std::string t) {
      t.erase(0, t.find_first_not_of(' '));
      t.erase(t.find_last_not_of(' ') + 1);
      return t;
    };
    topo::NodeId from = 0, to = 0;
    try {
      from = setup.fabric->find_node(trim(link->substr(0, arrow)));
      to = setup.fabric->find_node(trim(link->substr(arrow + 2)));
    } catch (const Error& e) {
      throw Error(where + e.what());
    }
    const topo::LinkId forward = setup.fabric->find_link(from, to);
    if (forward == topo::kNoLink) throw Error(where + "no link " + *link + " in this fabric");
    net::LinkPerturbation p{forward, at, config.rate(entry, "rate").value_or(0),
                            config.time(entry, "extra_latency").value_or(0),
                            config.boolean(entry, "fail").value_or(false)};
    if (p.fail && (p.rate != 0 || p.extra_latency != 0)) {
      throw Error(where + "a failed link (fail = true) takes no rate or extra_latency");
    }
    setup.perturbations.links.push_back(p);
    if (!config.boolean(entry, "one_way").value_or(false)) {
      p.link = setup.fabric->link(forward).reverse;
      setup.perturbations.links.push_back(p);
    }
  }

  // [policy]: which coflow goes first (docs/policies.md).
  constexpr std::string_view pol = "policy";
  sched::PolicyConfig policy;
  const std::int64_t classes = config.integer(pol, "classes").value_or(8);
  if (classes != 1 && classes != 2 && classes != 4 && classes != 8) {
    throw Error(prefix + "policy.classes must be 1, 2, 4 or 8, not " + std::to_string(classes));
  }
  policy.classes = static_cast<int>(classes);
  const std::string enforce = config.string(pol, "enforce").value_or("both");
  if (enforce == "nic") {
    policy.enforce = sched::Enforcement::kNic;
  } else if (enforce == "switch") {
    policy.enforce = sched::Enforcement::kSwitch;
  } else if (enforce == "both") {
    policy.enforce = sched::Enforcement::kBoth;
  } else {
    throw Error(prefix + "policy.enforce must be \"nic\", \"switch\" or \"both\", not \"" +
                enforce + "\"");
  }
  policy.iteration_first = config.boolean(pol, "iteration_first").value_or(false);
  const std::string dp_mid = config.string(pol, "dp_micro_batch").value_or("last");
  if (dp_mid != "last" && dp_mid != "label") {
    throw Error(prefix +
                "policy.dp_micro_batch must be \"last\" (the iteration's last "
                "micro-batch) or \"label\" (the coflow's own), not \"" +
                dp_mid + "\"");
  }
  policy.dp_last_micro_batch = dp_mid == "last";
  policy.starvation_after = config.time(pol, "starvation_after").value_or(kTimeInfinity);
  if (policy.starvation_after <= 0) {
    throw Error(prefix + "policy.starvation_after must be positive");
  }
  const auto name = config.string(pol, "name");
  const auto compare = config.strings(pol, "compare");
  if (name && compare) throw Error(prefix + "policy: give name or compare, not both");
  std::vector<std::string> names =
      compare.value_or(std::vector<std::string>{name.value_or("fair")});
  if (names.empty()) throw Error(prefix + "policy.compare is empty");
  for (const std::string& each : names) {
    try {
      sched::parse_policy_name(each, policy);
    } catch (const Error& e) {
      throw Error(prefix + (compare ? "policy.compare: " : "policy.name: ") + e.what());
    }
    setup.policies.push_back(policy);
  }
  setup.network.starvation_after = policy.starvation_after;

  const std::size_t milestones = config.entries("milestone");
  for (std::size_t i = 0; i < milestones; ++i) {
    const std::string entry = "milestone[" + std::to_string(i) + "]";
    Milestone m{config.string(entry, "label").value_or(""),
                config.string(entry, "at").value_or("")};
    if (m.label.empty() || m.at.empty()) {
      throw Error(prefix + entry +
                  ": give label = \"...\" and at = \"NAME.start\", "
                  "\"NAME.end\", \"phase-end\" or \"last-byte\"");
    }
    if (m.at != "phase-end" && m.at != "last-byte") {
      const auto dot = m.at.rfind('.');
      const std::string what = dot == std::string::npos ? "" : m.at.substr(dot + 1);
      if (what != "start" && what != "end") {
        throw Error(prefix + entry + ".at: \"" + m.at +
                    "\" must be NAME.start, NAME.end, phase-end or last-byte");
      }
      if (!setup.dag.find(m.at.substr(0, dot))) {
        throw Error(prefix + entry + ".at: no task or coflow named \"" + m.at.substr(0, dot) +
                    "\" in the workload");
      }
    }
    setup.milestones.push_back(m);
  }

  constexpr std::string_view r = "run";
  setup.engine.seed = static_cast<std::uint64_t>(config.integer(r, "seed").value_or(1));
  setup.engine.end_time = config.time(r, "end").value_or(kTimeInfinity);
  const std::string strategy = config.string(r, "partition").value_or("topology");
  config.reject_unknown();
  setup.partition.emplace(topo::partition_fabric(*setup.fabric, ranks, strategy));
}

double percentile(std::vector<Time> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return static_cast<double>(values[i]);
}

void report(const RunSetup& setup, const core::RunSummary& s, const net::RunResults& r,
            const std::string& output) {
  const work::Dag& dag = setup.dag;
  fmt::print("run: {} GPUs ({}), {} coflows, {} flows, {} tasks\n", setup.fabric->gpu_count(),
             setup.fabric->kind(), dag.coflows().size(), dag.flows().size(), dag.tasks().size());
  fmt::print(
      "  ranks {} (partition {}), lookahead {}, events {}, wall {:.3f} s, {:.3f} M events/s\n",
      s.ranks, s.partition, format_time(s.lookahead), s.events, s.wall_seconds,
      s.events_per_second() / 1e6);
  fmt::print("  simulated time {}, bytes delivered {} of {}\n", format_time(s.simulated_time),
             r.bytes_delivered, dag.total_bytes());
  std::size_t unfinished = 0;
  for (const Time t : r.flow_end) unfinished += t < 0;

  std::ofstream csv;
  if (!output.empty()) {
    csv.open(output);
    if (!csv) throw Error("cannot write " + output);
    csv << "id,name,type,job,iteration,micro_batch,layer,stage,flows,bytes,start_ps,end_ps,cct_"
           "ps\n";
  }
  std::map<work::CoflowType, std::vector<Time>> ccts;
  // Long tables (training runs) go to the CSV only.
  constexpr std::size_t kTableRows = 100;
  const bool table = dag.coflows().size() <= kTableRows;
  if (table) {
    fmt::print("\n{:>6}  {:<24} {:<5} {:>6} {:>14} {:>14} {:>14} {:>14}\n", "id", "name", "type",
               "flows", "bytes", "start", "end", "CCT");
  } else {
    fmt::print("\n  {} coflows: the per-coflow table goes to the CSV (-o)\n", dag.coflows().size());
  }
  for (std::uint32_t c = 0; c < dag.coflows().size(); ++c) {
    const work::Coflow& coflow = dag.coflows()[c];
    Time start = kTimeInfinity, end = 0;
    bool done = true;
    Bytes bytes = 0;
    for (std::uint32_t i = 0; i < coflow.flow_count; ++i) {
      const std::uint32_t f = coflow.first_flow + i;
      start = std::min(start, r.flow_start[f]);
      end = std::max(end, r.flow_end[f]);
      done = done && r.flow_end[f] >= 0;
      bytes += dag.flows()[f].bytes;
    }
    const bool started = start != kTimeInfinity;
    const Time cct = done && started ? end - start : -1;
    if (cct >= 0) ccts[coflow.labels.type].push_back(cct);
    if (table)
      fmt::print("{:>6}  {:<24} {:<5} {:>6} {:>14} {:>14} {:>14} {:>14}\n", c, coflow.name,
                 work::coflow_type_name(coflow.labels.type), coflow.flow_count, format_bytes(bytes),
                 started ? format_time(start) : "-", done ? format_time(end) : "-",
                 cct >= 0 ? format_time(cct) : "-");
    if (csv.is_open()) {
      const auto& l = coflow.labels;
      csv << c << ',' << coflow.name << ',' << work::coflow_type_name(l.type) << ',' << l.job << ','
          << l.iteration << ',' << l.micro_batch << ',' << l.layer << ',' << l.stage << ','
          << coflow.flow_count << ',' << bytes << ',' << (started ? start : -1) << ','
          << (done ? end : -1) << ',' << cct << '\n';
    }
  }
  fmt::print("\n");
  for (const auto& [type, values] : ccts) {
    fmt::print("  CCT {:<5} n={} p50 {} p99 {} max {}\n", work::coflow_type_name(type),
               values.size(), format_time(static_cast<Time>(percentile(values, 0.5))),
               format_time(static_cast<Time>(percentile(values, 0.99))),
               format_time(*std::max_element(values.begin(), values.end())));
  }
  // Per GPU, over the GPUs that computed: busy time and time idle for a coflow.
  Time busy_sum = 0, busy_max = 0, wait_sum = 0, wait_max = 0;
  std::size_t computing = 0;
  for (std::size_t g = 0; g < r.gpu_busy.size(); ++g) {
    if (r.gpu_busy[g] == 0) continue;
    ++computing;
    busy_sum += r.gpu_busy[g];
    busy_max = std::max(busy_max, r.gpu_busy[g]);
    wait_sum += r.gpu_comm_wait[g];
    wait_max = std::max(wait_max, r.gpu_comm_wait[g]);
  }
  if (computing > 0) {
    const auto n = static_cast<Time>(computing);
    fmt::print(
        "  GPUs computing: {}; compute busy mean {} max {}; waiting on coflows mean {} max {}\n",
        computing, format_time(busy_sum / n), format_time(busy_max), format_time(wait_sum / n),
        format_time(wait_max));
  }
  if (unfinished > 0) {
    fmt::print("  {} flows did not finish{}\n", unfinished,
               setup.engine.end_time != kTimeInfinity ? " by the end time" : "");
  }
  if (csv.is_open()) {
    csv.close();
    if (!csv) throw Error("writing " + output + " failed");
    fmt::print("  coflows written to {}\n", output);
  }
}

/// Per training job: each iteration's time, and per GPU its compute, its
/// exposed communication and the pipeline bubble of its schedule.
void report_jobs(const RunSetup& setup, const net::RunResults& r) {
  const work::Dag& dag = setup.dag;
  for (const work::JobSpec& job : setup.jobs) {
    const work::ParallelSpec& p = job.parallel;
    fmt::print(
        "\n  job {} ({}): {} GPUs from {}, TP {} PP {} EP {} DP {}, {} micro-batches of {} "
        "tokens\n",
        job.id, job.model.name, p.gpus, p.first_gpu, p.tp, p.pp, p.ep, p.dp, p.micro_batches,
        p.micro_batch_tokens);
    std::vector<Time> start(p.iterations, kTimeInfinity), end(p.iterations, 0);
    for (std::size_t t = 0; t < dag.tasks().size(); ++t) {
      const work::TaskLabels& l = dag.tasks()[t].labels;
      if (l.kind == work::TaskKind::kOther || l.job != job.id) continue;
      start[l.iteration] = std::min(start[l.iteration], r.task_start[t]);
      end[l.iteration] = std::max(end[l.iteration], r.task_end[t]);
    }
    for (const work::Coflow& c : dag.coflows()) {
      if (c.labels.job != job.id || c.labels.iteration >= p.iterations) continue;
      for (std::uint32_t i = 0; i < c.flow_count; ++i) {
        end[c.labels.iteration] = std::max(end[c.labels.iteration], r.flow_end[c.first_flow + i]);
      }
    }
    for (std::uint32_t i = 0; i < p.iterations; ++i) {
      fmt::print("    iteration {}: {} (from {} to {}, the last parameter all-gather included)\n",
                 i, format_time(end[i] - start[i]), format_time(start[i]), format_time(end[i]));
    }
    Time busy_sum = 0, wait_sum = 0, wait_max = 0;
    for (std::uint32_t g = p.first_gpu; g < p.first_gpu + p.gpus; ++g) {
      busy_sum += r.gpu_busy[g];
      wait_sum += r.gpu_comm_wait[g];
      wait_max = std::max(wait_max, r.gpu_comm_wait[g]);
    }
    const Time n = p.gpus;
    // 1F1B leaves each stage idle for (PP - 1) micro-batch slots per iteration
    // even with an infinitely fast network.
    const Time per_micro_batch = busy_sum / n / p.iterations / p.micro_batches;
    fmt::print(
        "    per GPU: compute {} mean; exposed communication (idle until a coflow let it go on) "
        "{} mean, {} max; 1F1B bubble without communication about {} per iteration\n",
        format_time(busy_sum / n), format_time(wait_sum / n), format_time(wait_max),
        format_time(per_micro_batch * (p.pp - 1)));
  }
}

struct PolicyOutcome {
  std::string name;
  net::RunResults results;
};

Time phase_end(const net::RunResults& r) {
  Time end = 0;
  for (const Time t : r.task_end) end = std::max(end, t);
  for (const Time t : r.flow_end) end = std::max(end, t);
  return end;
}

/// The milestone's time, or -1 if it was not reached.
Time milestone_time(const work::Dag& dag, const net::RunResults& r, const std::string& at) {
  if (at == "phase-end") return phase_end(r);
  if (at == "last-byte") return *std::max_element(r.flow_end.begin(), r.flow_end.end());
  const auto dot = at.rfind('.');
  const bool start = at.substr(dot + 1) == "start";
  const work::NodeRef node = *dag.find(at.substr(0, dot));
  if (node.kind == work::NodeRef::Kind::kTask) {
    return start ? (r.task_start[node.index] == kTimeInfinity ? -1 : r.task_start[node.index])
                 : r.task_end[node.index];
  }
  const work::Coflow& c = dag.coflows()[node.index];
  Time first = kTimeInfinity, last = 0;
  for (std::uint32_t i = 0; i < c.flow_count; ++i) {
    first = std::min(first, r.flow_start[c.first_flow + i]);
    const Time end = r.flow_end[c.first_flow + i];
    if (end < 0) return -1;
    last = std::max(last, end);
  }
  return start ? (first == kTimeInfinity ? -1 : first) : last;
}

std::string output_for(const std::string& output, const std::string& policy, bool several) {
  if (output.empty() || !several) return output;
  const std::filesystem::path p(output);
  return (p.parent_path() / (p.stem().string() + "-" + policy + p.extension().string())).string();
}

/// The per-policy comparison: phase end, iteration time, exposed communication,
/// CCT per type, the ratio to fair, and the milestones with time saved.
void compare(const RunSetup& setup, const std::vector<PolicyOutcome>& outcomes) {
  const work::Dag& dag = setup.dag;
  std::uint32_t iterations = 1;
  for (const work::Coflow& c : dag.coflows())
    iterations = std::max(iterations, c.labels.iteration + 1);
  const PolicyOutcome* fair = nullptr;
  for (const PolicyOutcome& o : outcomes) {
    if (o.name == "fair") fair = &o;
  }
  fmt::print(
      "\npolicy comparison ({} policies; phase end = last task or flow end; iteration = "
      "phase end / {} iteration{})\n",
      outcomes.size(), iterations, iterations == 1 ? "" : "s");
  fmt::print("  {:<14} {:>14} {:>14} {:>14} {:>14} {:>8}\n", "policy", "phase end", "iteration",
             "exposed mean", "exposed max", "vs fair");
  for (const PolicyOutcome& o : outcomes) {
    const net::RunResults& r = o.results;
    Time wait_sum = 0, wait_max = 0;
    std::size_t computing = 0;
    for (std::size_t g = 0; g < r.gpu_busy.size(); ++g) {
      if (r.gpu_busy[g] == 0) continue;
      ++computing;
      wait_sum += r.gpu_comm_wait[g];
      wait_max = std::max(wait_max, r.gpu_comm_wait[g]);
    }
    const Time end = phase_end(r);
    const std::string ratio =
        fair != nullptr ? fmt::format("{:.3f}", static_cast<double>(end) /
                                                    static_cast<double>(phase_end(fair->results)))
                        : "-";
    fmt::print("  {:<14} {:>14} {:>14} {:>14} {:>14} {:>8}\n", o.name, format_time(end),
               format_time(end / iterations),
               computing > 0 ? format_time(wait_sum / static_cast<Time>(computing)) : "-",
               computing > 0 ? format_time(wait_max) : "-", ratio);
  }
  fmt::print("\n  CCT per type (p50 / p99 / max)\n");
  for (const PolicyOutcome& o : outcomes) {
    std::map<work::CoflowType, std::vector<Time>> ccts;
    for (const work::Coflow& c : dag.coflows()) {
      Time start = kTimeInfinity, end = 0;
      bool done = true;
      for (std::uint32_t i = 0; i < c.flow_count; ++i) {
        start = std::min(start, o.results.flow_start[c.first_flow + i]);
        end = std::max(end, o.results.flow_end[c.first_flow + i]);
        done = done && o.results.flow_end[c.first_flow + i] >= 0;
      }
      if (done && start != kTimeInfinity) ccts[c.labels.type].push_back(end - start);
    }
    std::string line;
    for (const auto& [type, values] : ccts) {
      line += fmt::format("  {} {} / {} / {}", work::coflow_type_name(type),
                          format_time(static_cast<Time>(percentile(values, 0.5))),
                          format_time(static_cast<Time>(percentile(values, 0.99))),
                          format_time(*std::max_element(values.begin(), values.end())));
    }
    fmt::print("  {:<14}{}\n", o.name, line);
  }
  if (setup.milestones.empty()) return;
  fmt::print("\n  {:<36}", "milestone");
  for (const PolicyOutcome& o : outcomes) fmt::print(" {:>14}", o.name);
  fmt::print("\n");
  auto row = [&](const std::string& label, auto value) {
    fmt::print("  {:<36}", label);
    for (const PolicyOutcome& o : outcomes) fmt::print(" {:>14}", value(o));
    fmt::print("\n");
  };
  for (const Milestone& m : setup.milestones) {
    row(m.label, [&](const PolicyOutcome& o) {
      const Time t = milestone_time(dag, o.results, m.at);
      return t < 0 ? std::string("-") : format_time(t);
    });
  }
  if (fair != nullptr) {
    row("saved against fair share", [&](const PolicyOutcome& o) {
      return format_time(phase_end(fair->results) - phase_end(o.results));
    });
  }
}

int run(const core::Comm& world, const RunArgs& args, const GlobalOptions& global) {
  RunSetup setup;
  const bool ready = setup_everywhere(world, [&] {
    read_config(args.config, args.overrides, world.size(), setup);
    setup.engine.progress = !global.quiet;
    setup.engine.progress_interval_seconds = args.progress_interval;
  });
  if (!ready) return 1;
  const bool several = setup.policies.size() > 1;
  std::vector<PolicyOutcome> outcomes;
  for (const sched::PolicyConfig& policy : setup.policies) {
    std::unique_ptr<core::Simulator> sim;
    std::unique_ptr<net::Network> network;
    const bool built = setup_everywhere(world, [&] {
      sim = std::make_unique<core::Simulator>(world, setup.fabric->layout(), *setup.partition,
                                              setup.engine);
      network = std::make_unique<net::Network>(
          *setup.fabric, setup.dag, *sim, setup.network, setup.perturbations,
          sched::flow_priorities(setup.dag, *setup.fabric, policy));
      network->initialize();
    });
    if (!built) return 1;
    const std::string name = sched::policy_name(policy);
    const int status = run_or_abort(world, [&] {
      const core::RunSummary summary = sim->run(*network);
      net::RunResults results = network->results(world);
      if (world.rank() != 0) return 0;
      fmt::print("{}policy: {}\n", several ? "\n" : "", name);
      report(setup, summary, results, output_for(args.output, name, several));
      if (!setup.jobs.empty()) report_jobs(setup, results);
      const bool complete = std::all_of(results.flow_end.begin(), results.flow_end.end(),
                                        [](Time t) { return t >= 0; });
      if (setup.engine.end_time == kTimeInfinity && !complete) {
        throw Error("the run ended with flows unfinished and no end time: a deadlock");
      }
      if (complete && results.bytes_delivered != setup.dag.total_bytes()) {
        throw Error("conservation: delivered " + std::to_string(results.bytes_delivered) +
                    " bytes of " + std::to_string(setup.dag.total_bytes()));
      }
      outcomes.push_back({name, std::move(results)});
      return 0;
    });
    if (status != 0) return status;
  }
  if (world.rank() == 0 && (several || !setup.milestones.empty())) compare(setup, outcomes);
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global, Action& action) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Simulate a workload on a fabric ([topology], [network], [workload], [run] in the "
      "config) and print every coflow's completion time");
  cmd->add_option("config", args->config, "Config file (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->output, "Write the coflow table as CSV");
  cmd->add_option("--set", args->overrides,
                  "Override a config value: TABLE.KEY=VALUE (repeatable), e.g. "
                  "--set network.cell_size=64KiB --set topology.link_rate=400Gbps");
  cmd->add_option("--progress-interval", args->progress_interval,
                  "Seconds between progress lines (--quiet turns them off)")
      ->capture_default_str();
  cmd->callback([&action, &global, args] {
    action = [&global, args](const core::Comm& world) { return run(world, *args, global); };
  });
}

}  // namespace shoal::cli
