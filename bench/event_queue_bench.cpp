// The hold model on the event queue: N events pending, each step pops the
// earliest and pushes one at its time + Exp(mean), the steady state of PHOLD.
// Compared with std::priority_queue (a binary heap) on the same events.
#include <benchmark/benchmark.h>

#include <queue>
#include <vector>

#include "shoal/core/event_queue.hpp"
#include "shoal/core/random.hpp"

namespace {

using shoal::core::Event;

constexpr shoal::Time kMean = 1'000'000;

struct Later {
  bool operator()(const Event& a, const Event& b) const { return shoal::core::before(b, a); }
};

template <class Queue, class Top, class Pop>
void hold(benchmark::State& state, Queue& queue, Top top, Pop pop) {
  const auto n = static_cast<std::size_t>(state.range(0));
  shoal::core::Rng rng(1, 0);
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    queue.push(Event{rng.exponential(kMean), seq++, static_cast<std::uint32_t>(i), 0, 0});
  }
  for (auto _ : state) {
    const Event e = top(queue);
    pop(queue);
    queue.push(Event{e.time + rng.exponential(kMean), seq++, e.target, 0, 0});
  }
  state.SetItemsProcessed(state.iterations());
}

void CalendarQueue(benchmark::State& state) {
  shoal::core::EventQueue q;
  hold(
      state, q, [](auto& x) { return x.top(); }, [](auto& x) { x.pop(); });
}

void BinaryHeap(benchmark::State& state) {
  std::priority_queue<Event, std::vector<Event>, Later> q;
  hold(
      state, q, [](auto& x) { return x.top(); }, [](auto& x) { x.pop(); });
}

BENCHMARK(CalendarQueue)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);
BENCHMARK(BinaryHeap)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

}  // namespace

BENCHMARK_MAIN();
