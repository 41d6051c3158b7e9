// A fragment of a 4-GPU DAG that owns GPUs 0 and 1 and keeps their flows:
// the other rank's fragment, for the tests of what a fragment drops.
#pragma once

#include "shoal/work/dag.hpp"

namespace shoal::work::test {

inline DagFragment owning_first_two() {
  DagFragment f;
  f.owns = {true, true, false, false};
  f.keep = [](const Flow& flow) { return flow.src < 2 || flow.dst < 2; };
  f.gpus = 4;
  return f;
}

}  // namespace shoal::work::test
