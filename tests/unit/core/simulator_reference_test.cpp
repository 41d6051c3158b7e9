// The engine on one rank (Comm::self()) against a straightforward serial reference
// engine: the same events in the same order for a PHOLD-like random model.
#include "shoal/core/simulator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "shoal/core/event.hpp"
#include "shoal/core/random.hpp"
#include "shoal/core/units.hpp"
#include "simulator_test_support.hpp"

namespace shoal::core {
namespace {

using namespace simulator_test;

/// A serial reference engine: one ordered set, the same key, the same send rules.
class ReferenceSim {
 public:
  ReferenceSim(EntityId entities, std::uint64_t seed, Time end_time)
      : sequence_(entities, 0), end_time_(end_time) {
    for (EntityId e = 0; e < entities; ++e) rngs_.emplace_back(seed, e);
  }
  Time now() const { return now_; }
  EntityId current() const { return current_; }
  Rng& rng() { return rngs_[current_]; }
  void send(EntityId target, Time delay, std::uint32_t tag, std::uint64_t payload) {
    enqueue(current_, target, saturating_add(now_, delay), tag, payload);
  }
  void schedule_initial(EntityId source, EntityId target, Time time, std::uint32_t tag,
                        std::uint64_t payload) {
    enqueue(source, target, time, tag, payload);
  }
  template <class Model>
  std::int64_t run(Model& model) {
    std::int64_t events = 0;
    while (!pending_.empty()) {
      const Event e = *pending_.begin();
      pending_.erase(pending_.begin());
      now_ = e.time;
      current_ = e.target;
      model.handle(e, *this);
      ++events;
    }
    return events;
  }

 private:
  struct Before {
    bool operator()(const Event& a, const Event& b) const { return before(a, b); }
  };
  void enqueue(EntityId source, EntityId target, Time time, std::uint32_t tag,
               std::uint64_t payload) {
    const Event e{time, make_tiebreak(source, sequence_[source]++), target, tag, payload};
    if (time < end_time_) pending_.insert(e);
  }
  std::vector<Rng> rngs_;
  std::vector<std::uint64_t> sequence_;
  std::set<Event, Before> pending_;
  Time end_time_;
  Time now_ = 0;
  EntityId current_ = 0;
};

/// PHOLD-like: each event sends zero, one or two events to random entities after
/// exponential delays (often 0 ps for a small mean), drawing from the entity's stream.
struct RandomModel {
  EntityId entities = 0;
  Time mean_delay = 0;
  std::vector<Handled> log;

  template <class Sim>
  void handle(const Event& e, Sim& sim) {
    log.push_back(seen(e));
    const std::uint64_t r = sim.rng().below(10);
    const int sends = r == 0 ? 0 : (r == 1 ? 2 : 1);
    for (int k = 0; k < sends; ++k) {
      const auto target = static_cast<EntityId>(sim.rng().below(entities));
      const Time delay = sim.rng().exponential(mean_delay);
      sim.send(target, delay, static_cast<std::uint32_t>(k), e.payload + 1);
    }
  }
};

TEST(Simulator, MatchesReferenceEngine) {
  struct Case {
    EntityId entities;
    Time mean_delay;
    Time end_time;
    std::uint64_t seed;
  };
  const Case cases[] = {
      {100, 1'000, 100'000, 1},  // ordinary
      {50, 2, 2'000, 2},         // many zero delays and exact ties
      {7, 500, 300'000, 3},      // few entities, many events each
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("seed " + std::to_string(c.seed));
    World w(c.entities, c.end_time, c.seed);
    Simulator sim(w.comm, w.layout, w.partition, w.options);
    ReferenceSim ref(c.entities, c.seed, c.end_time);
    Rng init(c.seed, 999'999);
    for (int i = 0; i < 200; ++i) {
      const auto source = static_cast<EntityId>(init.below(c.entities));
      const auto target = static_cast<EntityId>(init.below(c.entities));
      const auto time = static_cast<Time>(init.below(static_cast<std::uint64_t>(c.mean_delay)));
      sim.schedule_initial(source, target, time, 9, 0);
      ref.schedule_initial(source, target, time, 9, 0);
    }
    RandomModel model{c.entities, c.mean_delay, {}};
    RandomModel expected{c.entities, c.mean_delay, {}};
    const RunSummary s = sim.run(model);
    const std::int64_t ref_events = ref.run(expected);
    EXPECT_GT(ref_events, 5'000);
    EXPECT_EQ(s.events, ref_events);
    ASSERT_EQ(model.log.size(), expected.log.size());
    for (std::size_t i = 0; i < model.log.size(); ++i) {
      ASSERT_EQ(model.log[i], expected.log[i]) << "event " << i;
    }
  }
}

}  // namespace
}  // namespace shoal::core
