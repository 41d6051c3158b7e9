#include "shoal/work/case_ii_panel.hpp"

#include <array>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::work {

void add_case_ii_panel(const CaseIiPanel& panel, Dag& dag) {
  if (panel.ep_bytes <= 0 || panel.pp_bytes <= 0 || panel.dp_bytes <= 0) {
    throw Error("case-ii panel: ep_bytes, pp_bytes and dp_bytes must be positive");
  }
  if (panel.compute < 0) throw Error("case-ii panel: compute must not be negative");
  if (panel.layer < 1) throw Error("case-ii panel: layer (n) must be at least 1");
  auto one_flow = [&](Bytes bytes) {
    return std::array<Flow, 1>{Flow{panel.sender, panel.receiver, bytes}};
  };
  auto labels = [&](CoflowType type, std::uint32_t micro_batch, std::uint32_t layer) {
    CoflowLabels l;
    l.type = type;
    l.micro_batch = micro_batch;
    l.layer = layer;
    return l;
  };
  const std::uint32_t n = panel.layer;
  for (std::uint32_t mb = 0; mb < 2; ++mb) {
    const std::string suffix = "mb" + std::to_string(mb + 1);
    dag.add_coflow("ep-" + suffix, labels(CoflowType::kEp, mb, n), 0, one_flow(panel.ep_bytes), {});
    dag.add_coflow("pp-" + suffix, labels(CoflowType::kPp, mb, n), 0, one_flow(panel.pp_bytes),
                   {"ep-" + suffix});
  }
  dag.add_coflow("dp-layer-n", labels(CoflowType::kDp, 1, n), 0, one_flow(panel.dp_bytes), {});
  dag.add_coflow("dp-layer-n-1", labels(CoflowType::kDp, 1, n - 1), 0, one_flow(panel.dp_bytes),
                 {});
  dag.add_task("compute-mb1", panel.receiver, panel.compute, {"pp-mb1"});
  dag.add_task("compute-mb2", panel.receiver, panel.compute, {"pp-mb2", "compute-mb1"});
  dag.resolve();
}

}  // namespace shoal::work
