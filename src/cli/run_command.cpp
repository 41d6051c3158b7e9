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
#include "shoal/topo/fabric_config.hpp"
#include "shoal/work/workload_loader.hpp"

namespace shoal::cli {
namespace {

struct RunArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string output;
  double progress_interval = 5.0;
};

/// Everything a run needs, read from the config on every rank.
struct RunSetup {
  std::optional<topo::Fabric> fabric;
  std::optional<core::Partition> partition;
  work::Dag dag;
  net::NetworkOptions network;
  net::Perturbations perturbations;
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
  if (!file) throw Error(prefix + "workload.file is missing (the workload to run)");
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
  fmt::print("\n{:>6}  {:<24} {:<5} {:>6} {:>14} {:>14} {:>14} {:>14}\n", "id", "name", "type",
             "flows", "bytes", "start", "end", "CCT");
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

int run(const core::Comm& world, const RunArgs& args, const GlobalOptions& global) {
  RunSetup setup;
  std::unique_ptr<core::Simulator> sim;
  std::unique_ptr<net::Network> network;
  const bool ready = setup_everywhere(world, [&] {
    read_config(args.config, args.overrides, world.size(), setup);
    setup.engine.progress = !global.quiet;
    setup.engine.progress_interval_seconds = args.progress_interval;
    sim = std::make_unique<core::Simulator>(world, setup.fabric->layout(), *setup.partition,
                                            setup.engine);
    network = std::make_unique<net::Network>(*setup.fabric, setup.dag, *sim, setup.network,
                                             setup.perturbations);
    network->initialize();
  });
  if (!ready) return 1;
  return run_or_abort(world, [&] {
    const core::RunSummary summary = sim->run(*network);
    const net::RunResults results = network->results(world);
    if (world.rank() != 0) return 0;
    report(setup, summary, results, args.output);
    const bool complete = std::all_of(results.flow_end.begin(), results.flow_end.end(),
                                      [](Time t) { return t >= 0; });
    if (setup.engine.end_time == kTimeInfinity && !complete) {
      throw Error("the run ended with flows unfinished and no end time: a deadlock");
    }
    if (complete && results.bytes_delivered != setup.dag.total_bytes()) {
      throw Error("conservation: delivered " + std::to_string(results.bytes_delivered) +
                  " bytes of " + std::to_string(setup.dag.total_bytes()));
    }
    return 0;
  });
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
