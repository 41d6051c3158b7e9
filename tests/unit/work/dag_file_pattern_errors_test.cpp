// Errors in a TOML workload file's [[pattern]] entries, with file and line: kinds,
// group sizes, GPU lists and ranges, and limits on flows and bytes.
#include "shoal/work/dag_file.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dag_file_test_support.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::work {
namespace {

using namespace dag_file_test;

TEST_F(DagFile, UnknownPatternKind) {
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"

kind = "ring"
gpus = "0..3"
bytes = "1B"
)"),
            at(4) +
                "pattern \"p\": unknown pattern kind \"ring\" (use permutation, all-to-all, "
                "incast or one-to-many)");
}

TEST_F(DagFile, GroupSizeMustDivide) {
  // Reported at the pattern's header.
  EXPECT_EQ(load_error("# x\n" + all_to_all("\"0..7\"", "group_size = 3")),
            at(2) + "pattern \"a2a\": group_size 3 must be at least 2 and divide 8 GPUs");
  EXPECT_EQ(load_error(all_to_all("\"0..7\"", "group_size = 1")),
            at(1) + "pattern \"a2a\": group_size 1 must be at least 2 and divide 8 GPUs");
  EXPECT_EQ(load_error(all_to_all("\"0..7\"", "group_size = 16")),
            at(1) + "pattern \"a2a\": group_size 16 must be at least 2 and divide 8 GPUs");
  EXPECT_EQ(load_error(all_to_all("[4]", "")),
            at(1) + "pattern \"a2a\": group_size 1 must be at least 2 and divide 1 GPUs");
  EXPECT_EQ(load_error(all_to_all("\"0..7\"", "group_size = 4\ngroups = \"diagonal\"")),
            at(1) + "pattern \"a2a\": 'groups' must be \"contiguous\" or \"strided\"");
}

// Found while writing the fuzz targets (tests/fuzz): a few lines of pattern
// could ask for any number of flows ("0..16777215" all-to-all: 2.8e14) and run
// out of memory. The patterns of a file expand to at most 2^24 flows together,
// checked before each one expands.
TEST_F(DagFile, PatternsExpandToAtMost2To24Flows) {
  EXPECT_EQ(load_error(all_to_all("\"0..8191\"", "")),
            at(1) +
                "pattern \"a2a\": expands to 67100672 flows; the patterns of a "
                "workload file hold at most 16777216 in all (an all-to-all among 4096 GPUs)");
  // Smaller groups fit: 2048 pairs.
  EXPECT_EQ(load(all_to_all("\"0..4095\"", "group_size = 2")).all_flows().size(), 4096u);
}

// Found while writing the fuzz targets (tests/fuzz; their UBSan reports it): the
// bytes of a file's flows could overflow every total of them (`shoal workload
// check` printed -777216 TiB).
TEST_F(DagFile, BytesAddUpToAtMostInt64) {
  EXPECT_EQ(load_error("[[coflow]]\nname = \"c\"\nflows = [\n"
                       "  { src = 0, dst = 1, bytes = \"8000000TiB\" },\n"
                       "  { src = 1, dst = 0, bytes = \"8000000TiB\" },\n]\n"),  // flow #2: line 5
            at(5) +
                "coflow \"c\", flow #2: the flows of the workload add up to more than "
                "9223372036854775807 bytes");
  EXPECT_EQ(load_error("[[pattern]]\nname = \"perm\"\nkind = \"permutation\"\n"
                       "gpus = \"0..1\"\nbytes = \"5000000TiB\"\n"),
            at(1) +
                "pattern \"perm\": the flows of the workload add up to more than "
                "9223372036854775807 bytes");
}

TEST_F(DagFile, PermutationNeedsTwoGpus) {
  EXPECT_EQ(load_error(permutation("\"5..5\"", "")),
            at(1) + "pattern \"perm\": a permutation needs at least 2 GPUs");
}

TEST_F(DagFile, DuplicateGpuInAList) {
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"
kind = "all-to-all"
bytes = "1B"
gpus = [0, 1, 2, 1]
)"),
            at(5) + "pattern \"p\": 'gpus' lists a GPU twice");
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"
kind = "one-to-many"
source = 0
destinations = [3, 3]
bytes = "1B"
)"),
            at(5) + "pattern \"p\": 'destinations' lists a GPU twice");
}

TEST_F(DagFile, BadRanges) {
  const auto incast = [](const std::string& sources) {
    return "[[pattern]]\nname = \"p\"\nkind = \"incast\"\ndestination = 0\nbytes = \"1B\"\n" +
           std::string("sources = ") + sources + "\n";
  };
  const std::string range_error =
      "pattern \"p\": 'sources' must be a list of GPU ids or a range \"FIRST..LAST\"";
  for (const char* bad : {"\"5..2\"", "\"5\"", "\"a..3\"", "\"1..\"", "\"..3\"", "\"1...3\"",
                          "\"-1..3\"", "\"1..3x\"", "\"\""}) {
    EXPECT_EQ(load_error(incast(bad)), at(6) + range_error) << bad;
  }
  EXPECT_EQ(load_error(incast("[]")), at(6) + "pattern \"p\": 'sources' is empty");
  // A one-GPU range is fine.
  const Dag dag = load(incast("\"2..2\""));
  EXPECT_EQ(pairs_of(dag, dag.coflows()[0]), (std::vector<Pair>{{2, 0}}));
}

}  // namespace
}  // namespace shoal::work
