// A model run under a window probe (`shoal scale`): the probe sees each event
// the model handles, with the time it took, and each window's end; everything else goes
// to the model as the engine would send it.
#pragma once

#include "shoal/core/simulator.hpp"
#include "shoal/core/window_probe.hpp"

namespace shoal::core {

template <class Model>
class ProbedModel {
 public:
  ProbedModel(Model& model, WindowProbe& probe) : model_(model), probe_(probe) {}

  void handle(const Event& ev, Simulator& sim) {
    const std::uint64_t start = WindowProbe::read_ticks();
    model_.handle(ev, sim);
    probe_.handled(ev, WindowProbe::read_ticks() - start);
  }
  bool take_arrival(const Event& ev, Simulator& sim) {
    if constexpr (requires { model_.take_arrival(ev, sim); }) return model_.take_arrival(ev, sim);
    return false;
  }
  void prefetch(const Event& ev) const {
    if constexpr (requires { model_.prefetch(ev); }) model_.prefetch(ev);
  }
  void prefetch_stage(const Event& ev, int stage) const {
    if constexpr (requires { model_.prefetch_stage(ev, stage); }) model_.prefetch_stage(ev, stage);
  }
  void after_sync(Simulator& sim) {
    probe_.end_window();
    if constexpr (requires { model_.after_sync(sim); }) model_.after_sync(sim);
  }
  void every_batch(Simulator& sim) {
    if constexpr (requires { model_.every_batch(sim); }) model_.every_batch(sim);
  }

 private:
  Model& model_;
  WindowProbe& probe_;
};

}  // namespace shoal::core
