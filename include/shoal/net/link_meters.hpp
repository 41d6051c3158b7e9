// What the network counts about the links one rank sends on, for the output
// file (NetworkOptions::record): bytes by class, time busy serializing, and
// bytes per time bin of the busiest links (/link_util, net/link_bins.hpp).
// The recorder (exec/recorder.hpp) gathers them over the ranks at the end.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "shoal/core/prefetch.hpp"
#include "shoal/core/sparse_array.hpp"
#include "shoal/core/units.hpp"
#include "shoal/net/link_bins.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::net {

class LinkMeters {
 public:
  LinkMeters() = default;
  /// Off unless options.record. `sends_here`: whether this rank sends on a
  /// link; `fastest`: by link, the fastest rate it ever runs at (a column of
  /// bins is sized for it).
  LinkMeters(const topo::Fabric& fabric, const NetworkOptions& options,
             const std::function<bool(topo::LinkId)>& sends_here,
             const std::vector<BitsPerSecond>& perturbed_rate);

  bool on() const { return tallies_.size() > 0; }
  bool binning() const { return binning_; }

  /// A cell of `bytes` in class `cls` on `link`, serializing from `start` for `serialize`.
  [[gnu::always_inline]] void count(topo::LinkId link, int cls, Bytes bytes, Time start,
                                    Time serialize) {
    tallies_[link].bytes[static_cast<std::size_t>(cls)] += static_cast<std::uint64_t>(bytes);
    busy_time_[link] += static_cast<std::uint64_t>(serialize);
    if (binning_) bins_.add_spread(link, start, serialize, static_cast<std::uint64_t>(bytes));
  }
  void prefetch(topo::LinkId link) const {
    core::prefetch(&tallies_[link]);
    core::prefetch(&busy_time_[link]);
  }

  /// Bytes `link` carried in class `cls`, and its time busy: 0 on a link this
  /// rank does not send on, whose entry is never read (a read would map the page).
  std::uint64_t bytes(topo::LinkId link, int cls) const {
    return sent_here_[link] ? tallies_[link].bytes[static_cast<std::size_t>(cls)] : 0;
  }
  std::uint64_t busy(topo::LinkId link) const { return sent_here_[link] ? busy_time_[link] : 0; }
  LinkBins& bins() { return bins_; }
  /// Nothing is sent before `floor` from now on (LinkBins::settle).
  void settle(Time floor) {
    if (binning_) bins_.settle(floor);
  }

  /// The most bytes one link can add to one /link_util bin, at `fastest`.
  static std::uint64_t bin_bytes(BitsPerSecond fastest, const NetworkOptions& options);
  /// The /link_util row limit: past it the bins widen.
  static std::uint64_t max_rows(const topo::Fabric& fabric, const NetworkOptions& options);
  /// Bytes one rank's /link_util bins take in memory at most, the tables of
  /// the busiest links gathered at the end included (0 unless recording with
  /// bins): `links_here` is how many links the rank sends on, `end` the run's
  /// end time (kTimeInfinity: none; the bins then fill their cap,
  /// link_util_memory, in the rank's share). With a scratch folder
  /// (options.link_util_scratch), only the blocks not yet settled.
  static std::uint64_t estimate_bin_bytes(const topo::Fabric& fabric, const NetworkOptions& options,
                                          std::span<const LinkPerturbation> perturbations,
                                          std::uint64_t links_here, Time end);
  /// Bytes all ranks' /link_util bins write to their scratch files together
  /// (0 without a scratch folder), counted as estimate_bin_bytes counts memory.
  static std::uint64_t estimate_scratch_bytes(const topo::Fabric& fabric,
                                              const NetworkOptions& options,
                                              std::span<const LinkPerturbation> perturbations,
                                              Time end);
  /// Per link, what the counters take when recording.
  static constexpr std::uint64_t kBytesPerLink = 64 + sizeof(std::uint64_t);

 private:
  /// LinkBins::estimate_bytes for `links` links of this fabric.
  static std::uint64_t all_bin_bytes(const topo::Fabric& fabric, const NetworkOptions& options,
                                     std::span<const LinkPerturbation> perturbations,
                                     std::uint64_t links, Time end);
  /// The most one link can add to one bin, at the fastest rate any link runs at.
  static std::uint64_t most_per_bin(const topo::Fabric& fabric, const NetworkOptions& options,
                                    std::span<const LinkPerturbation> perturbations);

  /// One link's bytes by class, one cache line.
  struct alignas(64) LinkTally {
    std::array<std::uint64_t, kClasses> bytes{};
  };
  static_assert(sizeof(LinkTally) == 64);

  // By link, constructed for the links this rank sends on: a rank's pages,
  // not every link's counters on every rank.
  core::SparseArray<LinkTally> tallies_;
  core::SparseArray<std::uint64_t> busy_time_;  // time spent serializing
  std::vector<bool> sent_here_;                 // by link: its entries were constructed
  LinkBins bins_;                               // with link_util_bin > 0 and link_util_top > 0
  bool binning_ = false;
};

}  // namespace shoal::net
