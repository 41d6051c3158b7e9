// Layouts, partition strategies, partition files and the lookahead they imply.
#include "shoal/core/partition.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/random.hpp"

namespace shoal::core {
namespace {

using shoal::test::error_of;

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

std::vector<std::string> names(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back("a" + std::to_string(i));
  return out;
}

/// Four atoms of three entities each: a0 = 0..2, a1 = 3..5, a2 = 6..8, a3 = 9..11.
Layout four_by_three() { return Layout("test", {3, 3, 3, 3}, names(4)); }

std::vector<std::int32_t> atom_ranks(const Partition& p, const Layout& layout) {
  std::vector<std::int32_t> out;
  for (AtomId a = 0; a < layout.atom_count(); ++a) out.push_back(p.rank_of_atom(a));
  return out;
}

// --- Layout ---

TEST(Layout, AtomBoundaries) {
  const Layout layout("t", {2, 5, 1}, {"x", "y", "z"});
  EXPECT_EQ(layout.topology(), "t");
  EXPECT_EQ(layout.entity_count(), 8u);
  EXPECT_EQ(layout.atom_count(), 3u);
  EXPECT_EQ(layout.atom_begin(0), 0u);
  EXPECT_EQ(layout.atom_end(0), 2u);
  EXPECT_EQ(layout.atom_begin(1), 2u);
  EXPECT_EQ(layout.atom_end(1), 7u);
  EXPECT_EQ(layout.atom_begin(2), 7u);
  EXPECT_EQ(layout.atom_end(2), 8u);
  const AtomId expected[] = {0, 0, 1, 1, 1, 1, 1, 2};
  for (EntityId e = 0; e < 8; ++e) EXPECT_EQ(layout.atom_of(e), expected[e]) << e;
  EXPECT_EQ(layout.atom_name(1), "y");
}

TEST(Layout, Errors) {
  EXPECT_TRUE(contains(error_of([] { Layout("t", {}, {}); }), "no atoms"));
  EXPECT_TRUE(contains(error_of([] { Layout("t", {1, 2}, {"a"}); }), "differ in count"));
  EXPECT_TRUE(contains(error_of([] { Layout("t", {1, 0}, {"a", "b"}); }), "atom b is empty"));
  EXPECT_TRUE(contains(error_of([] {
                         Layout("t", {static_cast<EntityId>(kMaxEntities), 1}, {"a", "b"});
                       }),
                       "more than 16777216 entities"));
  Layout layout = four_by_three();
  EXPECT_TRUE(contains(error_of([&] { layout.add_link(0, 4, 10); }), "unknown atoms"));
  EXPECT_TRUE(contains(error_of([&] { layout.add_link(4, 0, 10); }), "unknown atoms"));
  layout.add_link(3, 0, 10);
  ASSERT_EQ(layout.links().size(), 1u);
  EXPECT_EQ(layout.links()[0].from, 3u);
  EXPECT_EQ(layout.links()[0].to, 0u);
  EXPECT_EQ(layout.links()[0].latency, 10);
}

TEST(Layout, FingerprintDependsOnNameAndBoundariesOnly) {
  const Layout a("test", {3, 3, 3, 3}, names(4));
  const Layout same("test", {3, 3, 3, 3}, {"p", "q", "r", "s"});
  const Layout other_name("test2", {3, 3, 3, 3}, names(4));
  const Layout other_sizes("test", {3, 3, 2, 4}, names(4));
  const Layout other_count("test", {6, 3, 3}, names(3));
  EXPECT_EQ(a.fingerprint(), same.fingerprint());
  EXPECT_NE(a.fingerprint(), other_name.fingerprint());
  EXPECT_NE(a.fingerprint(), other_sizes.fingerprint());
  EXPECT_NE(a.fingerprint(), other_count.fingerprint());
  Layout linked("test", {3, 3, 3, 3}, names(4));
  linked.add_link(0, 1, 5);
  EXPECT_EQ(a.fingerprint(), linked.fingerprint());
}

// --- strategies ---

TEST(Partition, ParseStrategy) {
  EXPECT_EQ(parse_strategy("block"), Strategy::kBlock);
  EXPECT_EQ(parse_strategy("round-robin"), Strategy::kRoundRobin);
  EXPECT_EQ(strategy_name(Strategy::kBlock), "block");
  EXPECT_EQ(strategy_name(Strategy::kRoundRobin), "round-robin");
  const std::string msg = error_of([] { parse_strategy("foo"); });
  EXPECT_TRUE(contains(msg, "\"foo\"")) << msg;
  EXPECT_TRUE(contains(msg, "block or round-robin")) << msg;
  EXPECT_TRUE(contains(error_of([] { parse_strategy("Block"); }), "\"Block\""));
  EXPECT_TRUE(contains(error_of([] { parse_strategy(""); }), "unknown partition strategy"));
}

TEST(Partition, BlockIsContiguousAndBalanced) {
  const Layout layout = four_by_three();
  {
    const Partition p = Partition::from_strategy(layout, 1, Strategy::kBlock);
    EXPECT_EQ(p.ranks(), 1);
    EXPECT_EQ(p.description(), "block");
    EXPECT_EQ(p.entity_ranks(layout), std::vector<std::int32_t>(12, 0));
  }
  {
    const Partition p = Partition::from_strategy(layout, 2, Strategy::kBlock);
    EXPECT_EQ(p.ranks(), 2);
    EXPECT_EQ(p.entity_ranks(layout),
              (std::vector<std::int32_t>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
    EXPECT_EQ(p.entities_per_rank(layout), (std::vector<std::int64_t>{6, 6}));
  }
  {
    const Partition p = Partition::from_strategy(layout, 3, Strategy::kBlock);
    EXPECT_EQ(atom_ranks(p, layout), (std::vector<std::int32_t>{0, 1, 1, 2}));
    EXPECT_EQ(p.entities_per_rank(layout), (std::vector<std::int64_t>{3, 6, 3}));
  }
  {
    const Partition p = Partition::from_strategy(layout, 4, Strategy::kBlock);
    EXPECT_EQ(p.entity_ranks(layout),
              (std::vector<std::int32_t>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}));
  }
}

TEST(Partition, BlockBalancesByEntityCountNotAtomCount) {
  // Twelve atoms of five entities on four ranks: three atoms each.
  const Layout even("even", std::vector<EntityId>(12, 5), names(12));
  EXPECT_EQ(atom_ranks(Partition::from_strategy(even, 4, Strategy::kBlock), even),
            (std::vector<std::int32_t>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}));
  // Four small atoms then a big one: the big one alone on rank 1.
  const Layout skewed("skewed", {1, 1, 1, 1, 8}, names(5));
  const Partition p = Partition::from_strategy(skewed, 2, Strategy::kBlock);
  EXPECT_EQ(atom_ranks(p, skewed), (std::vector<std::int32_t>{0, 0, 0, 0, 1}));
  EXPECT_EQ(p.entities_per_rank(skewed), (std::vector<std::int64_t>{4, 8}));
}

TEST(Partition, BlockNeverLeavesARankEmpty) {
  // A huge atom at either end would draw several ranks' midpoints; each rank must still
  // get an atom.
  const Layout big_first("big-first", {100, 1, 1, 1}, names(4));
  EXPECT_EQ(atom_ranks(Partition::from_strategy(big_first, 4, Strategy::kBlock), big_first),
            (std::vector<std::int32_t>{0, 1, 2, 3}));
  const Layout big_last("big-last", {1, 1, 1, 100}, names(4));
  EXPECT_EQ(atom_ranks(Partition::from_strategy(big_last, 4, Strategy::kBlock), big_last),
            (std::vector<std::int32_t>{0, 1, 2, 3}));
  const Layout big_middle("big-middle", {1, 1, 100, 1, 1}, names(5));
  const auto middle =
      atom_ranks(Partition::from_strategy(big_middle, 4, Strategy::kBlock), big_middle);
  ASSERT_EQ(middle.size(), 5u);
  EXPECT_EQ(middle.front(), 0);
  EXPECT_EQ(middle.back(), 3);
}

TEST(Partition, BlockPropertiesOnRandomLayouts) {
  Rng rng(123, 0);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t atoms = 1 + rng.below(40);
    std::vector<EntityId> sizes;
    EntityId largest = 0;
    for (std::size_t a = 0; a < atoms; ++a) {
      sizes.push_back(static_cast<EntityId>(1 + rng.below(rng.below(2) == 0 ? 4 : 50)));
      largest = std::max(largest, sizes.back());
    }
    const Layout layout("random", sizes, names(atoms));
    const int ranks = 1 + static_cast<int>(rng.below(atoms));
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(atoms) + " atoms, " +
                 std::to_string(ranks) + " ranks");
    const Partition p = Partition::from_strategy(layout, ranks, Strategy::kBlock);
    const auto r = atom_ranks(p, layout);
    ASSERT_EQ(r.front(), 0);
    ASSERT_EQ(r.back(), ranks - 1);
    for (std::size_t a = 1; a < atoms; ++a) {
      ASSERT_TRUE(r[a] == r[a - 1] || r[a] == r[a - 1] + 1) << "atom " << a;
    }
    for (const std::int64_t n : p.entities_per_rank(layout)) ASSERT_GT(n, 0);
    // Balanced: with many more atoms than ranks no rank holds more than its share
    // plus one atom.
    if (atoms >= 8 * static_cast<std::size_t>(ranks)) {
      const std::int64_t share = (layout.entity_count() + ranks - 1) / ranks;
      for (const std::int64_t n : p.entities_per_rank(layout)) ASSERT_LE(n, share + largest);
    }
  }
}

TEST(Partition, RoundRobin) {
  const Layout layout = four_by_three();
  const Partition p = Partition::from_strategy(layout, 3, Strategy::kRoundRobin);
  EXPECT_EQ(p.description(), "round-robin");
  EXPECT_EQ(p.ranks(), 3);
  EXPECT_EQ(p.entity_ranks(layout),
            (std::vector<std::int32_t>{0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0, 0}));
  EXPECT_EQ(p.entities_per_rank(layout), (std::vector<std::int64_t>{6, 3, 3}));
  const Layout many("many", std::vector<EntityId>(10, 2), names(10));
  const Partition q = Partition::from_strategy(many, 4, Strategy::kRoundRobin);
  for (AtomId a = 0; a < 10; ++a) EXPECT_EQ(q.rank_of_atom(a), static_cast<int>(a % 4)) << a;
}

TEST(Partition, FewerAtomsThanRanksIsAnError) {
  const Layout layout = four_by_three();
  for (const Strategy s : {Strategy::kBlock, Strategy::kRoundRobin}) {
    const std::string msg = error_of([&] { Partition::from_strategy(layout, 5, s); });
    EXPECT_TRUE(contains(msg, "'test'")) << msg;
    EXPECT_TRUE(contains(msg, "4 atoms cannot fill 5 ranks")) << msg;
  }
  EXPECT_TRUE(contains(error_of([&] { Partition::from_strategy(layout, 0, Strategy::kBlock); }),
                       "at least 1"));
}

// --- partition files ---

std::string written(const Partition& p, const Layout& layout) {
  std::ostringstream out;
  p.write(out, layout);
  return out.str();
}

Partition parse_text(const std::string& text, const Layout& layout, int ranks,
                     const std::string& source = "parts.txt") {
  std::istringstream in(text);
  return Partition::parse(in, source, layout, ranks);
}

std::string parse_error(const std::string& text, const Layout& layout, int ranks) {
  return error_of([&] { parse_text(text, layout, ranks); });
}

std::string fingerprint_hex(const Layout& layout) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx",
                static_cast<unsigned long long>(layout.fingerprint()));
  return buf;
}

/// A valid header for four_by_three() and two ranks (lines 1-5), then `body`.
std::string file_with(const Layout& layout, const std::string& body, int ranks = 2) {
  return "shoal-partition 1\ntopology test\nfingerprint " + fingerprint_hex(layout) +
         "\nentities 12\nranks " + std::to_string(ranks) + "\n" + body;
}

TEST(PartitionFile, WriteFormat) {
  const Layout layout = four_by_three();
  const Partition p = Partition::from_strategy(layout, 3, Strategy::kRoundRobin);
  const std::string text = written(p, layout);
  const std::string expected_tail = "shoal-partition 1\ntopology test\nfingerprint " +
                                    fingerprint_hex(layout) +
                                    "\nentities 12\nranks 3\n0 2 0\n3 5 1\n6 8 2\n9 11 0\n";
  ASSERT_GE(text.size(), expected_tail.size());
  EXPECT_EQ(text.substr(text.size() - expected_tail.size()), expected_tail) << text;
  EXPECT_EQ(text[0], '#');
  // Atoms on one rank in a row share one range.
  const Partition block = Partition::from_strategy(layout, 2, Strategy::kBlock);
  const std::string block_text = written(block, layout);
  EXPECT_TRUE(contains(block_text, "\nranks 2\n0 5 0\n6 11 1\n")) << block_text;
}

TEST(PartitionFile, WriteThenParseRoundTrip) {
  const Layout layout("rt", {2, 1, 4, 3, 5, 1, 1}, names(7));
  for (const Strategy s : {Strategy::kBlock, Strategy::kRoundRobin}) {
    for (int ranks = 1; ranks <= 7; ++ranks) {
      const Partition p = Partition::from_strategy(layout, ranks, s);
      const Partition q = parse_text(written(p, layout), layout, ranks, "round.txt");
      EXPECT_EQ(q.ranks(), ranks);
      EXPECT_EQ(q.entity_ranks(layout), p.entity_ranks(layout)) << strategy_name(s) << " " << ranks;
      EXPECT_EQ(q.entities_per_rank(layout), p.entities_per_rank(layout));
      EXPECT_EQ(q.description(), "file round.txt");
      // And writing it again gives the same text.
      EXPECT_EQ(written(q, layout), written(p, layout));
    }
  }
}

TEST(PartitionFile, HandWrittenWithCommentsBlanksAndCrlf) {
  const Layout layout = four_by_three();
  const std::string text =
      "# made by hand\n\n  shoal-partition 1  \r\ntopology test\r\n"
      "fingerprint " +
      fingerprint_hex(layout) +
      "\n\t# counts\nentities 12\nranks 2\n"
      "0 2 1\n3 5 0   # not a comment: see below\n";
  // A trailing comment on a range line is an extra field.
  EXPECT_TRUE(contains(parse_error(text, layout, 2), "line 10: expected 'FIRST LAST RANK'"));
  const std::string ok =
      "# made by hand\n\n  shoal-partition 1  \r\ntopology test\r\n"
      "fingerprint " +
      fingerprint_hex(layout) +
      "\n\t# counts\nentities 12\nranks 2\n"
      "0 2 1\n  3   5 0\n# rest\n6 11 1\n\n";
  const Partition p = parse_text(ok, layout, 2);
  EXPECT_EQ(p.entity_ranks(layout),
            (std::vector<std::int32_t>{1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
  // Decimal fingerprints are accepted too.
  const std::string decimal = "shoal-partition 1\ntopology test\nfingerprint " +
                              std::to_string(layout.fingerprint()) +
                              "\nentities 12\nranks 2\n0 5 0\n6 11 1\n";
  EXPECT_EQ(parse_text(decimal, layout, 2).entities_per_rank(layout),
            (std::vector<std::int64_t>{6, 6}));
}

/// Checks that parsing `text` fails with a message naming the source and line.
void expect_parse_error(const std::string& text, int line, std::string_view what, int ranks = 2) {
  const Layout layout = four_by_three();
  const std::string msg = parse_error(text, layout, ranks);
  EXPECT_TRUE(contains(msg, "partition file parts.txt, line " + std::to_string(line) + ": "))
      << msg;
  EXPECT_TRUE(contains(msg, what)) << msg;
}

TEST(PartitionFile, HeaderErrors) {
  const Layout layout = four_by_three();
  const std::string fp = fingerprint_hex(layout);
  expect_parse_error("", 0, "empty file");
  expect_parse_error("# only a comment\n\n", 2, "empty file");
  expect_parse_error("shoal-partition 2\n", 1, "not a Shoal partition file");
  expect_parse_error("# c\nsomething else\n", 2, "not a Shoal partition file");
  expect_parse_error("shoal-partition 1\n", 1, "ends before the 'topology' line");
  expect_parse_error("shoal-partition 1\ntopology other\n", 2,
                     "made for topology 'other', but this run is 'test'");
  expect_parse_error("shoal-partition 1\ntopologyx test\n", 2, "expected 'topology ...'");
  expect_parse_error("shoal-partition 1\ntopology test\nfingerprint 0x0000000000000001\n", 3,
                     "fingerprint 0x0000000000000001 does not match this topology's " + fp);
  expect_parse_error("shoal-partition 1\ntopology test\nfingerprint 0xZZ\n", 3,
                     "fingerprint 'ZZ' is not a non-negative integer");
  expect_parse_error("shoal-partition 1\ntopology test\nentities 12\n", 3,
                     "expected 'fingerprint ...', found 'entities 12'");
  expect_parse_error("shoal-partition 1\ntopology test\nfingerprint " + fp + "\nentities 13\n", 4,
                     "made for 13 entities, this topology has 12");
  expect_parse_error("shoal-partition 1\ntopology test\nfingerprint " + fp + "\nentities 12\n", 4,
                     "ends before the 'ranks' line");
  expect_parse_error(
      "shoal-partition 1\ntopology test\nfingerprint " + fp + "\nentities 12\nranks 3\n", 5,
      "made for 3 ranks, this run has 2");
  expect_parse_error(
      "shoal-partition 1\ntopology test\nfingerprint " + fp + "\nentities 12\nranks two\n", 5,
      "rank count 'two' is not a non-negative integer");
}

TEST(PartitionFile, RangeErrors) {
  const Layout layout = four_by_three();
  // Splitting an atom: a1 is 3..5.
  expect_parse_error(file_with(layout, "0 3 0\n4 11 1\n"), 6,
                     "entity 3 splits a1 (entities 3..5 must share a rank)");
  expect_parse_error(file_with(layout, "0 1 0\n2 11 1\n"), 6, "entity 1 splits a0");
  // A gap, an overlap, a range out of order.
  expect_parse_error(file_with(layout, "0 2 0\n6 11 1\n"), 7,
                     "range starts at entity 6, expected 3");
  expect_parse_error(file_with(layout, "0 5 0\n3 11 1\n"), 7,
                     "range starts at entity 3, expected 6");
  expect_parse_error(file_with(layout, "6 11 1\n0 5 0\n"), 6,
                     "range starts at entity 6, expected 0");
  expect_parse_error(file_with(layout, "0 5 0\n6 4 1\n"), 7, "range 6..4 is empty");
  // Out of range.
  expect_parse_error(file_with(layout, "0 5 0\n6 11 2\n"), 7, "rank 2 is outside 0..1");
  expect_parse_error(file_with(layout, "0 5 0\n6 12 1\n"), 7,
                     "entity 12 is outside the topology (0..11)");
  // Missing coverage: reported at the last line read.
  expect_parse_error(file_with(layout, "0 5 0\n"), 6, "entities 6..11 have no rank");
  expect_parse_error(file_with(layout, "0 5 0\n# end\n\n"), 8, "entities 6..11 have no rank");
  expect_parse_error(file_with(layout, ""), 5, "entities 0..11 have no rank");
  // Malformed lines.
  expect_parse_error(file_with(layout, "0 5 0 extra\n6 11 1\n"), 6,
                     "expected 'FIRST LAST RANK', found '0 5 0 extra'");
  expect_parse_error(file_with(layout, "0 5\n6 11 1\n"), 6, "expected 'FIRST LAST RANK'");
  expect_parse_error(file_with(layout, "0 five 0\n"), 6,
                     "last entity 'five' is not a non-negative integer");
  expect_parse_error(file_with(layout, "x 5 0\n"), 6,
                     "first entity 'x' is not a non-negative integer");
  expect_parse_error(file_with(layout, "0 5 -1\n"), 6, "rank '-1' is not a non-negative integer");
  expect_parse_error(file_with(layout, "0 5 1x\n"), 6, "rank '1x' is not a non-negative integer");
}

TEST(PartitionFile, RankWithoutEntitiesIsAnError) {
  const Layout layout = four_by_three();
  const std::string msg = parse_error(file_with(layout, "0 11 0\n"), layout, 2);
  EXPECT_TRUE(contains(msg, "partition file parts.txt: rank 1 owns no entity (2 ranks)")) << msg;
}

TEST(PartitionFile, FromFileMissingFile) {
  const Layout layout = four_by_three();
  const std::string msg =
      error_of([&] { Partition::from_file("/nonexistent/shoal/parts.txt", layout, 2); });
  EXPECT_TRUE(contains(msg, "partition file /nonexistent/shoal/parts.txt: no such file")) << msg;
}

// --- lookahead ---

TEST(Lookahead, MinimumLatencyOverCutLinks) {
  Layout layout = four_by_three();
  layout.add_link(0, 1, 100);  // inside rank 0 under block/2
  layout.add_link(1, 2, 70);   // cut
  layout.add_link(2, 1, 50);   // cut
  layout.add_link(3, 0, 60);   // cut
  layout.add_link(2, 3, 10);   // inside rank 1
  const Partition block = Partition::from_strategy(layout, 2, Strategy::kBlock);
  EXPECT_EQ(lookahead(layout, block), 50);
  // Round-robin over 2 ranks cuts every link here.
  const Partition rr = Partition::from_strategy(layout, 2, Strategy::kRoundRobin);
  EXPECT_EQ(lookahead(layout, rr), 10);
}

TEST(Lookahead, InfiniteWhenNoLinkIsCut) {
  Layout layout = four_by_three();
  EXPECT_EQ(lookahead(layout, Partition::from_strategy(layout, 2, Strategy::kBlock)),
            kTimeInfinity);
  layout.add_link(0, 1, 5);
  layout.add_link(2, 3, 5);
  layout.add_link(1, 1, 0);  // a self link with zero latency
  EXPECT_EQ(lookahead(layout, Partition::from_strategy(layout, 2, Strategy::kBlock)),
            kTimeInfinity);
  EXPECT_EQ(lookahead(layout, Partition::from_strategy(layout, 1, Strategy::kBlock)),
            kTimeInfinity);
}

TEST(Lookahead, ZeroLatencyInsideOneRankIsFine) {
  Layout layout = four_by_three();
  layout.add_link(0, 1, 0);   // both on rank 0 under block/2
  layout.add_link(1, 2, 30);  // cut
  EXPECT_EQ(lookahead(layout, Partition::from_strategy(layout, 2, Strategy::kBlock)), 30);
}

TEST(Lookahead, ZeroLatencyOnACutLinkIsAnError) {
  Layout layout = four_by_three();
  layout.add_link(1, 2, 30);
  layout.add_link(0, 1, 0);  // cut under round-robin/2: a0 on rank 0, a1 on rank 1
  const Partition rr = Partition::from_strategy(layout, 2, Strategy::kRoundRobin);
  const std::string msg = error_of([&] { lookahead(layout, rr); });
  EXPECT_TRUE(contains(msg, "a0 -> a1")) << msg;
  EXPECT_TRUE(contains(msg, "crosses ranks 0 and 1")) << msg;
  EXPECT_TRUE(contains(msg, "latency > 0")) << msg;
  // The same layout under block/2 keeps a0 and a1 together.
  EXPECT_EQ(lookahead(layout, Partition::from_strategy(layout, 2, Strategy::kBlock)), 30);
}

TEST(Lookahead, NegativeLatencyOnACutLinkIsAnError) {
  Layout layout = four_by_three();
  layout.add_link(3, 2, -5);
  const Partition rr = Partition::from_strategy(layout, 2, Strategy::kRoundRobin);
  const std::string msg = error_of([&] { lookahead(layout, rr); });
  EXPECT_TRUE(contains(msg, "a3 -> a2")) << msg;
  EXPECT_TRUE(contains(msg, "crosses ranks 1 and 0")) << msg;
}

}  // namespace
}  // namespace shoal::core
