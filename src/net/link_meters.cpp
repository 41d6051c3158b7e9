#include "shoal/net/link_meters.hpp"

#include <algorithm>

namespace shoal::net {

using topo::LinkId;

LinkMeters::LinkMeters(const topo::Fabric& fabric, const NetworkOptions& options,
                       const std::function<bool(LinkId)>& sends_here,
                       const std::vector<BitsPerSecond>& perturbed_rate) {
  if (!options.record) return;
  tallies_ = core::SparseArray<LinkTally>(fabric.link_count());
  busy_time_ = core::SparseArray<std::uint64_t>(fabric.link_count());
  sent_here_.assign(fabric.link_count(), false);
  for (LinkId l = 0; l < fabric.link_count(); ++l) {
    if (!sends_here(l)) continue;
    sent_here_[l] = true;
    tallies_.construct(l);
    busy_time_.construct(l);
  }
  binning_ = options.link_util_bin > 0 && options.link_util_top > 0;
  if (!binning_) return;
  // A column per link sent on here; the counters' width from the most any of
  // them can carry in a bin.
  std::vector<std::uint32_t> column_of(fabric.link_count(), LinkBins::kNoColumn);
  std::uint32_t columns = 0;
  BitsPerSecond fastest = 0;
  for (LinkId l = 0; l < fabric.link_count(); ++l) {
    if (!sends_here(l)) continue;
    column_of[l] = columns++;
    fastest = std::max({fastest, fabric.link(l).rate, perturbed_rate[l]});
  }
  bins_ = LinkBins(std::move(column_of), columns, options.link_util_bin,
                   bin_bytes(fastest, options), max_rows(fabric, options));
  if (!options.link_util_scratch.empty()) {
    bins_.spill_to(core::ScratchFile(options.link_util_scratch, "/link_util"));
  }
}

std::uint64_t LinkMeters::bin_bytes(BitsPerSecond fastest, const NetworkOptions& options) {
  // Cells back to back fill a bin to the line rate; a cell's slack on top keeps
  // the bound safe whatever the rounding.
  const long double most =
      static_cast<long double>(fastest) * static_cast<long double>(options.link_util_bin) / 8e12L +
      static_cast<long double>(options.cell_size);
  return most >= 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(most);
}

std::uint64_t LinkMeters::max_rows(const topo::Fabric& fabric, const NetworkOptions& options) {
  // From the whole fabric's links, not a rank's: the same on every rank, so
  // the bins widen at the same simulated time on any partition.
  return options.link_util_memory /
         (std::uint64_t{4} * std::max<std::uint64_t>(fabric.link_count(), 1));
}

std::uint64_t LinkMeters::all_bin_bytes(const topo::Fabric& fabric, const NetworkOptions& options,
                                        std::span<const LinkPerturbation> perturbations,
                                        std::uint64_t links, Time end) {
  const std::uint64_t rows_cap = std::max(max_rows(fabric, options), LinkBins::kMinRows);
  return LinkBins::estimate_bytes(links, options.link_util_bin,
                                  most_per_bin(fabric, options, perturbations), rows_cap, end);
}

std::uint64_t LinkMeters::most_per_bin(const topo::Fabric& fabric, const NetworkOptions& options,
                                       std::span<const LinkPerturbation> perturbations) {
  BitsPerSecond fastest = 0;
  for (LinkId l = 0; l < fabric.link_count(); ++l) fastest = std::max(fastest, fabric.link(l).rate);
  for (const LinkPerturbation& p : perturbations) fastest = std::max(fastest, p.rate);
  return bin_bytes(fastest, options);
}

std::uint64_t LinkMeters::estimate_bin_bytes(const topo::Fabric& fabric,
                                             const NetworkOptions& options,
                                             std::span<const LinkPerturbation> perturbations,
                                             std::uint64_t links_here, Time end) {
  if (!options.record || options.link_util_bin <= 0 || options.link_util_top == 0) return 0;
  const std::uint64_t bins = options.link_util_scratch.empty()
                                 ? all_bin_bytes(fabric, options, perturbations, links_here, end)
                                 : LinkBins::estimate_settled_bytes(
                                       links_here, most_per_bin(fabric, options, perturbations));
  // At the end, the busiest links' bins in 64-bit counters: this rank's, and
  // rank 0's sum of all ranks'.
  const std::uint64_t rows_cap = std::max(max_rows(fabric, options), LinkBins::kMinRows);
  const std::uint64_t rows =
      end == kTimeInfinity
          ? rows_cap
          : std::min(rows_cap, static_cast<std::uint64_t>(end / options.link_util_bin) + 2);
  const std::uint64_t top = std::min<std::uint64_t>(options.link_util_top, fabric.link_count());
  return bins + 2 * top * rows * sizeof(std::uint64_t);
}

std::uint64_t LinkMeters::estimate_scratch_bytes(const topo::Fabric& fabric,
                                                 const NetworkOptions& options,
                                                 std::span<const LinkPerturbation> perturbations,
                                                 Time end) {
  if (!options.record || options.link_util_bin <= 0 || options.link_util_top == 0 ||
      options.link_util_scratch.empty()) {
    return 0;
  }
  return all_bin_bytes(fabric, options, perturbations, fabric.link_count(), end);
}

}  // namespace shoal::net
