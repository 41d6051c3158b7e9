// Chakra traces for the tests: ASTRA-sim's files in tests/data/chakra, and
// traces written node by node (malformed ones too) into a scratch folder.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <google/protobuf/util/delimited_message_util.h>

#include "chakra_et.pb.h"
#include "shoal/work/chakra_trace.hpp"

namespace shoal::work::chakra_test {

namespace et = shoal::chakra_et;

/// tests/data/chakra/KIND/Nnpus_1MB/KIND: an ASTRA-sim microbenchmark trace.
inline std::string astra_trace(const std::string& kind, int npus) {
  return std::string(SHOAL_TEST_DATA_DIR) + "/chakra/" + kind + "/" + std::to_string(npus) +
         "npus_1MB/" + kind;
}

/// The rank files of a trace on disk, as the config reader finds them.
inline std::vector<std::string> rank_paths(const std::string& prefix) {
  return chakra_rank_names(prefix, [](const std::string& name) { return name; });
}

/// A folder of its own for one test's traces, removed at the end.
class Scratch {
 public:
  Scratch() {
    static int counter = 0;
    std::string test = testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : test) {
      if (c == '/') c = '_';
    }
    path_ = std::filesystem::temp_directory_path() /
            ("shoal_chakra_" + test + "_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  /// DIR/NAME for a trace in this folder.
  std::string prefix(const std::string& name = "t") const { return (path_ / name).string(); }

  /// Writes NAME.RANK.et: the metadata, then `nodes`.
  std::string write(int rank, const std::vector<et::Node>& nodes, const std::string& name = "t",
                    const std::string& version = "0.0.4") const {
    const std::string path = prefix(name) + "." + std::to_string(rank) + ".et";
    std::ofstream out(path, std::ios::binary);
    et::GlobalMetadata metadata;
    metadata.set_version(version);
    google::protobuf::util::SerializeDelimitedToOstream(metadata, &out);
    for (const et::Node& n : nodes) google::protobuf::util::SerializeDelimitedToOstream(n, &out);
    return path;
  }

 private:
  std::filesystem::path path_;
};

inline et::Node node(std::uint64_t id, et::NodeType type, std::vector<std::uint64_t> deps = {}) {
  et::Node n;
  n.set_id(id);
  n.set_type(type);
  for (const std::uint64_t d : deps) n.add_data_deps(d);
  return n;
}

inline et::Node& with(et::Node& n, const std::string& name, std::int64_t value) {
  et::AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(value);
  return n;
}

inline et::Node& with_text(et::Node& n, const std::string& name, const std::string& value) {
  et::AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(value);
  return n;
}

inline et::Node compute(std::uint64_t id, std::uint64_t micros,
                        std::vector<std::uint64_t> deps = {}) {
  et::Node n = node(id, et::COMP_NODE, std::move(deps));
  n.set_duration_micros(micros);
  return n;
}

inline et::Node send(std::uint64_t id, std::int64_t dst, std::int64_t bytes, std::int64_t tag = 0,
                     std::vector<std::uint64_t> deps = {}) {
  et::Node n = node(id, et::COMM_SEND_NODE, std::move(deps));
  with(n, "comm_dst", dst);
  with(n, "comm_size", bytes);
  return with(n, "comm_tag", tag);
}

inline et::Node receive(std::uint64_t id, std::int64_t src, std::int64_t bytes,
                        std::int64_t tag = 0, std::vector<std::uint64_t> deps = {}) {
  et::Node n = node(id, et::COMM_RECV_NODE, std::move(deps));
  with(n, "comm_src", src);
  with(n, "comm_size", bytes);
  return with(n, "comm_tag", tag);
}

inline et::Node collective(std::uint64_t id, et::CollectiveCommType type, std::int64_t bytes,
                           std::vector<std::uint64_t> deps = {}) {
  et::Node n = node(id, et::COMM_COLL_NODE, std::move(deps));
  with(n, "comm_type", type);
  return with(n, "comm_size", bytes);
}

}  // namespace shoal::work::chakra_test
