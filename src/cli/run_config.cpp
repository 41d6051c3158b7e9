#include "run_config.hpp"

#include <filesystem>

#include "shoal/core/error.hpp"
#include "shoal/io/config_file.hpp"
#include "shoal/topo/fabric_config.hpp"
#include "shoal/work/case_ii_panel.hpp"
#include "shoal/work/job_file.hpp"
#include "shoal/work/training_dag.hpp"
#include "shoal/work/workload_loader.hpp"

namespace shoal::cli {

core::Partition fabric_partition(const topo::Fabric& fabric, int ranks, const std::string& spec,
                                 const std::string& config_path) {
  if (topo::is_partition_strategy(spec)) {
    return topo::partition_fabric(fabric, ranks, spec);
  }
  const std::filesystem::path p(spec);
  const std::string file = p.is_absolute()
                               ? p.string()
                               : (std::filesystem::path(config_path).parent_path() / p).string();
  if (!std::filesystem::is_regular_file(file)) {
    throw Error("\"" + spec +
                "\" is neither a partition strategy (topology, block, round-robin) nor a "
                "partition file (" +
                file + (std::filesystem::exists(file) ? " is not a file)" : " does not exist)"));
  }
  return core::Partition::from_file(file, fabric.layout(), ranks);
}

void read_config(const std::string& path, const std::vector<std::string>& overrides, int ranks,
                 RunSetup& setup) {
  io::ConfigFile config(path, overrides);
  setup.fabric.emplace(topo::build_fabric(config));
  const std::string prefix = "config " + path + ": ";
  // Before the workload: the resource guard watches the DAG grow against it.
  if (const auto limit = config.bytes("run", "memory_limit")) {
    if (*limit <= 0) throw Error(prefix + "run.memory_limit must be positive");
    setup.memory_limit = static_cast<std::uint64_t>(*limit);
  }

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
    const std::vector<std::string> files = jobs ? *jobs : std::vector<std::string>{*job};
    if (files.empty()) throw Error(prefix + "workload.jobs is empty");
    for (std::size_t j = 0; j < files.size(); ++j) {
      work::JobSpec spec = work::read_job_file(relative(files[j]));
      spec.id = static_cast<std::uint32_t>(j);
      if (job) work::apply_job_overrides(config, "job", spec);  // [job]: this run's changes
      spec.resolve(setup.fabric->gpu_count(), setup.fabric->gpus_per_server());
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

  constexpr std::string_view o = "output";
  if (const auto out = config.string(o, "file")) setup.output = relative(*out);
  setup.output_flows = config.boolean(o, "flows").value_or(true);
  // Time-binned utilisation of the busiest links (docs/output.md).
  setup.network.link_util_bin = config.time(o, "link_util_bin").value_or(100 * kMicrosecond);
  if (setup.network.link_util_bin <= 0)
    throw Error(prefix + "output.link_util_bin must be positive");
  const std::int64_t top = config.integer(o, "link_util_top").value_or(20);
  if (top < 0 || top > UINT32_MAX) {
    throw Error(prefix + "output.link_util_top must be between 0 and " +
                std::to_string(UINT32_MAX));
  }
  setup.network.link_util_top = static_cast<std::uint32_t>(top);
  if (const auto memory = config.bytes(o, "link_util_memory")) {
    if (*memory <= 0) throw Error(prefix + "output.link_util_memory must be positive");
    setup.network.link_util_memory = static_cast<std::uint64_t>(*memory);
  }
  setup.config_path = path;

  constexpr std::string_view r = "run";
  setup.engine.seed = static_cast<std::uint64_t>(config.integer(r, "seed").value_or(1));
  setup.engine.end_time = config.time(r, "end").value_or(kTimeInfinity);
  // The same run in either order (core::EventOrder); "auto" picks the one
  // that is faster for the fabric and cell size (Network::event_order_for).
  const std::string order = config.string(r, "event_order").value_or("auto");
  if (order == "auto") {
    setup.engine.order = net::Network::event_order_for(*setup.fabric, setup.network);
  } else if (order == "atom" || order == "time") {
    setup.engine.order = order == "atom" ? core::EventOrder::kAtom : core::EventOrder::kTime;
  } else {
    throw Error(prefix + "run.event_order must be \"auto\", \"atom\" or \"time\"");
  }
  const std::string strategy = config.string(r, "partition").value_or("topology");
  config.reject_unknown();
  try {
    setup.partition.emplace(fabric_partition(*setup.fabric, ranks, strategy, path));
  } catch (const Error& e) {
    throw Error("config " + path + ": run.partition: " + e.what());
  }
}

}  // namespace shoal::cli
