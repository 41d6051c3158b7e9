// Errors in a TOML workload file, with file and line: the file as a whole, and its
// entries' keys (unknown, missing, of the wrong type, out of range, bad units).
#include "shoal/work/dag_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "dag_file_test_support.hpp"
#include "error_checks.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::work {
namespace {

using namespace dag_file_test;
using shoal::test::error_of;
using shoal::test::Has;

// --- errors: the file as a whole ---

TEST_F(DagFile, SyntaxErrorNamesLineAndColumn) {
  const std::string error = load_error(R"([[task]]
name = "t"
gpu = = 1
duration = "1us"
)");
  EXPECT_TRUE(Has(error, "workload FILE, line 3, column 7: ")) << error;
}

TEST_F(DagFile, MissingFile) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "shoal_dag_file_test_no_such_file.toml").string();
  Dag dag;
  const std::string error = error_of([&] { load_dag_file(path, dag); });
  // No position to give: "workload PATH: <reason>", without a line 0.
  EXPECT_EQ(error.rfind("workload " + path + ": ", 0), 0u) << error;
  EXPECT_FALSE(Has(error, "line"));
}

TEST_F(DagFile, UnknownTopLevelKey) {
  EXPECT_EQ(load_error(R"(# a comment
seed = 3
)"),
            at(2) +
                "unknown key 'seed' (a workload holds [[task]], [[coflow]] and [[pattern]] "
                "entries)");
  EXPECT_TRUE(Has(load_error(R"([[task]]
name = "t"
gpu = 0
duration = "1us"

[[tasks]]
name = "u"
)"),
                  at(6) + "unknown key 'tasks'"));
}

TEST_F(DagFile, SectionWrittenAsATable) {
  EXPECT_EQ(load_error(R"(# one task
[task]
name = "t"
gpu = 0
duration = "1us"
)"),
            at(2) + "'task' must be written [[task]]");
  EXPECT_EQ(load_error("pattern = 5\n"), at(1) + "'pattern' must be written [[pattern]]");
  EXPECT_EQ(load_error("coflow = [1, 2]\n"), at(1) + "'coflow' must be written [[coflow]]");
}

TEST_F(DagFile, UnknownAfterName) {
  EXPECT_EQ(load_error(R"([[task]]
name = "t"
gpu = 0
duration = "1us"
after = ["nope"]
)"),
            at(5) + "task \"t\": 'after' names \"nope\", which does not exist");
}

TEST_F(DagFile, DuplicateNameInTheFile) {
  EXPECT_EQ(load_error(R"([[task]]
name = "x"
gpu = 0
duration = "1us"

[[task]]
name = "x"
gpu = 1
duration = "1us"
)"),
            at(6) + "task \"x\": name \"x\" is used twice (task and coflow names must be unique)");
}

// --- errors: keys ---

TEST_F(DagFile, UnknownKeys) {
  EXPECT_EQ(load_error(R"([[task]]
name = "t"
gpu = 0
duration = "1us"
durations = "2us"
)"),
            at(5) + "task \"t\": unknown key 'durations'");
  EXPECT_EQ(load_error(R"([[coflow]]
name = "c"
size = "1MB"
flows = [{ src = 0, dst = 1, bytes = "1MB" }]
)"),
            at(3) + "coflow \"c\": unknown key 'size'");
  EXPECT_EQ(load_error(R"([[coflow]]
name = "c"
flows = [
  { src = 0, dst = 1, bytes = "1MB" },
  { src = 1, dst = 0, bytes = "1MB", prio = 3 },
]
)"),
            at(5) + "coflow \"c\", flow #2: unknown key 'prio'");
  // group_size belongs to all-to-all only.
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"
kind = "permutation"
gpus = "0..3"
bytes = "1MB"
group_size = 2
)"),
            at(6) + "pattern \"p\": unknown key 'group_size'");
}

TEST_F(DagFile, MissingKeys) {
  // Reported at the entry's header.
  EXPECT_EQ(load_error(R"([[task]]
name = "a"
gpu = 0
duration = "1us"

[[task]]
name = "b"
gpu = 0
)"),
            at(6) + "task \"b\": missing key 'duration'");
  // Without a name, the entry is numbered.
  EXPECT_EQ(load_error(R"([[task]]
name = "a"
gpu = 0
duration = "1us"

[[task]]
gpu = 0
duration = "1us"
)"),
            at(6) + "task #2: missing key 'name'");
  EXPECT_EQ(load_error(R"([[coflow]]
name = "c"
type = "EP"
)"),
            at(1) + "coflow \"c\": missing key 'flows'");
  EXPECT_EQ(load_error(R"([[coflow]]
name = "c"
flows = [
  { src = 0, dst = 1 },
]
)"),
            at(4) + "coflow \"c\", flow #1: missing key 'bytes'");
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"
kind = "incast"
sources = [1, 2]
bytes = "1MB"
)"),
            at(1) + "pattern \"p\": missing key 'destination'");
}

TEST_F(DagFile, WrongTypes) {
  const std::string task = "[[task]]\nname = \"t\"\n";
  EXPECT_EQ(load_error(task + "gpu = \"0\"\nduration = \"1us\"\n"),
            at(3) + "task \"t\": 'gpu' must be an integer");
  EXPECT_EQ(load_error(task + "gpu = 1.5\nduration = \"1us\"\n"),
            at(3) + "task \"t\": 'gpu' must be an integer");
  EXPECT_EQ(load_error(task + "gpu = 0\nduration = 5\n"),
            at(4) + "task \"t\": 'duration' must be a string with a unit, e.g. \"10us\"");
  EXPECT_EQ(load_error(task + "gpu = 0\nduration = \"1us\"\nafter = 3\n"),
            at(5) + "task \"t\": 'after' must be a name or a list of names");
  EXPECT_EQ(load_error(task + "gpu = 0\nduration = \"1us\"\nafter = [\"a\",\n  4]\n"),
            at(6) + "task \"t\": 'after' must list names (strings)");
  EXPECT_EQ(load_error("[[task]]\nname = 7\ngpu = 0\nduration = \"1us\"\n"),
            at(2) + "task #1: 'name' must be a string");

  const std::string coflow = "[[coflow]]\nname = \"c\"\n";
  EXPECT_EQ(load_error(coflow + "flows = \"0->1\"\n"),
            at(3) + "coflow \"c\": 'flows' must be a list of {src, dst, bytes}");
  EXPECT_EQ(load_error(coflow + "flows = [\n  1,\n]\n"),
            at(4) + "coflow \"c\": 'flows' must be a list of {src, dst, bytes}");
  EXPECT_EQ(load_error(coflow + "flows = [\n  { src = 0, dst = 1, bytes = 100 },\n]\n"),
            at(4) + "coflow \"c\", flow #1: 'bytes' must be a string with a unit, e.g. \"32MB\"");
  EXPECT_EQ(load_error(coflow + "type = 1\nflows = [{ src = 0, dst = 1, bytes = \"1B\" }]\n"),
            at(3) + "coflow \"c\": 'type' must be a string (EP, PP, DP, TP or OTHER)");
  EXPECT_EQ(load_error(coflow + "layer = \"1\"\nflows = [{ src = 0, dst = 1, bytes = \"1B\" }]\n"),
            at(3) + "coflow \"c\": 'layer' must be an integer");
  EXPECT_EQ(load_error(coflow + "start = 0\nflows = [{ src = 0, dst = 1, bytes = \"1B\" }]\n"),
            at(3) + "coflow \"c\": 'start' must be a string with a unit, e.g. \"10us\"");

  EXPECT_EQ(
      load_error(R"([[pattern]]
name = "p"
kind = "incast"
sources = 4
destination = 0
bytes = "1B"
)"),
      at(4) + "pattern \"p\": 'sources' must be a list of GPU ids or a range \"FIRST..LAST\"");
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"
kind = "incast"
sources = [1, "2"]
destination = 0
bytes = "1B"
)"),
            at(4) + "pattern \"p\": 'sources' must list GPU ids (integers 0..16777215)");
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"
kind = 3
)"),
            at(3) + "pattern \"p\": 'kind' must be a string");
}

TEST_F(DagFile, BadUnits) {
  const std::string error = load_error(R"([[task]]
name = "t"
gpu = 0
duration = "1xs"
)");
  EXPECT_EQ(error.rfind(at(4), 0), 0u) << error;
  EXPECT_TRUE(
      Has(error, at(4) + "task \"t\": 'duration': invalid duration \"1xs\": unknown unit \"xs\""));
}

TEST_F(DagFile, BadUnitsInFlowsAndStart) {
  EXPECT_TRUE(Has(load_error(R"([[coflow]]
name = "c"
flows = [
  { src = 0, dst = 1, bytes = "1xs" },
]
)"),
                  at(4) + "coflow \"c\", flow #1: 'bytes': invalid size \"1xs\": unknown unit "
                          "\"xs\""));
  EXPECT_TRUE(Has(load_error(R"([[coflow]]
name = "c"
start = "-1us"
flows = [{ src = 0, dst = 1, bytes = "1B" }]
)"),
                  at(3) + "coflow \"c\": 'start': invalid duration \"-1us\": must not be "
                          "negative"));
}

TEST_F(DagFile, NegativeAndTooLargeIntegers) {
  EXPECT_EQ(load_error(R"([[task]]
name = "t"
gpu = -1
duration = "1us"
)"),
            at(3) + "task \"t\": 'gpu' must be between 0 and 16777215");
  EXPECT_EQ(load_error(R"([[task]]
name = "t"
gpu = 4294967296
duration = "1us"
)"),
            at(3) + "task \"t\": 'gpu' must be between 0 and 16777215");
  EXPECT_EQ(load_error(R"([[coflow]]
name = "c"
job = -2
flows = [{ src = 0, dst = 1, bytes = "1B" }]
)"),
            at(3) + "coflow \"c\": 'job' must be between 0 and 4294967295");
  EXPECT_EQ(load_error(R"([[coflow]]
name = "c"
flows = [
  { src = 0, dst = 1, bytes = "1B" },
  { src = -1, dst = 1, bytes = "1B" },
]
)"),
            at(5) + "coflow \"c\", flow #2: 'src' must be between 0 and 16777215");
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"
kind = "permutation"
gpus = "0..3"
bytes = "1B"
seed = -1
)"),
            at(6) + "pattern \"p\": 'seed' must be between 0 and 9223372036854775807");
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"
kind = "one-to-many"
source = 0
destinations = [1, -3]
bytes = "1B"
)"),
            at(5) + "pattern \"p\": 'destinations' must list GPU ids (integers 0..16777215)");
}

TEST_F(DagFile, BadCoflowType) {
  EXPECT_EQ(load_error(R"([[coflow]]
name = "c"
type = "XP"
flows = [{ src = 0, dst = 1, bytes = "1B" }]
)"),
            at(3) + "coflow \"c\": unknown coflow type \"XP\" (use EP, PP, DP, TP, CP or OTHER)");
  EXPECT_EQ(load_error(R"([[pattern]]
name = "p"
kind = "incast"
sources = [1]
destination = 0
bytes = "1B"

type = "XP"
)"),
            at(8) + "pattern \"p\": unknown coflow type \"XP\" (use EP, PP, DP, TP, CP or OTHER)");
}

}  // namespace
}  // namespace shoal::work
