// A deliberately broken model for the fault tests: on the rank that owns entity
// 0 it sends to another rank sooner than the declared link latency. The engine
// must report it in one line and bring every rank down (no hang in a collective).
#include <cstdio>

#include "shoal/cli/guard.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/core/simulator.hpp"

namespace {

struct TooFast {
  shoal::core::EntityId last;
  void handle(const shoal::core::Event& ev, shoal::core::Simulator& sim) {
    if (ev.target == 0 && ev.time > 50'000) {
      sim.send(last, 1, 0, 0);  // breaks the contract: the link latency is 10 ns
    } else {
      sim.send(ev.target, 10'000, 0, 0);  // keeps every rank busy
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace shoal::core;
  MpiSession mpi(argc, argv);
  const Comm world = Comm::world();
  std::vector<EntityId> sizes(static_cast<std::size_t>(world.size()), 1);
  std::vector<std::string> names;
  for (int r = 0; r < world.size(); ++r) names.push_back("atom " + std::to_string(r));
  Layout layout("fault-probe", sizes, names);
  for (AtomId a = 0; a + 1 < sizes.size(); ++a) {
    layout.add_link(a, a + 1, 10'000);
    layout.add_link(a + 1, a, 10'000);
  }
  const Partition partition = Partition::from_strategy(layout, world.size(), Strategy::kBlock);
  EngineOptions options;
  options.progress = false;
  options.end_time = 1'000'000'000;
  Simulator sim(world, layout, partition, options);
  TooFast model{layout.entity_count() - 1};
  for (EntityId e = 0; e < layout.entity_count(); ++e) {
    if (sim.owns(e)) sim.schedule_initial(e, e, 0, 0, 0);
  }
  return shoal::cli::run_or_abort(world, [&] {
    sim.run(model);
    return 0;
  });
}
