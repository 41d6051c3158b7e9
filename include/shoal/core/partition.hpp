// Which rank owns each entity. Made by a strategy over atoms or read from a
// partition file (format in docs/partitions.md); never splits an atom.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/core/layout.hpp"

namespace shoal::core {

enum class Strategy { kBlock, kRoundRobin };

/// "block" or "round-robin"; anything else is an Error listing the choices.
Strategy parse_strategy(std::string_view name);
std::string_view strategy_name(Strategy s);

class Partition {
 public:
  /// block: contiguous runs of atoms, balanced by entity count.
  /// round-robin: atom i on rank i mod ranks.
  static Partition from_strategy(const Layout& layout, int ranks, Strategy strategy);
  /// Reads and validates a file against the layout and the run's rank count.
  static Partition from_file(const std::string& path, const Layout& layout, int ranks);
  static Partition parse(std::istream& in, const std::string& source, const Layout& layout,
                         int ranks);
  /// An assignment computed elsewhere (a topology-aware strategy); checked like a file.
  static Partition from_atom_ranks(const Layout& layout, int ranks,
                                   std::vector<std::int32_t> atom_rank, std::string description);

  void write(std::ostream& out, const Layout& layout) const;
  /// write() to `path` ("-": standard output); an Error names the file if it
  /// cannot be written.
  void write_file(const std::string& path, const Layout& layout) const;

  int ranks() const { return ranks_; }
  int rank_of_atom(AtomId a) const { return atom_rank_[a]; }
  /// Dense entity -> rank table for the send path.
  std::vector<std::int32_t> entity_ranks(const Layout& layout) const;
  /// Number of entities each rank owns.
  std::vector<std::int64_t> entities_per_rank(const Layout& layout) const;
  const std::string& description() const { return description_; }
  /// Whether it puts every atom on the same rank as `other` (whatever either's description).
  bool places_as(const Partition& other) const {
    return ranks_ == other.ranks_ && atom_rank_ == other.atom_rank_;
  }

 private:
  Partition(int ranks, std::vector<std::int32_t> atom_rank, std::string description);
  int ranks_ = 1;
  std::vector<std::int32_t> atom_rank_;
  std::string description_;
};

/// The conservative lookahead: the smallest latency of a link whose ends lie on
/// different ranks, or kTimeInfinity when no link is cut. A cut link with zero or
/// negative latency is an Error naming it.
Time lookahead(const Layout& layout, const Partition& partition);

}  // namespace shoal::core
