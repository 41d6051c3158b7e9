// Sweep files: expansion order, stable names, overrides as TOML literals, and
// one-line errors for every kind of mistake.
#include "shoal/config/sweep_file.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "error_checks.hpp"

namespace shoal::config {
namespace {

using shoal::test::error_of;
using shoal::test::Has;

constexpr const char* kFlagshipLike = R"(
[sweep]
base = "base.toml"
gpus_per_rank = 2048
max_ranks = 3

[set]
network.cell_size = "256KiB"
run.seed = 7

[axes]
topology.gpus = [1024, 2048, 4096, 8192]
topology.link_rate = ["40Gbps", "400Gbps"]
policy.name = ["fair", "ep-pp-first"]
)";

TEST(SweepFile, ExpandsInFileOrderWithTheLastAxisFastest) {
  const Sweep s = parse_sweep(kFlagshipLike, "configs/flagship/sweep.toml");
  ASSERT_EQ(s.axes.size(), 3u);
  EXPECT_EQ(s.axes[0].key, "topology.gpus");  // toml++ would sort policy first
  EXPECT_EQ(s.axes[1].key, "topology.link_rate");
  EXPECT_EQ(s.axes[2].key, "policy.name");
  EXPECT_EQ(s.size(), 16u);
  EXPECT_EQ(s.base, "configs/flagship/base.toml");
  EXPECT_EQ(s.gpus_per_rank, 2048);
  EXPECT_EQ(s.max_ranks, 3);

  const SweepPoint first = s.point(0);
  EXPECT_EQ(first.name, "gpus-1024_link-rate-40Gbps_policy-fair");
  const SweepPoint p = s.point(13);  // 13 = 3*4 + 0*2 + 1
  EXPECT_EQ(p.index, 13u);
  EXPECT_EQ(p.name, "gpus-8192_link-rate-40Gbps_policy-ep-pp-first");
  const std::vector<std::string> overrides{"network.cell_size=\"256KiB\"", "run.seed=7",
                                           "topology.gpus=8192", "topology.link_rate=\"40Gbps\"",
                                           "policy.name=\"ep-pp-first\""};
  EXPECT_EQ(p.overrides, overrides);
  EXPECT_TRUE(Has(error_of([&] { s.point(16); }), "point 16 does not exist (0 to 15)"));
}

TEST(SweepFile, NamesAreUniqueAndStable) {
  const Sweep s = parse_sweep(kFlagshipLike, "sweep.toml");
  std::set<std::string> names;
  for (std::size_t i = 0; i < s.size(); ++i) names.insert(s.point(i).name);
  EXPECT_EQ(names.size(), s.size());
  // Same file, same names: nothing depends on the run or the machine.
  EXPECT_EQ(parse_sweep(kFlagshipLike, "sweep.toml").point(7).name, s.point(7).name);
}

TEST(SweepFile, ValuesBecomeTomlLiteralsThatConfigFilesRead) {
  const Sweep s = parse_sweep(R"(
[sweep]
base = "/abs/base.toml"
[axes]
run.seed = [1, -2]
network.x = [0.5, 2.0, 1e-3]
policy.compare = [["fair", "hermod"]]
run.flag = [true, false]
output.file = ["a \"q\" b"]
)",
                              "dir/s.toml");
  EXPECT_EQ(s.base, "/abs/base.toml");
  ASSERT_EQ(s.axes.size(), 5u);
  EXPECT_EQ(s.axes[0].values, (std::vector<std::string>{"1", "-2"}));
  EXPECT_EQ(s.axes[1].values, (std::vector<std::string>{"0.5", "2.0", "0.001"}));
  EXPECT_EQ(s.axes[2].values, (std::vector<std::string>{"[\"fair\", \"hermod\"]"}));
  EXPECT_EQ(s.axes[2].labels, (std::vector<std::string>{"fair+hermod"}));
  EXPECT_EQ(s.axes[3].values, (std::vector<std::string>{"true", "false"}));
  EXPECT_EQ(s.axes[4].values, (std::vector<std::string>{"\"a \\\"q\\\" b\""}));
  EXPECT_EQ(s.axes[4].labels, (std::vector<std::string>{"a--q--b"}));
}

TEST(SweepFile, ResultsFolderDefaultsToTheFileName) {
  EXPECT_EQ(parse_sweep("[sweep]\nbase = \"b.toml\"\n", "x/flag.toml").results_folder(),
            "results/flag");
  const Sweep s = parse_sweep("[sweep]\nbase = \"b.toml\"\nresults = \"out/r\"\n", "x/flag.toml");
  EXPECT_EQ(s.results_folder(), "out/r");
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.point(0).name, "base");
}

TEST(SweepFile, MistakesAreOneLineErrors) {
  auto err = [](const std::string& text) { return error_of([&] { parse_sweep(text, "s.toml"); }); };
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axis]\n"),
                  "sweep s.toml, line 3: axis: unknown table; a sweep file has [sweep], [set] and "
                  "[axes]"));
  EXPECT_TRUE(Has(err("[axes]\ntopology.gpus = [1]\n"), "sweep s.toml: sweep.base: missing"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\nrank = 2\n"), "sweep.rank: unknown key"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\nranks = 0\n"),
                  "sweep.ranks: must be a whole number from 1 to 1000000"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\nranks = 2\ngpus_per_rank = 8\n"),
                  "give ranks (the same for every point) or gpus_per_rank, not both"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axes]\ntopology.gpus = []\n"),
                  "line 4: axes.topology.gpus: an axis is a non-empty array"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axes]\ntopology.gpus = 1024\n"),
                  "axes.topology.gpus: an axis is a non-empty array"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axes]\ngpus = [1]\n"),
                  "axes.gpus: expected TABLE.KEY = value"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axes]\na.b.c = [1]\n"),
                  "axes.a.b: expected TABLE.KEY = value: one level of table only"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[set]\nrun.seed = 1\n[axes]\nrun.seed = [2]\n"),
                  "axes.run.seed: also in [set]"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axes]\ntopology.link_rate = [\"1 G\", \"1-G\"]\n"),
                  "two values name the same point (\"1-G\")"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axes]\nrun.end = [1979-05-27]\n"),
                  "values are strings, numbers, booleans or arrays"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axes]\nrun.x = [nan]\n"), "must be finite"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axes]\nrun.x = [\"\"]\n"),
                  "an empty value cannot name a point"));
  EXPECT_TRUE(Has(err("[sweep]\nbase = \"b\"\n[axes]\n"
                      "a.a = [1,2,3,4,5,6,7,8,9,10]\na.b = [1,2,3,4,5,6,7,8,9,10]\n"
                      "a.c = [1,2,3,4,5,6,7,8,9,10]\na.d = [1,2,3,4,5,6,7,8,9,10]\n"
                      "a.e = [1,2,3,4,5,6,7,8,9,10]\na.f = [1,2]\n"),
                  "more than 100000 points; split the sweep"));
  EXPECT_TRUE(Has(err("[sweep\n"), "sweep s.toml, line 1:"));
  EXPECT_TRUE(Has(error_of([] { read_sweep_file("/nonexistent/s.toml"); }),
                  "sweep /nonexistent/s.toml: no such file"));
}

}  // namespace
}  // namespace shoal::config
