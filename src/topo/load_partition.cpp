#include "shoal/topo/load_partition.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "shoal/core/error.hpp"
#include "shoal/topo/fabric_units.hpp"

namespace shoal::topo {

namespace {
/// The sum over ranks and slices of each rank's load squared: what placing
/// units by load keeps small (the time ranks spend waiting on one another).
double squared_load(const std::vector<double>& rank_load) {
  double sum = 0;
  for (const double load : rank_load) sum += load * load;
  return sum;
}

/// Unit u on rank u mod ranks.
std::vector<std::int32_t> dealt_in_turn(std::size_t units, std::size_t ranks) {
  std::vector<std::int32_t> unit_rank(units);
  for (std::size_t u = 0; u < units; ++u) unit_rank[u] = static_cast<std::int32_t>(u % ranks);
  return unit_rank;
}
}  // namespace

core::Partition partition_by_load(const Fabric& fabric, int ranks, const GpuLoad& load) {
  const std::size_t slices = load.slices;
  if (slices == 0 || load.load.size() != std::size_t{fabric.gpu_count()} * slices) {
    throw Error("internal: a weighted partition's load is not one row of slices per GPU");
  }
  // Units: a leaf with its servers (nic_units), not each server and leaf
  // apart. Servers that work in step (an EP group's) then share a rank, which
  // balances each window a little less evenly; but a flow's cells and bytes
  // stay on its GPUs' ranks, so few events cross ranks and each rank holds
  // only the flows its GPUs send or receive, not also those its leaves count.
  const FabricUnits units = nic_units(fabric, ranks);
  // By GPU: the units its load counts in, its server's and then its NIC
  // switches' where those are apart (each counted once).
  std::vector<std::int64_t> gpu_units;
  std::vector<std::size_t> gpu_unit_begin(std::size_t{fabric.gpu_count()} + 1, 0);
  const std::uint32_t per_server = fabric.gpus_per_server();
  for (GpuId g = 0; g < fabric.gpu_count(); ++g) {
    const std::size_t begin = gpu_units.size();
    gpu_units.push_back(units.server_unit[g / per_server]);
    for (const LinkId l : fabric.nic_links(g)) {
      const std::int64_t unit = units.switch_unit[fabric.link(l).to];
      if (unit >= 0 && std::find(gpu_units.begin() + static_cast<std::ptrdiff_t>(begin),
                                 gpu_units.end(), unit) == gpu_units.end()) {
        gpu_units.push_back(unit);
      }
    }
    gpu_unit_begin[std::size_t{g} + 1] = gpu_units.size();
  }
  const auto unit_count = static_cast<std::size_t>(units.count);
  // Each unit's load, slice by slice: its GPUs' (a switch: the GPUs it serves).
  std::vector<std::uint64_t> unit_load(unit_count * slices, 0);
  for (GpuId g = 0; g < fabric.gpu_count(); ++g) {
    for (std::size_t i = gpu_unit_begin[g]; i < gpu_unit_begin[std::size_t{g} + 1]; ++i) {
      const auto unit = static_cast<std::size_t>(gpu_units[i]);
      for (std::size_t s = 0; s < slices; ++s) {
        unit_load[unit * slices + s] += load.load[std::size_t{g} * slices + s];
      }
    }
  }
  std::vector<std::uint64_t> unit_total(unit_count, 0);
  for (std::size_t u = 0; u < unit_count; ++u) {
    for (std::size_t s = 0; s < slices; ++s) unit_total[u] += unit_load[u * slices + s];
  }
  std::vector<std::size_t> order(unit_count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return unit_total[a] > unit_total[b]; });

  const auto rank_count = static_cast<std::size_t>(ranks);
  // Loads in doubles: products of two sums of cells can pass 2^64.
  std::vector<double> rank_load(rank_count * slices, 0.0);
  std::vector<std::uint64_t> rank_total(rank_count, 0);
  std::vector<std::uint32_t> rank_units(rank_count, 0);
  std::vector<std::int32_t> unit_rank(unit_count, 0);
  for (const std::size_t u : order) {
    std::size_t best = 0;
    double best_overlap = 0;
    for (std::size_t r = 0; r < rank_count; ++r) {
      double overlap = 0;
      for (std::size_t s = 0; s < slices; ++s) {
        overlap += static_cast<double>(unit_load[u * slices + s]) * rank_load[r * slices + s];
      }
      const bool better =
          r == 0 || overlap < best_overlap ||
          (overlap == best_overlap &&
           (rank_total[r] < rank_total[best] ||
            (rank_total[r] == rank_total[best] && rank_units[r] < rank_units[best])));
      if (better) {
        best = r;
        best_overlap = overlap;
      }
    }
    unit_rank[u] = static_cast<std::int32_t>(best);
    for (std::size_t s = 0; s < slices; ++s) {
      rank_load[best * slices + s] += static_cast<double>(unit_load[u * slices + s]);
    }
    rank_total[best] += unit_total[u];
    ++rank_units[best];
  }
  // The units dealt in turn, as the pilot ran, where they balance no worse:
  // then the pilot's fragments serve the run (no second read of the config).
  std::vector<std::int32_t> turn_rank = dealt_in_turn(unit_count, rank_count);
  std::vector<double> turn_load(rank_count * slices, 0.0);
  for (std::size_t u = 0; u < unit_count; ++u) {
    const auto r = static_cast<std::size_t>(turn_rank[u]);
    for (std::size_t s = 0; s < slices; ++s) {
      turn_load[r * slices + s] += static_cast<double>(unit_load[u * slices + s]);
    }
  }
  if (squared_load(turn_load) <= squared_load(rank_load)) unit_rank = std::move(turn_rank);
  return place_units(fabric, units, ranks, unit_rank, "weighted");
}

core::Partition units_in_turn(const Fabric& fabric, int ranks) {
  const FabricUnits units = nic_units(fabric, ranks);
  return place_units(
      fabric, units, ranks,
      dealt_in_turn(static_cast<std::size_t>(units.count), static_cast<std::size_t>(ranks)),
      "units in turn");
}

}  // namespace shoal::topo
