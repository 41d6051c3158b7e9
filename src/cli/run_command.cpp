// `shoal run CONFIG.toml [-o coflows.csv]`: a fabric, a workload DAG and the
// packet network on the engine; prints every coflow's completion time.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>

#include "coflow_table.hpp"
#include "commands.hpp"
#include "memory_guard.hpp"
#include "run_config.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/cli/phase_peaks.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"
#include "shoal/core/free_heap.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/core/stop_signal.hpp"
#include "shoal/exec/fragment.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/exec/outcomes.hpp"
#include "shoal/output/run_output.hpp"
#include "shoal/sched/policy.hpp"

namespace shoal::cli {
namespace {

using exec::CoflowOutcome;
using exec::RunResults;

double percentile(std::vector<Time> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return static_cast<double>(values[i]);
}

// Long tables (training runs) go to the CSV only.
constexpr std::size_t kTableRows = 100;

/// `table`: every coflow's row where there are at most kTableRows
/// (coflow_table); `output`: the CSV they were written to, if any.
void report(const RunSetup& setup, const core::RunSummary& s, const RunResults& r,
            const std::vector<NamedCoflowRow>& table, const std::string& output,
            const std::string& memory) {
  const work::Dag& dag = setup.dag;
  fmt::print("run: {} GPUs ({}), {} coflows, {} flows, {} tasks\n", setup.fabric->gpu_count(),
             setup.fabric->kind(), dag.coflow_count(), dag.flow_count(), dag.task_count());
  const double hops_per_rank_second =
      s.wall_seconds > 0 ? static_cast<double>(r.cell_hops) / s.wall_seconds / s.ranks : 0;
  fmt::print(
      "  ranks {} (partition {}), lookahead {}, order {}, events {}, wall {:.3f} s, "
      "{:.3f} M events/s, {:.3f} M cell-hops/s per rank\n",
      s.ranks, s.partition, format_time(s.lookahead),
      s.sub_window > 0 ? "by atom (" + format_time(s.sub_window) + " sub-windows)" : "by time",
      s.events, s.wall_seconds, s.events_per_second() / 1e6, hops_per_rank_second / 1e6);
  fmt::print("  simulated time {}, bytes delivered {} of {}, cell-hops {}\n",
             format_time(s.simulated_time), r.bytes_delivered, dag.total_bytes(), r.cell_hops);
  if (s.ranks > 1) {
    // Where a parallel run's time goes: the exchange after each window, and
    // the waiting there for the slowest rank (balance: how much of it the
    // partition's balance of events, window by window, forces). Routes noted:
    // cells that came to a rank holding neither end of their flow, each with
    // its destination in a note.
    fmt::print(
        "  windows {}, balance {:.1f}%, events across ranks {} ({:.1f}%), routes noted {}, "
        "synchronizing {:.1f}% of a rank's time (mean), {:.1f}% (most), {:.0f}% of it waiting "
        "for the slowest rank's events\n",
        s.windows, 100.0 * s.balance, s.remote_events, s.remote_percent(), r.routes_noted,
        100.0 * s.sync_share_mean, 100.0 * s.sync_share_max, 100.0 * s.wait_share_mean);
  }
  if (!memory.empty()) fmt::print("  {}\n", memory);
  const std::uint64_t unfinished = exec::unfinished_flows(r);
  if (dag.coflow_count() <= kTableRows) {
    fmt::print("\n{:>6}  {:<24} {:<5} {:>6} {:>14} {:>14} {:>14} {:>14}\n", "id", "name", "type",
               "flows", "bytes", "start", "end", "CCT");
  } else {
    fmt::print("\n  {} coflows: the per-coflow table goes to the CSV (-o)\n", dag.coflow_count());
  }
  for (const NamedCoflowRow& named : table) {
    const exec::CoflowRow& row = named.row;
    const CoflowOutcome o = exec::coflow_outcome(row);
    const Time cct = o.cct();
    fmt::print("{:>6}  {:<24} {:<5} {:>6} {:>14} {:>14} {:>14} {:>14}\n", row.id, named.name,
               work::coflow_type_name(row.labels.type), row.flow_count, format_bytes_short(o.bytes),
               o.started() ? format_time(o.start) : "-", o.done ? format_time(o.end) : "-",
               cct >= 0 ? format_time(cct) : "-");
  }
  fmt::print("\n");
  for (std::size_t type = 0; type < work::kCoflowTypes; ++type) {
    const std::vector<Time>& values = r.coflows.ccts[type];
    if (values.empty()) continue;
    fmt::print("  CCT {:<5} n={} p50 {} p99 {} max {}\n",
               work::coflow_type_name(static_cast<work::CoflowType>(type)), values.size(),
               format_time(static_cast<Time>(percentile(values, 0.5))),
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
  if (!output.empty()) fmt::print("  coflows written to {}\n", output);
}

/// Per training job: each iteration's time, and per GPU its compute, its
/// exposed communication and the pipeline bubble of its schedule.
void report_jobs(const RunSetup& setup, const RunResults& r) {
  for (const work::JobSpec& job : setup.jobs) {
    const work::ParallelSpec& p = job.parallel;
    fmt::print(
        "\n  job {} ({}): {} GPUs from {}, TP {}{} PP {} EP {} DP {}, {} micro-batches of {} "
        "tokens\n",
        job.id, job.model.name, p.gpus, p.first_gpu, p.tp,
        p.cp > 1 ? fmt::format(" CP {}", p.cp) : std::string(), p.pp, p.ep, p.dp, p.micro_batches,
        p.micro_batch_tokens);
    const exec::IterationTimes times = exec::iteration_times(r, job);
    const std::vector<Time>& start = times.start;
    const std::vector<Time>& end = times.end;
    // An iteration's time: from the previous one's end (its last parameter
    // all-gather) to its own, the first from its first task.
    for (std::uint32_t i = 0; i < p.iterations; ++i) {
      const Time from = i == 0 ? start[0] : end[i - 1];
      const std::string started =
          start[i] < 0 ? "no task started" : "its first task started at " + format_time(start[i]);
      if (end[i] < 0) {
        fmt::print("    iteration {}: did not finish ({})\n", i, started);
      } else {
        // Without the previous iteration's end there is no time to give.
        fmt::print("    iteration {}: {} (ends at {}; {})\n", i,
                   from < 0 ? "-" : format_time(end[i] - from), format_time(end[i]), started);
      }
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
    // The pipeline's bubble with equal stages and no communication: (PP - 1)
    // micro-batch slots, 1/v of them interleaved (Narayanan et al., SC'21);
    // DualPipe's (PP/2 - 1)(F&B + B - 3W) (DeepSeek-V3's report, Table 2).
    Time bubble = per_micro_batch * (p.pp - 1) / job.schedule.virtual_stages;
    if (job.schedule.pp_schedule == work::PpSchedule::kDualPipe) {
      const double f = static_cast<double>(per_micro_batch) / (1.0 + job.gpu.backward_factor);
      const double b = f * job.gpu.backward_factor, w = b * job.schedule.weight_grad_share;
      bubble = static_cast<Time>((p.pp / 2 - 1) * (f + 2 * b - 3 * w));
    }
    // Two-batch overlap runs the schedule over pairs: its slots are two micro-batches long.
    if (job.overlap.mode == work::Overlap::kDualMicroBatch) bubble *= 2;
    fmt::print(
        "    per GPU: compute {} mean; exposed communication (idle until a coflow let it go on) "
        "{} mean, {} max; pipeline bubble without communication about {} per iteration\n",
        format_time(busy_sum / n), format_time(wait_sum / n), format_time(wait_max),
        format_time(bubble));
  }
}

struct PolicyOutcome {
  std::string name;
  RunResults results;
};

/// The folder an output file is written in.
std::string output_folder(const std::string& file) {
  const std::filesystem::path folder = std::filesystem::path(file).parent_path();
  return folder.empty() ? "." : folder.string();
}

std::string output_for(const std::string& output, const std::string& policy, bool several) {
  if (output.empty() || !several) return output;
  const std::filesystem::path p(output);
  return (p.parent_path() / (p.stem().string() + "-" + policy + p.extension().string())).string();
}

/// Whether `output` (from -o, else [output] file) names an HDF5 file (.h5,
/// .hdf5) or the coflow CSV (.csv), in any case; anything else is an error,
/// as is any policy's file that exists without --force or cannot be created:
/// all found before the first event.
bool check_outputs(const RunArgs& args, const RunSetup& setup, const std::string& output) {
  if (output.empty()) return false;
  const std::string what =
      args.output.empty() ? "config " + setup.config_path + ": output.file" : "-o";
  const std::string ext = core::lower_extension(output);
  const bool hdf5 = ext == ".h5" || ext == ".hdf5";
  if (!hdf5 && ext != ".csv") {
    throw Error(what + " " + output + ": unknown extension \"" + ext +
                "\" (.h5 or .hdf5 for the HDF5 results, .csv for the coflow table)");
  }
  for (const sched::PolicyConfig& policy : setup.policies) {
    const std::string path =
        output_for(output, sched::policy_name(policy), setup.policies.size() > 1);
    core::require_new_output(path, args.force, what);
    core::require_new_output(path + ".partial", true, what);  // not a folder in the way
  }
  return hdf5;
}

/// The per-policy comparison: phase end, iteration time, exposed communication,
/// CCT per type, the ratio to fair, and the milestones with time saved.
void compare(const RunSetup& setup, const std::vector<PolicyOutcome>& outcomes) {
  std::uint32_t iterations = 1;
  for (const auto& [at, end] : outcomes.front().results.coflows.iterations) {
    iterations = std::max(iterations, at.second + 1);
  }
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
    const RunResults& r = o.results;
    Time wait_sum = 0, wait_max = 0;
    std::size_t computing = 0;
    for (std::size_t g = 0; g < r.gpu_busy.size(); ++g) {
      if (r.gpu_busy[g] == 0) continue;
      ++computing;
      wait_sum += r.gpu_comm_wait[g];
      wait_max = std::max(wait_max, r.gpu_comm_wait[g]);
    }
    const Time end = exec::phase_end(r);
    const std::string ratio =
        fair != nullptr
            ? fmt::format("{:.3f}", static_cast<double>(end) /
                                        static_cast<double>(exec::phase_end(fair->results)))
            : "-";
    fmt::print("  {:<14} {:>14} {:>14} {:>14} {:>14} {:>8}\n", o.name, format_time(end),
               format_time(end / iterations),
               computing > 0 ? format_time(wait_sum / static_cast<Time>(computing)) : "-",
               computing > 0 ? format_time(wait_max) : "-", ratio);
  }
  fmt::print("\n  CCT per type (p50 / p99 / max)\n");
  for (const PolicyOutcome& o : outcomes) {
    std::string line;
    for (std::size_t type = 0; type < work::kCoflowTypes; ++type) {
      const std::vector<Time>& values = o.results.coflows.ccts[type];
      if (values.empty()) continue;
      line += fmt::format("  {} {} / {} / {}",
                          work::coflow_type_name(static_cast<work::CoflowType>(type)),
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
  for (const exec::Milestone& m : setup.milestones) {
    row(m.label, [&](const PolicyOutcome& o) {
      const Time t = exec::milestone_time(o.results, m);
      return t < 0 ? std::string("-") : format_time(t);
    });
  }
  if (fair != nullptr) {
    row("saved against fair share", [&](const PolicyOutcome& o) {
      return format_time(exec::phase_end(fair->results) - exec::phase_end(o.results));
    });
  }
}

}  // namespace

int run_simulation(const core::Comm& world, const RunArgs& args, const GlobalOptions& global) {
  RunSetup setup;
  core::install_stop_handlers();
  const int ranks_on_node = world.ranks_on_node();
  // Reads the config on every rank, each building its fragment of the flows
  // under `partition` (or under its own, or the pilot's: read_config).
  auto read = [&](std::optional<core::Partition> partition) {
    setup = RunSetup{};  // the DAG a pilot ran on goes before the next is built
    core::release_free_heap();
    const bool ready = setup_everywhere(world, [&] {
      setup.dag.set_growth_check(dag_growth_guard(ranks_on_node, setup));
      setup.ranks_on_node = ranks_on_node;
      setup.fragment_rank = world.rank();
      setup.partition = std::move(partition);
      read_config(args.config, args.overrides, world.size(), setup, args.input_map,
                  args.config_label);
      setup.dag.set_growth_check({});
      setup.engine.progress = !global.quiet;
      setup.engine.progress_interval_seconds = args.progress_interval;
      setup.overrides = args.overrides;
      setup.sweep_point = args.sweep_point;
      setup.rerun_of = args.rerun_of;
      if (!args.sweep_point.empty()) require_one_policy(setup, "sweep point " + args.sweep_point);
    });
    // The rule the ranks' fragments share, once every rank has built its own,
    // and the milestones' nodes. Then no name is looked up again, no rank
    // keeps the dependencies of coflows its GPUs send nothing in, nor the
    // coflows its GPUs have no flow in.
    return ready && setup_everywhere(world, [&] {
             try {
               exec::check_sender_dependencies(world, setup.dag);
             } catch (const Error& e) {
               throw Error("workload " + setup.workload + ": " + e.what());
             }
             exec::find_milestones(world, setup.dag, setup.milestones);
             setup.dag.drop_names();
             setup.dag.drop_unsent_coflow_dependencies();
             setup.dag.drop_unheld_coflows();
             core::release_free_heap();
           });
  };
  PhasePeaks peaks;
  if (!read(std::nullopt)) return 1;
  peaks.end(PhasePeaks::kBuild);
  if (!setup.partition) {
    // A weighted partition on several ranks: its pilot runs on the ranks'
    // fragments under the pilot's own partition. Where the weighted one keeps
    // that partition, those fragments are the run's; otherwise each rank
    // reads the config again for its fragment under the weighted one.
    bool pilot_kept = false;
    if (!place_weighted(world, setup, world.size(), &pilot_kept)) return 1;
    if (!pilot_kept) {
      std::optional<core::Partition> weighted = std::move(setup.partition);
      if (!read(std::move(weighted))) return 1;
    }
    peaks.end(PhasePeaks::kPilot);
  }
  const bool several = setup.policies.size() > 1;
  // -o FILE.h5 (or [output] file) writes HDF5; -o FILE.csv the coflow table.
  const std::string output = args.output.empty() ? setup.output : args.output;
  bool hdf5 = false;
  if (!setup_everywhere(world, [&] { hdf5 = check_outputs(args, setup, output); })) return 1;
  // Every policy's keys (crux's are collective: it weighs every rank's flows).
  std::vector<sched::CoflowPriorities> keys(setup.policies.size());
  if (!setup_everywhere(world, [&] {
        for (std::size_t p = 0; p < keys.size(); ++p) {
          keys[p] = sched::coflow_priorities(setup.dag, *setup.fabric, setup.policies[p], &world);
        }
      })) {
    return 1;
  }
  core::release_free_heap();  // what the checks and keys freed, before the run's model grows
  std::vector<PolicyOutcome> outcomes;
  for (std::size_t p = 0; p < setup.policies.size(); ++p) {
    const sched::PolicyConfig& policy = setup.policies[p];
    std::unique_ptr<core::Simulator> sim;
    std::unique_ptr<exec::Model> model;
    std::unique_ptr<output::RunOutput> h5;
    sched::CoflowPriorities priorities;
    const std::string name = sched::policy_name(policy);
    const std::string file = output_for(output, name, several);
    // The /link_util bins wait beside the output file, on the disk chosen for results.
    const std::string scratch = hdf5 ? output_folder(file) : std::string();
    const bool built = setup_everywhere(world, [&] {
      check_memory(world.rank(), ranks_on_node, setup, hdf5, setup.memory_limit, scratch);
      if (hdf5) {
        h5 = std::make_unique<output::RunOutput>(world, file, args.force, setup.output_flows);
      }
      sim = std::make_unique<core::Simulator>(world, setup.fabric->layout(), *setup.partition,
                                              setup.engine);
      priorities = std::move(keys[p]);
      net::NetworkOptions options = setup.network;
      options.record = hdf5;
      options.link_util_scratch = scratch;
      options.check = options.check || args.check;
      model = std::make_unique<exec::Model>(
          *setup.fabric, setup.dag, *sim, options, setup.perturbations,
          net::FlowPriorities{priorities.key, priorities.cls}, recording_for(setup, hdf5));
      if (h5) h5->attach(*model);
      model->initialize();
    });
    if (!built) return 1;
    const int status = run_or_abort(world, [&] {
      const core::RunSummary summary = sim->run(*model);
      RunResults results = model->results(world);
      const bool delivered =
          results.bytes_delivered == setup.dag.total_bytes();  // same on every rank
      // Every byte arrived: each rank's ports must be empty with all credit back.
      if (delivered && !summary.stopped) model->check_end_state();
      // Flows left without an end time: check_outcome says why, and the
      // results stay in FILE.partial, never over FILE (docs/output.md).
      const bool failed = !delivered && !summary.stopped && setup.engine.end_time == kTimeInfinity;
      std::string written;  // the HDF5 file that holds the results
      if (h5) {
        written = h5->finish(setup, *model, results, summary, name, priorities,
                             delivered && !summary.stopped, failed);
      }
      if (summary.stopped) {
        // SIGTERM or SIGINT (a time limit): what was simulated is written, marked incomplete.
        if (world.rank() == 0) {
          const std::string by = core::stop_signal_name()[0] != '\0' ? core::stop_signal_name()
                                                                     : "a signal to another rank";
          const std::string path = output_for(output, name, several);
          std::string where;
          if (h5 && written == path) {
            where = "; " + path + " holds the results so far (completed = 0)";
          } else if (h5) {
            where = "; " + path + " (a completed run) is kept, and " + written +
                    " holds this run's results so far (completed = 0)";
          }
          fmt::print(stderr, "shoal: stopped by {} at simulated time {}{}\n", by,
                     format_time(summary.simulated_time), where);
        }
        return 3;
      }
      // The coflow CSV and the report's table, merged over the ranks (collective).
      std::string csv = hdf5 ? std::string() : output_for(output, name, several);
      if (failed && !csv.empty()) csv += ".partial";
      const std::vector<NamedCoflowRow> table =
          coflow_table(world, setup.dag, model->recorder(), csv, kTableRows);
      peaks.end(PhasePeaks::kRun);
      const std::string memory = peaks.report(world);  // collective
      if (world.rank() != 0) return 0;
      fmt::print("{}policy: {}\n", several ? "\n" : "", name);
      report(setup, summary, results, table, csv, memory);
      if (h5) fmt::print("  results written to {}\n", written);
      if (h5 && results.link_util_width > setup.network.link_util_bin) {
        fmt::print(
            "  /link_util bins widened from {} to {} to stay within [output] "
            "link_util_memory ({} bytes)\n",
            format_time(setup.network.link_util_bin), format_time(results.link_util_width),
            setup.network.link_util_memory);
      }
      if (!setup.jobs.empty()) report_jobs(setup, results);
      exec::Model::check_outcome(setup.dag, results, setup.engine.end_time, summary.simulated_time);
      outcomes.push_back({name, std::move(results)});
      return 0;
    });
    if (status != 0) return status;
  }
  if (world.rank() == 0 && (several || !setup.milestones.empty())) compare(setup, outcomes);
  return 0;
}

void add_run_command(CLI::App& app, const GlobalOptions& global, Action& action) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Simulate a workload on a fabric ([topology], [network], [workload], [run] in the "
      "config) and print every coflow's completion time");
  cmd->add_option("config", args->config, "Config file (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->output,
                  "Write the results: FILE.h5 (HDF5: coflows, flows, compute, iterations, links, "
                  "meta; docs/output.md; also .hdf5) or FILE.csv (the coflow table); an existing "
                  "file needs --force")
      ->check(file_name());
  cmd->add_flag("--force", args->force,
                "Overwrite existing output files (a run stopped by a signal keeps a completed "
                "HDF5 file and leaves its own results in FILE.partial)");
  cmd->add_flag("--check", args->check,
                "Check the full invariants after every window (queue counters, credits within "
                "0..buffer), as Debug builds do; slower. The cheap ones are always on");
  cmd->add_option("--set", args->overrides,
                  "Override a config value: TABLE.KEY=VALUE (repeatable), e.g. "
                  "--set network.cell_size=64KiB --set topology.link_rate=400Gbps");
  cmd->add_option("--progress-interval", args->progress_interval,
                  "Seconds between progress lines (--quiet turns them off)")
      ->check(positive_seconds())
      ->capture_default_str();
  cmd->callback([&action, &global, args] {
    action = [&global, args](const core::Comm& world) {
      return run_simulation(world, *args, global);
    };
  });
}

}  // namespace shoal::cli
