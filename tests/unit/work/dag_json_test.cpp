// JSON workload files read into the same DAG as their TOML twins.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "shoal/core/error.hpp"
#include "shoal/work/dag_file.hpp"
#include "shoal/work/workload_loader.hpp"

namespace shoal::work {
namespace {

/// This process's folder for the test files, removed when the tests end.
const std::filesystem::path& scratch() {
  struct Folder {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("shoal_dag_json_" + std::to_string(::getpid()));
    Folder() { std::filesystem::create_directories(path); }
    ~Folder() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Folder folder;
  return folder.path;
}

std::string write(const std::string& name, const std::string& text) {
  const auto path = scratch() / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string error_of(const std::string& path) {
  try {
    Dag dag;
    load_workload(path, "auto", dag);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DagJson, SameDagAsTheTomlTwin) {
  const std::string toml = write("twin.toml", R"([[task]]
name = "fwd"
gpu = 2
duration = "5us"
[[coflow]]
name = "a2a"
type = "EP"
layer = 3
micro_batch = 1
after = "fwd"
start = "1us"
flows = [{ src = 2, dst = 3, bytes = "1MiB" }, { src = 3, dst = 2, bytes = "2MB" }]
[[pattern]]
name = "p"
kind = "permutation"
gpus = "0..7"
bytes = "64KiB"
seed = 4
)");
  const std::string json = write("twin.json", R"({
  "task": [{"name": "fwd", "gpu": 2, "duration": "5us"}],
  "coflow": [{"name": "a2a", "type": "EP", "layer": 3, "micro_batch": 1, "after": "fwd",
              "start": "1us",
              "flows": [{"src": 2, "dst": 3, "bytes": "1MiB"}, {"src": 3, "dst": 2, "bytes": "2MB"}]}],
  "pattern": [{"name": "p", "kind": "permutation", "gpus": "0..7", "bytes": "64KiB", "seed": 4}]
})");
  Dag a, b;
  load_workload(toml, "auto", a);
  load_workload(json, "auto", b);
  ASSERT_EQ(a.tasks().size(), b.tasks().size());
  ASSERT_EQ(a.coflows().size(), b.coflows().size());
  ASSERT_EQ(a.all_flows().size(), b.all_flows().size());
  EXPECT_EQ(b.tasks()[0].gpu, 2u);
  EXPECT_EQ(b.tasks()[0].duration, 5 * kMicrosecond);
  for (std::size_t c = 0; c < a.coflows().size(); ++c) {
    EXPECT_EQ(a.coflows()[c].name, b.coflows()[c].name);
    EXPECT_EQ(a.coflows()[c].labels.layer, b.coflows()[c].labels.layer);
    EXPECT_EQ(a.coflows()[c].labels.micro_batch, b.coflows()[c].labels.micro_batch);
    EXPECT_EQ(a.coflows()[c].earliest_start, b.coflows()[c].earliest_start);
    EXPECT_TRUE(std::ranges::equal(a.coflows()[c].after, b.coflows()[c].after));
  }
  for (std::size_t f = 0; f < a.all_flows().size(); ++f) {
    EXPECT_EQ(a.all_flows()[f].src, b.all_flows()[f].src);
    EXPECT_EQ(a.all_flows()[f].dst, b.all_flows()[f].dst);
    EXPECT_EQ(a.all_flows()[f].bytes, b.all_flows()[f].bytes);
  }
  EXPECT_EQ(b.all_flows()[1].bytes, 2'000'000);
}

TEST(DagJson, ErrorsNameTheFileAndTheEntry) {
  const std::string typo =
      write("typo.json", R"({"task": [{"name": "t", "gpu": 0, "duraton": "1us"}]})");
  EXPECT_EQ(error_of(typo), "workload " + typo + ": task \"t\": unknown key 'duraton'");
  const std::string type =
      write("type.json", R"({"task": [{"name": "t", "gpu": "0", "duration": "1us"}]})");
  EXPECT_EQ(error_of(type), "workload " + type + ": task \"t\": 'gpu' must be an integer");
  const std::string broken = write("broken.json", R"({"task": [)");
  EXPECT_EQ(error_of(broken).rfind("workload " + broken + ", byte ", 0), 0u) << error_of(broken);
  const std::string list = write("list.json", R"([1, 2])");
  EXPECT_NE(error_of(list).find("must be an object"), std::string::npos);
  const std::string null = write("null.json", R"({"task": [{"name": null}]})");
  EXPECT_NE(error_of(null).find("null is not a value"), std::string::npos);
  const std::string top = write("top.json", R"({"tasks": []})");
  EXPECT_NE(error_of(top).find("unknown key 'tasks'"), std::string::npos);
}

// Each of these escaped as another exception, read a wrong value or crashed: the
// first found by fuzzing (tests/fuzz), the others while writing its targets.
TEST(DagJson, ValuesJsonCannotHoldAreErrors) {
  // nlohmann throws out_of_range, not parse_error, for a number beyond a double.
  const std::string huge = write("huge.json", R"({"task": [{"name": "t", "gpu": 1e400}]})");
  EXPECT_EQ(error_of(huge).rfind("workload " + huge + ": not valid JSON (", 0), 0u)
      << error_of(huge);
  // Above int64: was read as a negative number.
  const std::string wide =
      write("wide.json", R"({"task": [{"name": "t", "gpu": 18446744073709551615}]})");
  EXPECT_EQ(error_of(wide), "workload " + wide +
                                ": the number 18446744073709551615 is too large (integers go up "
                                "to 9223372036854775807)");
}

TEST(DagJson, DeepNestingIsAnErrorNotAStackOverflow) {
  const int depth = 200'000;
  const std::string arrays = write(
      "deep-arrays.json", "{\"task\": " + std::string(depth, '[') + std::string(depth, ']') + "}");
  EXPECT_EQ(error_of(arrays), "workload " + arrays +
                                  ": objects and arrays nested deeper than 64 levels (a "
                                  "workload needs 5)");
  std::string objects = "{\"task\": ";
  for (int i = 0; i < depth; ++i) objects += "{\"a\": ";
  objects += "1" + std::string(depth + 1, '}');
  const std::string deep_objects = write("deep-objects.json", objects);
  EXPECT_NE(error_of(deep_objects).find("nested deeper than 64 levels"), std::string::npos);
}

TEST(DagJson, FormatNamesAreChecked) {
  Dag dag;
  EXPECT_THROW(load_workload(write("x.toml", ""), "yaml", dag), Error);
}

}  // namespace
}  // namespace shoal::work
