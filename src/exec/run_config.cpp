#include <filesystem>

#include "shoal/core/error.hpp"
#include "shoal/exec/run_setup.hpp"
#include "shoal/net/network.hpp"

namespace shoal::exec {

Perturbations read_perturbations(config::ConfigFile& config, const topo::Fabric& fabric) {
  const std::string prefix = "config " + config.path() + ": ";
  Perturbations perturbations;
  const std::size_t entries = config.entries("perturbation");
  for (std::size_t i = 0; i < entries; ++i) {
    const std::string entry = "perturbation[" + std::to_string(i) + "]";
    const std::string where = prefix + entry + ": ";
    const Time at = config.time(entry, "at").value_or(0);
    const auto link = config.string(entry, "link");
    const auto gpu = config.integer(entry, "gpu");
    if (link.has_value() == gpu.has_value()) {
      throw Error(where + "give either link = \"FROM -> TO\" or gpu = N");
    }
    if (gpu) {
      if (*gpu < 0 || *gpu >= fabric.gpu_count()) {
        throw Error(where + "gpu " + std::to_string(*gpu) + " is outside the fabric");
      }
      const double slowdown = config.number(entry, "slowdown").value_or(1.0);
      if (!(slowdown > 0)) throw Error(where + "slowdown must be positive");
      perturbations.gpus.push_back({static_cast<work::GpuId>(*gpu), at, slowdown});
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
      from = fabric.find_node(trim(link->substr(0, arrow)));
      to = fabric.find_node(trim(link->substr(arrow + 2)));
    } catch (const Error& e) {
      throw Error(where + e.what());
    }
    const topo::LinkId forward = fabric.find_link(from, to);
    if (forward == topo::kNoLink) throw Error(where + "no link " + *link + " in this fabric");
    net::LinkPerturbation p{forward, at, config.rate(entry, "rate").value_or(0),
                            config.time(entry, "extra_latency").value_or(0),
                            config.boolean(entry, "fail").value_or(false)};
    if (p.fail && (p.rate != 0 || p.extra_latency != 0)) {
      throw Error(where + "a failed link (fail = true) takes no rate or extra_latency");
    }
    perturbations.links.push_back(p);
    if (!config.boolean(entry, "one_way").value_or(false)) {
      p.link = fabric.link(forward).reverse;
      perturbations.links.push_back(p);
    }
  }
  return perturbations;
}

Error milestone_not_found(const Milestone& m) {
  return Error(m.entry + ".at: no task or coflow named \"" + m.at.substr(0, m.at.rfind('.')) +
               "\" in the workload");
}

std::vector<Milestone> read_milestones(config::ConfigFile& config, const work::Dag& dag) {
  const std::string prefix = "config " + config.path() + ": ";
  std::vector<Milestone> milestones;
  const std::size_t entries = config.entries("milestone");
  for (std::size_t i = 0; i < entries; ++i) {
    const std::string entry = "milestone[" + std::to_string(i) + "]";
    Milestone m{config.string(entry, "label").value_or(""), config.string(entry, "at").value_or(""),
                std::nullopt, prefix + entry};
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
      m.node = dag.find(m.at.substr(0, dot));
      // Another rank's task may be unnamed here: the ranks find it together.
      if (!m.node && !dag.has_unnamed_nodes()) throw milestone_not_found(m);
    }
    milestones.push_back(m);
  }
  return milestones;
}

std::uint64_t read_memory_limit(config::ConfigFile& config) {
  const auto limit = config.bytes("run", "memory_limit");
  if (!limit) return 0;
  if (*limit <= 0) throw Error("config " + config.path() + ": run.memory_limit must be positive");
  return static_cast<std::uint64_t>(*limit);
}

std::string read_run_table(config::ConfigFile& config, const topo::Fabric& fabric,
                           const net::NetworkOptions& network, core::EngineOptions& engine) {
  const std::string prefix = "config " + config.path() + ": ";
  constexpr std::string_view r = "run";
  engine.seed = static_cast<std::uint64_t>(config.integer(r, "seed").value_or(1));
  engine.end_time = config.time(r, "end").value_or(kTimeInfinity);
  if (engine.end_time <= 0) throw Error(prefix + "run.end must be positive (or absent: no end)");
  // The same run in either order (core::EventOrder); "auto" picks the one
  // that is faster for the fabric and cell size (Network::event_order_for).
  const std::string order = config.string(r, "event_order").value_or("auto");
  if (order == "auto") {
    engine.order = net::Network::event_order_for(fabric, network);
  } else if (order == "atom" && network.instant) {
    throw Error(prefix +
                "run.event_order = \"atom\" cannot run network.model = \"instant\" "
                "(its deliveries cross atoms at once)");
  } else if (order == "atom" || order == "time") {
    engine.order = order == "atom" ? core::EventOrder::kAtom : core::EventOrder::kTime;
  } else {
    throw Error(prefix + "run.event_order must be \"auto\", \"atom\" or \"time\"");
  }
  const std::string strategy = config.string(r, "partition").value_or("topology");
  return strategy;
}

}  // namespace shoal::exec
