// What the engine's one-rank tests share: a one-rank world of single-entity
// atoms and a model that records every event it handles.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/simulator.hpp"

namespace shoal::core::simulator_test {

inline bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

/// One handled event as the model saw it.
struct Handled {
  EntityId target = 0;
  Time time = 0;
  EntityId source = 0;
  std::uint64_t sequence = 0;
  std::uint32_t tag = 0;
  std::uint64_t payload = 0;
  bool operator==(const Handled&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const Handled& h) {
  return os << "{target " << h.target << ", time " << h.time << ", source " << h.source << ", seq "
            << h.sequence << ", tag " << h.tag << ", payload " << h.payload << "}";
}

inline Handled seen(const Event& e) {
  return {e.target, e.time, e.source(), e.sequence(), e.tag, e.payload};
}

/// Records every event; `react` (if set) is the model's behaviour.
struct Recorder {
  std::vector<Handled> log;
  std::function<void(const Event&, Simulator&)> react;

  void handle(const Event& e, Simulator& sim) {
    log.push_back(seen(e));
    EXPECT_EQ(sim.now(), e.time);
    EXPECT_EQ(sim.current(), e.target);
    if (react) react(e, sim);
  }
};

inline std::vector<std::string> names(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back("e" + std::to_string(i));
  return out;
}

/// A one-rank world of `entities` single-entity atoms.
struct World {
  explicit World(EntityId entities, Time end_time = kTimeInfinity, std::uint64_t seed = 1)
      : layout("sim-test", std::vector<EntityId>(entities, 1), names(entities)),
        partition(Partition::from_strategy(layout, 1, Strategy::kBlock)) {
    options.seed = seed;
    options.end_time = end_time;
    options.progress = false;
  }
  Comm comm = Comm::self();
  Layout layout;
  Partition partition;
  EngineOptions options;
};

}  // namespace shoal::core::simulator_test
