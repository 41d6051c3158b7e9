#include "shoal/core/partition.hpp"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <istream>
#include <ostream>
#include <sstream>

#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"

namespace shoal::core {
namespace {

constexpr std::string_view kMagic = "shoal-partition 1";

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

void require_filled(const std::vector<std::int64_t>& per_rank, const std::string& where) {
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    if (per_rank[r] == 0) {
      throw Error(where + ": rank " + std::to_string(r) + " owns no entity (" +
                  std::to_string(per_rank.size()) + " ranks); use fewer ranks or more atoms");
    }
  }
}

}  // namespace

Strategy parse_strategy(std::string_view name) {
  if (name == "block") return Strategy::kBlock;
  if (name == "round-robin") return Strategy::kRoundRobin;
  throw Error("unknown partition strategy \"" + std::string(name) +
              "\" (use block or round-robin)");
}

std::string_view strategy_name(Strategy s) {
  return s == Strategy::kBlock ? "block" : "round-robin";
}

Partition::Partition(int ranks, std::vector<std::int32_t> atom_rank, std::string description)
    : ranks_(ranks), atom_rank_(std::move(atom_rank)), description_(std::move(description)) {}

Partition Partition::from_strategy(const Layout& layout, int ranks, Strategy strategy) {
  if (ranks < 1) throw Error("partition: rank count must be at least 1");
  const std::size_t atoms = layout.atom_count();
  if (atoms < static_cast<std::size_t>(ranks)) {
    throw Error("partition of '" + layout.topology() + "': " + std::to_string(atoms) +
                " atoms cannot fill " + std::to_string(ranks) +
                " ranks (every rank needs at least one)");
  }
  std::vector<std::int32_t> atom_rank(atoms);
  if (strategy == Strategy::kRoundRobin) {
    for (std::size_t a = 0; a < atoms; ++a) atom_rank[a] = static_cast<std::int32_t>(a % ranks);
  } else {
    // Atom a goes to the rank whose share of the entity range holds its midpoint,
    // clamped so that ranks rise by at most one per atom (no rank skipped) and stay
    // high enough for the remaining atoms to reach the last rank (none left empty).
    const auto total = static_cast<std::int64_t>(layout.entity_count());
    const auto atom_total = static_cast<std::int64_t>(atoms);
    std::int64_t previous = 0;
    for (std::size_t a = 0; a < atoms; ++a) {
      const auto id = static_cast<AtomId>(a);
      const std::int64_t mid = (std::int64_t{layout.atom_begin(id)} + layout.atom_end(id)) / 2;
      const std::int64_t wanted = mid * ranks / total;
      const auto index = static_cast<std::int64_t>(a);
      const std::int64_t low = std::max(previous, ranks - (atom_total - index));
      const std::int64_t high = a == 0 ? 0 : previous + 1;
      previous = std::clamp(wanted, low, high);
      atom_rank[a] = static_cast<std::int32_t>(previous);
    }
  }
  Partition p(ranks, std::move(atom_rank), std::string(strategy_name(strategy)));
  require_filled(p.entities_per_rank(layout), "partition of '" + layout.topology() + "'");
  return p;
}

Partition Partition::from_atom_ranks(const Layout& layout, int ranks,
                                     std::vector<std::int32_t> atom_rank, std::string description) {
  if (atom_rank.size() != layout.atom_count()) {
    throw Error("partition " + description + ": " + std::to_string(atom_rank.size()) +
                " atoms assigned, the layout has " + std::to_string(layout.atom_count()));
  }
  for (std::size_t a = 0; a < atom_rank.size(); ++a) {
    if (atom_rank[a] < 0 || atom_rank[a] >= ranks) {
      throw Error("partition " + description + ": " + layout.atom_name(static_cast<AtomId>(a)) +
                  " on rank " + std::to_string(atom_rank[a]) + ", outside 0.." +
                  std::to_string(ranks - 1));
    }
  }
  Partition p(ranks, std::move(atom_rank), description);
  require_filled(p.entities_per_rank(layout), "partition " + description);
  return p;
}

Partition Partition::from_file(const std::string& path, const Layout& layout, int ranks) {
  require_input_file(path, "partition file");
  std::ifstream in(path);
  if (!in) throw Error("partition file " + path + ": cannot be opened");
  return parse(in, path, layout, ranks);
}

Partition Partition::parse(std::istream& in, const std::string& source, const Layout& layout,
                           int ranks) {
  std::string line;
  int line_no = 0;
  auto fail = [&](const std::string& what) -> Error {
    return Error("partition file " + source + ", line " + std::to_string(line_no) + ": " + what);
  };
  // Reads the next line that is not blank or a comment; false at end of file.
  auto next_line = [&]() {
    while (std::getline(in, line)) {
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const auto first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] == '#') continue;
      line = line.substr(first);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
      return true;
    }
    return false;
  };
  auto header = [&](std::string_view key) -> std::string {
    if (!next_line()) throw fail("ends before the '" + std::string(key) + "' line");
    if (line.rfind(std::string(key) + " ", 0) != 0) {
      throw fail("expected '" + std::string(key) + " ...', found '" + line + "'");
    }
    return line.substr(key.size() + 1);
  };
  auto parse_u64 = [&](std::string_view text, std::string_view what) {
    std::uint64_t v = 0;
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
      text.remove_prefix(2);
      base = 16;
    }
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
    if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
      throw fail(std::string(what) + " '" + std::string(text) + "' is not a non-negative integer");
    }
    return v;
  };

  if (!next_line()) throw fail("empty file; expected '" + std::string(kMagic) + "'");
  if (line != kMagic)
    throw fail("not a Shoal partition file (first line must be '" + std::string(kMagic) + "')");
  const std::string topology = header("topology");
  if (topology != layout.topology()) {
    throw fail("made for topology '" + topology + "', but this run is '" + layout.topology() + "'");
  }
  const std::uint64_t fingerprint = parse_u64(header("fingerprint"), "fingerprint");
  if (fingerprint != layout.fingerprint()) {
    throw fail("fingerprint " + hex(fingerprint) + " does not match this topology's " +
               hex(layout.fingerprint()) + " (the file is for another build of it)");
  }
  const std::uint64_t entities = parse_u64(header("entities"), "entity count");
  if (entities != layout.entity_count()) {
    throw fail("made for " + std::to_string(entities) + " entities, this topology has " +
               std::to_string(layout.entity_count()));
  }
  const std::uint64_t file_ranks = parse_u64(header("ranks"), "rank count");
  if (file_ranks != static_cast<std::uint64_t>(ranks)) {
    throw fail("made for " + std::to_string(file_ranks) + " ranks, this run has " +
               std::to_string(ranks));
  }

  std::vector<std::int32_t> atom_rank(layout.atom_count(), -1);
  std::uint64_t next_entity = 0;
  while (next_line()) {
    std::istringstream fields(line);
    std::string first_s, last_s, rank_s, extra;
    if (!(fields >> first_s >> last_s >> rank_s) || (fields >> extra)) {
      throw fail("expected 'FIRST LAST RANK', found '" + line + "'");
    }
    const std::uint64_t first = parse_u64(first_s, "first entity");
    const std::uint64_t last = parse_u64(last_s, "last entity");
    const std::uint64_t rank = parse_u64(rank_s, "rank");
    if (first != next_entity) {
      throw fail("range starts at entity " + std::to_string(first) + ", expected " +
                 std::to_string(next_entity) + " (ranges must be sorted, contiguous, no overlap)");
    }
    if (last < first) throw fail("range " + first_s + ".." + last_s + " is empty");
    if (last >= entities) {
      throw fail("entity " + std::to_string(last) + " is outside the topology (0.." +
                 std::to_string(entities - 1) + ")");
    }
    if (rank >= file_ranks) {
      throw fail("rank " + std::to_string(rank) + " is outside 0.." +
                 std::to_string(file_ranks - 1));
    }
    const AtomId first_atom = layout.atom_of(static_cast<EntityId>(first));
    const AtomId last_atom = layout.atom_of(static_cast<EntityId>(last));
    if (layout.atom_begin(first_atom) != first) {
      throw fail("entity " + std::to_string(first) + " splits " + layout.atom_name(first_atom) +
                 " (entities " + std::to_string(layout.atom_begin(first_atom)) + ".." +
                 std::to_string(layout.atom_end(first_atom) - 1) + " must share a rank)");
    }
    if (layout.atom_end(last_atom) != last + 1) {
      throw fail("entity " + std::to_string(last) + " splits " + layout.atom_name(last_atom) +
                 " (entities " + std::to_string(layout.atom_begin(last_atom)) + ".." +
                 std::to_string(layout.atom_end(last_atom) - 1) + " must share a rank)");
    }
    for (AtomId a = first_atom; a <= last_atom; ++a) atom_rank[a] = static_cast<std::int32_t>(rank);
    next_entity = last + 1;
  }
  if (next_entity != entities) {
    throw fail("entities " + std::to_string(next_entity) + ".." + std::to_string(entities - 1) +
               " have no rank");
  }
  Partition p(ranks, std::move(atom_rank), "file " + source);
  require_filled(p.entities_per_rank(layout), "partition file " + source);
  return p;
}

void Partition::write_file(const std::string& path, const Layout& layout) const {
  core::write_file(path, "partition file", [&](std::ostream& out) { write(out, layout); });
}

void Partition::write(std::ostream& out, const Layout& layout) const {
  out << "# Shoal partition: entity ranges (inclusive) and the rank that owns them.\n"
      << "# Format: docs/partitions.md. Ranges never split an atom.\n"
      << kMagic << "\n"
      << "topology " << layout.topology() << "\n"
      << "fingerprint " << hex(layout.fingerprint()) << "\n"
      << "entities " << layout.entity_count() << "\n"
      << "ranks " << ranks_ << "\n";
  std::size_t a = 0;
  while (a < atom_rank_.size()) {
    std::size_t b = a;
    while (b + 1 < atom_rank_.size() && atom_rank_[b + 1] == atom_rank_[a]) ++b;
    out << layout.atom_begin(static_cast<AtomId>(a)) << " "
        << layout.atom_end(static_cast<AtomId>(b)) - 1 << " " << atom_rank_[a] << "\n";
    a = b + 1;
  }
}

std::vector<std::int32_t> Partition::entity_ranks(const Layout& layout) const {
  std::vector<std::int32_t> ranks(layout.entity_count());
  for (AtomId a = 0; a < layout.atom_count(); ++a) {
    for (EntityId e = layout.atom_begin(a); e < layout.atom_end(a); ++e) ranks[e] = atom_rank_[a];
  }
  return ranks;
}

std::vector<std::int64_t> Partition::entities_per_rank(const Layout& layout) const {
  std::vector<std::int64_t> count(static_cast<std::size_t>(ranks_), 0);
  for (AtomId a = 0; a < layout.atom_count(); ++a) {
    count[static_cast<std::size_t>(atom_rank_[a])] += layout.atom_end(a) - layout.atom_begin(a);
  }
  return count;
}

Time lookahead(const Layout& layout, const Partition& partition) {
  Time best = kTimeInfinity;
  for (const AtomLink& link : layout.links()) {
    if (partition.rank_of_atom(link.from) == partition.rank_of_atom(link.to)) continue;
    if (link.latency <= 0) {
      throw Error("link " + layout.atom_name(link.from) + " -> " + layout.atom_name(link.to) +
                  " crosses ranks " + std::to_string(partition.rank_of_atom(link.from)) + " and " +
                  std::to_string(partition.rank_of_atom(link.to)) + " with latency " +
                  format_time(link.latency) +
                  "; a cut link needs latency > 0 (it is the lookahead)");
    }
    if (link.latency < best) best = link.latency;
  }
  return best;
}

}  // namespace shoal::core
