#include "shoal/net/rank_share.hpp"

namespace shoal::net {

RankShare RankShare::whole(const topo::Fabric& fabric, const work::Dag& dag) {
  return {dag.flow_count(), fabric.link_count(), fabric.gpu_count()};
}

RankShare RankShare::of(const topo::Fabric& fabric, const work::Dag& dag,
                        std::span<const std::int32_t> owner, int rank) {
  RankShare share;
  for (const work::Coflow& c : dag.coflows()) {
    for (const work::Flow& f : dag.flows_of(c)) {
      share.flows_sent += owner[fabric.gpu_node(f.src)] == rank;
    }
  }
  for (topo::LinkId l = 0; l < fabric.link_count(); ++l) {
    share.links += owner[fabric.link(l).from] == rank;
  }
  for (work::GpuId g = 0; g < fabric.gpu_count(); ++g) {
    share.gpus += owner[fabric.gpu_node(g)] == rank;
  }
  return share;
}

}  // namespace shoal::net
