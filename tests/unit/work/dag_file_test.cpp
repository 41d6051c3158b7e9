// The TOML workload format: tasks, coflows, patterns, and errors with file and line.
#include "shoal/work/dag_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/error.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::work {
namespace {

using shoal::test::error_of;
using shoal::test::Has;

using Kind = NodeRef::Kind;
using Pair = std::pair<GpuId, GpuId>;

std::vector<Pair> pairs_of(const Dag& dag, const Coflow& c) {
  std::vector<Pair> out;
  for (const Flow& f : dag.flows_of(c)) out.emplace_back(f.src, f.dst);
  return out;
}

/// Writes workload text to unique temporary files and loads them.
class DagFile : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const auto& p : paths_) {
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  }

  /// A fresh file holding `text`; its path is also kept in path_.
  std::string write(std::string_view text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                    ("shoal_dag_file_test_" + std::to_string(::getpid()) + "_" +
                                     info->name() + "_" + std::to_string(paths_.size()) + ".toml");
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    EXPECT_TRUE(out) << "could not write " << p;
    paths_.push_back(p);
    path_ = p.string();
    return path_;
  }

  Dag load(std::string_view text) {
    Dag dag;
    load_dag_file(write(text), dag);
    return dag;
  }

  /// The error of loading `text`, which must begin "workload PATH"; PATH is replaced
  /// by FILE so that expectations do not depend on the temporary name.
  std::string load_error(std::string_view text) {
    const std::string path = write(text);
    Dag dag;
    return named_file(error_of([&] { load_dag_file(path, dag); }), path);
  }

  static std::string named_file(std::string message, const std::string& path) {
    const std::string prefix = "workload " + path;
    if (message.rfind(prefix, 0) != 0) {
      ADD_FAILURE() << "message does not start with \"" << prefix << "\": " << message;
      return message;
    }
    return "workload FILE" + message.substr(prefix.size());
  }

  /// The start of a message about line `line` of a file, as load_error() returns it.
  static std::string at(int line) { return "workload FILE, line " + std::to_string(line) + ": "; }

  std::string path_;

 private:
  std::vector<std::filesystem::path> paths_;
};

// --- tasks and coflows ---

TEST_F(DagFile, Tasks) {
  const Dag dag = load(R"(# three tasks on one GPU
[[task]]
name = "fwd"
gpu = 3
duration = "50us"

[[task]]
name = "bwd"
gpu = 3
duration = "2.5ms"
after = "fwd"

[[task]]
name = "opt"
gpu = 16777215
duration = "0s"
after = ["fwd", "bwd"]
)");
  ASSERT_EQ(dag.tasks().size(), 3u);
  EXPECT_TRUE(dag.coflows().empty());
  const ComputeTask& fwd = dag.tasks()[0];
  EXPECT_EQ(fwd.name, "fwd");
  EXPECT_EQ(fwd.gpu, 3u);
  EXPECT_EQ(fwd.duration, 50'000'000);
  EXPECT_TRUE(fwd.after.empty());
  const ComputeTask& bwd = dag.tasks()[1];
  EXPECT_EQ(bwd.name, "bwd");
  EXPECT_EQ(bwd.duration, 2'500'000'000);
  ASSERT_EQ(bwd.after.size(), 1u);
  EXPECT_EQ(bwd.after[0], (NodeRef{Kind::kTask, 0}));
  const ComputeTask& opt = dag.tasks()[2];
  EXPECT_EQ(opt.gpu, 16777215u);
  EXPECT_EQ(opt.duration, 0);
  ASSERT_EQ(opt.after.size(), 2u);
  EXPECT_EQ(opt.after[0], (NodeRef{Kind::kTask, 0}));
  EXPECT_EQ(opt.after[1], (NodeRef{Kind::kTask, 1}));
}

TEST_F(DagFile, CoflowWithLabelsAndFlows) {
  Dag dag = load(R"([[coflow]]
name = "a2a"
type = "EP"
job = 2
iteration = 3
micro_batch = 4
layer = 5
stage = 6
start = "20us"
after = "fwd"
flows = [
  { src = 0, dst = 1, bytes = "4MiB" },
  { src = 1, dst = 0, bytes = "32MB" },
  { src = 2, dst = 0, bytes = "7B" },
]

[[coflow]]
name = "plain"
after = ["a2a", "fwd"]
flows = [{ src = 0, dst = 2, bytes = "1kB" }]

[[task]]
name = "fwd"
gpu = 0
duration = "1us"
after = []
)");
  ASSERT_EQ(dag.tasks().size(), 1u);
  ASSERT_EQ(dag.coflows().size(), 2u);
  const Coflow& c = dag.coflows()[0];
  EXPECT_EQ(c.name, "a2a");
  EXPECT_EQ(c.labels.type, CoflowType::kEp);
  EXPECT_EQ(c.labels.job, 2u);
  EXPECT_EQ(c.labels.iteration, 3u);
  EXPECT_EQ(c.labels.micro_batch, 4u);
  EXPECT_EQ(c.labels.layer, 5u);
  EXPECT_EQ(c.labels.stage, 6u);
  EXPECT_EQ(c.earliest_start, 20'000'000);
  ASSERT_EQ(c.after.size(), 1u);
  EXPECT_EQ(c.after[0], (NodeRef{Kind::kTask, 0}));
  const auto flows = dag.flows_of(c);
  ASSERT_EQ(flows.size(), 3u);
  EXPECT_EQ(flows[0].src, 0u);
  EXPECT_EQ(flows[0].dst, 1u);
  EXPECT_EQ(flows[0].bytes, 4'194'304);
  EXPECT_EQ(flows[1].src, 1u);
  EXPECT_EQ(flows[1].dst, 0u);
  EXPECT_EQ(flows[1].bytes, 32'000'000);
  EXPECT_EQ(flows[2].src, 2u);
  EXPECT_EQ(flows[2].dst, 0u);
  EXPECT_EQ(flows[2].bytes, 7);

  const Coflow& plain = dag.coflows()[1];
  EXPECT_EQ(plain.labels.type, CoflowType::kOther);
  EXPECT_EQ(plain.labels.job, 0u);
  EXPECT_EQ(plain.labels.iteration, 0u);
  EXPECT_EQ(plain.labels.micro_batch, 0u);
  EXPECT_EQ(plain.labels.layer, 0u);
  EXPECT_EQ(plain.labels.stage, 0u);
  EXPECT_EQ(plain.earliest_start, 0);
  ASSERT_EQ(plain.after.size(), 2u);
  EXPECT_EQ(plain.after[0], (NodeRef{Kind::kCoflow, 0}));
  EXPECT_EQ(plain.after[1], (NodeRef{Kind::kTask, 0}));
  EXPECT_EQ(pairs_of(dag, plain), (std::vector<Pair>{{0, 2}}));
  EXPECT_EQ(dag.flows_of(plain)[0].bytes, 1000);

  EXPECT_TRUE(dag.tasks()[0].after.empty());
  EXPECT_EQ(dag.total_bytes(), 4'194'304 + 32'000'000 + 7 + 1000);
  dag.validate(3);
}

TEST_F(DagFile, TinyExample) {
  // configs/examples/tiny_workload.toml
  Dag dag = load(R"(# A small hand-written workload: two GPUs compute, exchange, compute again.
[[task]]
name = "fwd-0"
gpu = 0
duration = "50us"

[[task]]
name = "fwd-1"
gpu = 1
duration = "60us"

[[coflow]]
name = "a2a"
type = "EP"
layer = 1
after = ["fwd-0", "fwd-1"]
flows = [
  { src = 0, dst = 1, bytes = "4MiB" },
  { src = 1, dst = 0, bytes = "4MiB" },
]

[[task]]
name = "bwd-0"
gpu = 0
duration = "100us"
after = ["a2a"]

[[pattern]]
name = "background"
kind = "all-to-all"
gpus = "0..7"
group_size = 4
groups = "strided"
bytes = "1MB"
type = "DP"
start = "20us"
)");
  EXPECT_EQ(dag.tasks().size(), 3u);
  ASSERT_EQ(dag.coflows().size(), 2u);
  EXPECT_EQ(dag.all_flows().size(), 2u + 24u);
  EXPECT_EQ(dag.gpus_used(), 8u);
  EXPECT_EQ(dag.total_bytes(), 2 * 4'194'304 + 24 * 1'000'000);
  const Coflow& bg = dag.coflows()[1];
  EXPECT_EQ(bg.name, "background");
  EXPECT_EQ(bg.labels.type, CoflowType::kDp);
  EXPECT_EQ(bg.earliest_start, 20'000'000);
  EXPECT_EQ(dag.coflows()[0].labels.layer, 1u);
  ASSERT_EQ(dag.tasks()[2].after.size(), 1u);
  EXPECT_EQ(dag.tasks()[2].after[0], (NodeRef{Kind::kCoflow, 0}));
  dag.validate(8);
  EXPECT_EQ(error_of([&] { dag.validate(7); }),
            "coflow \"background\": flow 1->7: destination GPU 7 is outside the fabric (GPUs "
            "0..6)");
}

TEST_F(DagFile, AddsToADagThatHoldsNodes) {
  Dag dag;
  dag.add_task("pre", 0, 1, {});
  load_dag_file(write(R"([[task]]
name = "post"
gpu = 0
duration = "1ns"
after = "pre"
)"),
                dag);
  ASSERT_EQ(dag.tasks().size(), 2u);
  ASSERT_EQ(dag.tasks()[1].after.size(), 1u);
  EXPECT_EQ(dag.tasks()[1].after[0], (NodeRef{Kind::kTask, 0}));
  dag.validate(1);

  // A name already in the Dag is a duplicate, reported at the entry.
  const std::string error = error_of([&] {
    load_dag_file(write(R"([[task]]
name = "x"
gpu = 0
duration = "1ns"

[[coflow]]
name = "pre"
flows = [{ src = 0, dst = 1, bytes = "1B" }]
)"),
                  dag);
  });
  EXPECT_EQ(named_file(error, path_),
            at(6) +
                "coflow \"pre\": name \"pre\" is used twice (task and coflow names must be "
                "unique)");
}

TEST_F(DagFile, EmptyFile) {
  const Dag dag = load("# nothing here\n");
  EXPECT_TRUE(dag.tasks().empty());
  EXPECT_TRUE(dag.coflows().empty());
  EXPECT_EQ(dag.gpus_used(), 0u);
}

// --- patterns ---

std::string permutation(const std::string& gpus, const std::string& seed_line) {
  return "[[pattern]]\nname = \"perm\"\nkind = \"permutation\"\ngpus = " + gpus +
         "\nbytes = \"1MiB\"\n" + seed_line + "\n";
}

TEST_F(DagFile, PermutationIsASingleCycleThroughEveryGpu) {
  const Dag dag = load(permutation("\"0..15\"", "seed = 7"));
  ASSERT_EQ(dag.coflows().size(), 1u);
  const Coflow& c = dag.coflows()[0];
  EXPECT_EQ(c.name, "perm");
  EXPECT_EQ(c.labels.type, CoflowType::kOther);
  const auto flows = dag.flows_of(c);
  ASSERT_EQ(flows.size(), 16u);
  std::vector<int> sends(16, 0), receives(16, 0);
  std::vector<GpuId> next(16, 0);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    EXPECT_EQ(flows[i].src, i);  // in the order of 'gpus'
    EXPECT_NE(flows[i].src, flows[i].dst);
    EXPECT_EQ(flows[i].bytes, 1'048'576);
    ASSERT_LT(flows[i].dst, 16u);
    ++sends[flows[i].src];
    ++receives[flows[i].dst];
    next[flows[i].src] = flows[i].dst;
  }
  EXPECT_EQ(sends, std::vector<int>(16, 1));
  EXPECT_EQ(receives, std::vector<int>(16, 1));
  // Following the flows from GPU 0 visits all 16 GPUs before coming back.
  GpuId g = 0;
  for (int step = 1; step <= 16; ++step) {
    g = next[g];
    if (step < 16) {
      EXPECT_NE(g, 0u) << "back at GPU 0 after " << step << " steps";
    }
  }
  EXPECT_EQ(g, 0u);
  dag.validate(16);
}

TEST_F(DagFile, PermutationDependsOnlyOnTheSeed) {
  const auto perm = [&](const std::string& seed_line) {
    const Dag dag = load(permutation("\"0..15\"", seed_line));
    return pairs_of(dag, dag.coflows()[0]);
  };
  const auto seven = perm("seed = 7");
  EXPECT_EQ(perm("seed = 7"), seven);
  EXPECT_NE(perm("seed = 8"), seven);
  EXPECT_EQ(perm(""), perm("seed = 1"));  // default seed 1
  EXPECT_NE(perm("seed = 1"), seven);
  EXPECT_EQ(perm("seed = 0").size(), 16u);
}

TEST_F(DagFile, PermutationOverAGpuList) {
  const Dag dag = load(permutation("[3, 10, 20, 7, 42]", "seed = 99"));
  const auto pairs = pairs_of(dag, dag.coflows()[0]);
  ASSERT_EQ(pairs.size(), 5u);
  const std::vector<GpuId> gpus = {3, 10, 20, 7, 42};
  std::vector<GpuId> dsts;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(pairs[i].first, gpus[i]);
    EXPECT_NE(pairs[i].first, pairs[i].second);
    dsts.push_back(pairs[i].second);
  }
  std::sort(dsts.begin(), dsts.end());
  EXPECT_EQ(dsts, (std::vector<GpuId>{3, 7, 10, 20, 42}));
  // Two GPUs can only swap.
  const Dag two = load(permutation("[4, 9]", "seed = 5"));
  EXPECT_EQ(pairs_of(two, two.coflows()[0]), (std::vector<Pair>{{4, 9}, {9, 4}}));
}

std::string all_to_all(const std::string& gpus, const std::string& extra) {
  return "[[pattern]]\nname = \"a2a\"\nkind = \"all-to-all\"\ngpus = " + gpus +
         "\nbytes = \"2MB\"\n" + extra + "\n";
}

/// Every ordered pair of distinct members of each group, groups in order.
std::vector<Pair> expected_all_to_all(const std::vector<std::vector<GpuId>>& groups) {
  std::vector<Pair> out;
  for (const auto& group : groups) {
    for (const GpuId a : group) {
      for (const GpuId b : group) {
        if (a != b) out.emplace_back(a, b);
      }
    }
  }
  return out;
}

TEST_F(DagFile, AllToAllContiguousGroups) {
  const Dag dag = load(all_to_all("\"0..15\"", "group_size = 4"));
  const auto pairs = pairs_of(dag, dag.coflows()[0]);
  EXPECT_EQ(pairs.size(), 4u * 4u * 3u);
  EXPECT_EQ(pairs,
            expected_all_to_all({{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
  for (const Flow& f : dag.all_flows()) EXPECT_EQ(f.bytes, 2'000'000);
  // "contiguous" is the default.
  const Dag same = load(all_to_all("\"0..15\"", "group_size = 4\ngroups = \"contiguous\""));
  EXPECT_EQ(pairs_of(same, same.coflows()[0]), pairs);
}

TEST_F(DagFile, AllToAllStridedGroups) {
  const Dag dag = load(all_to_all("\"0..15\"", "group_size = 4\ngroups = \"strided\""));
  const auto pairs = pairs_of(dag, dag.coflows()[0]);
  EXPECT_EQ(pairs.size(), 48u);
  EXPECT_EQ(pairs,
            expected_all_to_all({{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
  // The stride is the number of groups, not the group size: 12 GPUs in 3 groups of 4.
  const Dag twelve = load(all_to_all("\"0..11\"", "group_size = 4\ngroups = \"strided\""));
  EXPECT_EQ(pairs_of(twelve, twelve.coflows()[0]),
            expected_all_to_all({{0, 3, 6, 9}, {1, 4, 7, 10}, {2, 5, 8, 11}}));
  // 12 GPUs in 6 groups of 2.
  const Dag pairs_of_two = load(all_to_all("\"0..11\"", "group_size = 2\ngroups = \"strided\""));
  EXPECT_EQ(pairs_of(pairs_of_two, pairs_of_two.coflows()[0]),
            expected_all_to_all({{0, 6}, {1, 7}, {2, 8}, {3, 9}, {4, 10}, {5, 11}}));
}

TEST_F(DagFile, AllToAllGroupsArePositionsInTheList) {
  const Dag contiguous = load(all_to_all("[5, 1, 9, 2]", "group_size = 2"));
  EXPECT_EQ(pairs_of(contiguous, contiguous.coflows()[0]),
            (std::vector<Pair>{{5, 1}, {1, 5}, {9, 2}, {2, 9}}));
  const Dag strided = load(all_to_all("[5, 1, 9, 2]", "group_size = 2\ngroups = \"strided\""));
  EXPECT_EQ(pairs_of(strided, strided.coflows()[0]),
            (std::vector<Pair>{{5, 9}, {9, 5}, {1, 2}, {2, 1}}));
  // Without group_size, one group of everything.
  const Dag all = load(all_to_all("[5, 1, 9]", ""));
  EXPECT_EQ(pairs_of(all, all.coflows()[0]),
            (std::vector<Pair>{{5, 1}, {5, 9}, {1, 5}, {1, 9}, {9, 5}, {9, 1}}));
}

TEST_F(DagFile, Incast) {
  const Dag dag = load(R"([[pattern]]
name = "in"
kind = "incast"
sources = "1..3"
destination = 0
bytes = "1MiB"
)");
  ASSERT_EQ(dag.coflows().size(), 1u);
  EXPECT_EQ(pairs_of(dag, dag.coflows()[0]), (std::vector<Pair>{{1, 0}, {2, 0}, {3, 0}}));
  EXPECT_EQ(dag.total_bytes(), 3 * 1'048'576);
}

TEST_F(DagFile, OneToMany) {
  const Dag dag = load(R"([[pattern]]
name = "out"
kind = "one-to-many"
source = 2
destinations = [0, 5, 1]
bytes = "3B"
)");
  EXPECT_EQ(pairs_of(dag, dag.coflows()[0]), (std::vector<Pair>{{2, 0}, {2, 5}, {2, 1}}));
  EXPECT_EQ(dag.total_bytes(), 9);
}

TEST_F(DagFile, PatternLabelsStartAndAfter) {
  Dag dag = load(R"([[task]]
name = "t"
gpu = 2
duration = "1us"

[[pattern]]
name = "out"
kind = "one-to-many"
source = 2
destinations = "5..5"
bytes = "1B"
type = "dp"
job = 1
iteration = 2
micro_batch = 3
layer = 4
stage = 5
start = "1ms"
after = "t"
)");
  const Coflow& c = dag.coflows()[0];
  EXPECT_EQ(c.labels.type, CoflowType::kDp);
  EXPECT_EQ(c.labels.job, 1u);
  EXPECT_EQ(c.labels.iteration, 2u);
  EXPECT_EQ(c.labels.micro_batch, 3u);
  EXPECT_EQ(c.labels.layer, 4u);
  EXPECT_EQ(c.labels.stage, 5u);
  EXPECT_EQ(c.earliest_start, 1'000'000'000);
  ASSERT_EQ(c.after.size(), 1u);
  EXPECT_EQ(c.after[0], (NodeRef{Kind::kTask, 0}));
  EXPECT_EQ(pairs_of(dag, c), (std::vector<Pair>{{2, 5}}));
  dag.validate(6);
}

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

// --- errors: patterns ---

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
