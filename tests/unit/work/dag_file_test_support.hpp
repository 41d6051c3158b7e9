// What the workload file's tests share: the DagFile fixture, which writes workload
// text to temporary files and loads it, and the text of a few patterns.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "error_checks.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/dag_file.hpp"

namespace shoal::work::dag_file_test {

using Kind = NodeRef::Kind;
using Pair = std::pair<GpuId, GpuId>;

inline std::vector<Pair> pairs_of(const Dag& dag, const Coflow& c) {
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
    return named_file(shoal::test::error_of([&] { load_dag_file(path, dag); }), path);
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

inline std::string permutation(const std::string& gpus, const std::string& seed_line) {
  return "[[pattern]]\nname = \"perm\"\nkind = \"permutation\"\ngpus = " + gpus +
         "\nbytes = \"1MiB\"\n" + seed_line + "\n";
}

inline std::string all_to_all(const std::string& gpus, const std::string& extra) {
  return "[[pattern]]\nname = \"a2a\"\nkind = \"all-to-all\"\ngpus = " + gpus +
         "\nbytes = \"2MB\"\n" + extra + "\n";
}

}  // namespace shoal::work::dag_file_test
