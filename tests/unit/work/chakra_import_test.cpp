// Chakra traces read into a Dag: ASTRA-sim's own microbenchmark traces give
// the byte counts docs/workloads.md tabulates, exactly; nodes of every type
// keep their dependencies; each malformed trace is one error line naming the
// file and the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "chakra_files.hpp"
#include "error_checks.hpp"
#include "shoal/config/config_file.hpp"
#include "shoal/core/error.hpp"
#include "shoal/work/chakra_trace.hpp"
#include "shoal/work/workload_config.hpp"
#include "shoal/work/workload_loader.hpp"

namespace shoal::work {
namespace {

using namespace chakra_test;
using shoal::test::error_of;
using shoal::test::Has;

constexpr Bytes kMiB = 1 << 20;  // the traces' comm_size

Dag load(const std::string& prefix, CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing,
         ChakraSummary* summary = nullptr) {
  Dag dag;
  ChakraOptions options;
  options.collective = algorithm;
  const ChakraSummary s = load_chakra_trace(prefix, rank_paths(prefix), options, dag);
  if (summary != nullptr) *summary = s;
  return dag;
}

std::set<std::string> after_names(const Dag& dag, std::span<const NodeRef> after) {
  std::set<std::string> names;
  for (const NodeRef r : after) names.emplace(dag.name(r));
  return names;
}

struct AstraCase {
  const char* kind;
  int npus;
  CollectiveAlgorithm algorithm;
  std::size_t coflows;
  Bytes per_npu;  // sent by each NPU, and received
};

class AstraTraces : public testing::TestWithParam<AstraCase> {};

// Each NPU sends, and receives, exactly what docs/workloads.md's table says:
// ring all-reduce 2(N-1) x S/N, all-gather (N-1) x S, reduce-scatter
// (N-1) x S/N, all-to-all (N-1) x S/2 relayed; direct all-to-all (N-1) x S/N.
TEST_P(AstraTraces, BytesPerNpuAsDocumented) {
  const AstraCase& c = GetParam();
  const Dag dag = load(astra_trace(c.kind, c.npus), c.algorithm);
  dag.validate(static_cast<GpuId>(c.npus));
  EXPECT_EQ(dag.tasks().size(), 0u);
  EXPECT_EQ(dag.coflows().size(), c.coflows);
  std::map<GpuId, Bytes> sent, received;
  for (const Flow& f : dag.all_flows()) {
    sent[f.src] += f.bytes;
    received[f.dst] += f.bytes;
  }
  ASSERT_EQ(sent.size(), static_cast<std::size_t>(c.npus));
  for (GpuId g = 0; g < static_cast<GpuId>(c.npus); ++g) {
    EXPECT_EQ(sent[g], c.per_npu) << "NPU " << g;
    EXPECT_EQ(received[g], c.per_npu) << "NPU " << g;
  }
  // Ring steps run one after the other; the first waits for nothing.
  for (std::size_t i = 0; i < dag.coflows().size(); ++i) {
    EXPECT_EQ(dag.coflows()[i].after.size(), i == 0 ? 0u : 1u);
  }
}

constexpr auto kRing = CollectiveAlgorithm::kRing;
constexpr auto kDirect = CollectiveAlgorithm::kDirect;

INSTANTIATE_TEST_SUITE_P(Chakra, AstraTraces,
                         testing::Values(AstraCase{"all_reduce", 4, kRing, 6, 1572864},
                                         AstraCase{"all_reduce", 8, kRing, 14, 1835008},
                                         AstraCase{"all_reduce", 16, kRing, 30, 1966080},
                                         AstraCase{"all_gather", 4, kRing, 3, 3145728},
                                         AstraCase{"all_gather", 8, kRing, 7, 7340032},
                                         AstraCase{"all_gather", 16, kRing, 15, 15728640},
                                         AstraCase{"reduce_scatter", 4, kRing, 3, 786432},
                                         AstraCase{"reduce_scatter", 8, kRing, 7, 917504},
                                         AstraCase{"reduce_scatter", 16, kRing, 15, 983040},
                                         AstraCase{"all_to_all", 4, kRing, 3, 1572864},
                                         AstraCase{"all_to_all", 8, kRing, 7, 3670016},
                                         AstraCase{"all_to_all", 16, kRing, 15, 7864320},
                                         AstraCase{"all_reduce", 8, kDirect, 1, 1835008},
                                         AstraCase{"all_gather", 8, kDirect, 1, 7340032},
                                         AstraCase{"reduce_scatter", 8, kDirect, 1, 917504},
                                         AstraCase{"all_to_all", 4, kDirect, 1, 786432},
                                         AstraCase{"all_to_all", 8, kDirect, 1, 917504},
                                         AstraCase{"all_to_all", 16, kDirect, 1, 983040}),
                         [](const testing::TestParamInfo<AstraCase>& info) {
                           return std::string(info.param.kind) + "_" +
                                  std::to_string(info.param.npus) + "_" +
                                  std::string(collective_algorithm_name(info.param.algorithm));
                         });

TEST(ChakraImport, RingAllToAllRelaysChunksThroughNeighbours) {
  const Dag dag = load(astra_trace("all_to_all", 4));
  ASSERT_EQ(dag.coflows().size(), 3u);
  // Step j carries the 4 - j chunks of S/4 still on their way, to the next NPU.
  const Bytes chunk = kMiB / 4;
  for (std::size_t j = 0; j < 3; ++j) {
    const Coflow& c = dag.coflows()[j];
    EXPECT_EQ(c.name, "all_to_all_4npus_1MB.step" + std::to_string(j + 1));
    ASSERT_EQ(c.flow_count, 4u);
    for (const Flow& f : dag.flows_of(c)) {
      EXPECT_EQ(f.dst, (f.src + 1) % 4);
      EXPECT_EQ(f.bytes, static_cast<Bytes>(3 - j) * chunk);
    }
  }
}

TEST(ChakraImport, SummaryOfAnAstraTrace) {
  ChakraSummary s;
  load(astra_trace("all_reduce", 4), kRing, &s);
  EXPECT_EQ(s.npus, 4u);
  EXPECT_EQ(s.nodes, 4u);
  EXPECT_EQ(s.collectives.at("all-reduce"), 1u);
  EXPECT_EQ(s.coflows, 6u);
  const std::string line = s.line();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_TRUE(Has(line,
                  "4 NPUs, 4 nodes: 0 compute tasks, 0 messages, 1 collective (1 "
                  "all-reduce), as 6 coflows; 0 zero-time nodes; not modelled: nothing"));
}

TEST(ChakraImport, TheLoaderReadsTheFormatByName) {
  Dag dag;
  load_workload(astra_trace("all_gather", 4), "chakra", dag);
  EXPECT_EQ(dag.coflows().size(), 3u);
}

TEST(ChakraImport, EveryNodeTypeKeepsItsDependencies) {
  const Scratch dir;
  et::Node meta = node(1, et::METADATA_NODE);
  et::Node load = node(2, et::MEM_LOAD_NODE, {1});
  with(load, "tensor_size", 4096);
  et::Node work = compute(3, 7, {2});
  work.set_start_time_micros(99);
  with(work, "is_cpu_op", 1);  // a CPU op runs on the GPU's timeline in Shoal: counted
  et::Node store = node(4, et::MEM_STORE_NODE, {3});
  et::Node invalid = node(5, et::INVALID_NODE, {4});
  et::Node storage = node(6, et::STORAGE_NODE, {5});
  et::Node batch = node(7, et::BATCH_NODE, {6});
  et::Node checkpoint = node(8, et::CHECKPOINT_NODE, {7});
  dir.write(0, {meta, load, work, store, invalid, storage, batch, checkpoint});
  ChakraSummary s;
  const Dag dag = [&] {
    Dag d;
    s = load_chakra_trace(dir.prefix(), rank_paths(dir.prefix()), {}, d);
    return d;
  }();
  dag.validate(1);
  ASSERT_EQ(dag.tasks().size(), 8u);
  for (const ComputeTask& t : dag.tasks()) {
    EXPECT_EQ(t.duration, t.name == "npu0.3" ? 7 * kMicrosecond : 0) << t.name;
  }
  EXPECT_EQ(after_names(dag, dag.tasks()[7].after), std::set<std::string>{"npu0.7"});
  EXPECT_EQ(s.zero_time.size(), 7u);
  const std::string line = s.line();
  EXPECT_TRUE(Has(line, "1 NPU, 8 nodes: 1 compute task, 0 messages, 0 collectives"));
  EXPECT_TRUE(Has(line,
                  "7 zero-time nodes (1 BATCH_NODE, 1 CHECKPOINT_NODE, 1 INVALID_NODE, 1 "
                  "MEM_LOAD_NODE, 1 MEM_STORE_NODE, 1 METADATA_NODE, 1 STORAGE_NODE)"));
  EXPECT_TRUE(Has(line,
                  "not modelled: attribute is_cpu_op (true) (1), attribute tensor_size (1), "
                  "field start_time_micros (1)"));
}

TEST(ChakraImport, ComputeTimesFromDurationExactPicosecondsOrOps) {
  const Scratch dir;
  et::Node exact = compute(1, 2);
  with(exact, "shoal_duration_ps", 2'345'678);
  et::Node stale = compute(2, 9);
  with(stale, "shoal_duration_ps", 2'345'678);  // edited since: duration_micros wins
  et::Node ops = compute(3, 1);
  with(ops, "num_ops", 3'000'000);
  dir.write(0, {exact, stale, ops});
  Dag plain, rated;
  const ChakraSummary s = load_chakra_trace(dir.prefix(), rank_paths(dir.prefix()), {}, plain);
  EXPECT_EQ(plain.tasks()[0].duration, 2'345'678);
  EXPECT_EQ(plain.tasks()[1].duration, 9 * kMicrosecond);
  EXPECT_EQ(plain.tasks()[2].duration, 1 * kMicrosecond);
  EXPECT_TRUE(Has(s.line(), "attribute num_ops (1)"));
  EXPECT_TRUE(Has(s.line(), "attribute shoal_duration_ps (disagrees with duration_micros) (1)"));
  ChakraOptions options;
  options.flops_per_second = 1e12;  // 3e6 ops: 3 us
  const ChakraSummary r = load_chakra_trace(dir.prefix(), rank_paths(dir.prefix()), options, rated);
  EXPECT_EQ(rated.tasks()[2].duration, 3 * kMicrosecond);
  EXPECT_TRUE(Has(r.line(), "(1 timed by num_ops)"));
}

TEST(ChakraImport, SendsMeetReceivesByTagInOrder) {
  const Scratch dir;
  dir.write(0,
            {compute(1, 1), send(2, 1, 100, 7, {1}), send(3, 1, 200, 7, {1}), send(4, 1, 50, 8)});
  // NPU 1 receives tag 8 first; tag 7's two messages meet in their order.
  dir.write(1, {receive(10, 0, 50, 8), receive(11, 0, 100, 7), receive(12, 0, 200, 7, {10}),
                compute(13, 1, {11, 12})});
  Dag dag;
  const ChakraSummary s = load_chakra_trace(dir.prefix(), rank_paths(dir.prefix()), {}, dag);
  dag.validate(2);
  EXPECT_EQ(s.messages, 3u);
  ASSERT_EQ(dag.coflows().size(), 3u);
  EXPECT_EQ(dag.flows_of(dag.coflows()[0])[0].bytes, 100);
  EXPECT_EQ(dag.flows_of(dag.coflows()[1])[0].bytes, 200);
  EXPECT_EQ(dag.flows_of(dag.coflows()[2])[0].bytes, 50);
  EXPECT_EQ(after_names(dag, dag.coflows()[0].after), std::set<std::string>{"npu0.1"});
  // Receive 12 waits for receive 10 too: a zero-time task after it and its flow.
  const auto wait = dag.find("npu1.12");
  ASSERT_TRUE(wait.has_value());
  const ComputeTask& t = dag.tasks()[wait->index];
  EXPECT_EQ(t.gpu, 1u);
  EXPECT_EQ(t.duration, 0);
  EXPECT_EQ(after_names(dag, t.after), (std::set<std::string>{"npu0.3", "npu0.4"}));
  const ComputeTask& last = dag.tasks()[dag.find("npu1.13")->index];
  EXPECT_EQ(after_names(dag, last.after), (std::set<std::string>{"npu0.2", "npu1.12"}));
  EXPECT_EQ(s.join_tasks, 1u);
}

TEST(ChakraImport, CollectivesMatchByGroupAndTypeAndPlaceNpusOnGpus) {
  const Scratch dir;
  // NPUs 0-3; group "1" is NPUs 0 and 2 only. Each NPU: an all-reduce of
  // everyone, then (0 and 2) an all-gather in group 1 after it.
  for (int r = 0; r < 4; ++r) {
    std::vector<et::Node> nodes = {collective(1, et::ALL_REDUCE, 4000)};
    if (r % 2 == 0) {
      et::Node gather = collective(2, et::ALL_GATHER, 10, {1});
      with_text(gather, "pg_name", "1");
      nodes.push_back(gather);
    }
    dir.write(r, nodes);
  }
  Dag dag;
  ChakraOptions options;
  options.collective = kDirect;
  options.gpus = {40, 41, 42, 43};
  load_chakra_trace(dir.prefix(), rank_paths(dir.prefix()), options, dag);
  dag.validate(64);
  ASSERT_EQ(dag.coflows().size(), 2u);
  const Coflow& reduce = dag.coflows()[0];
  EXPECT_EQ(reduce.flow_count, 12u);
  for (const Flow& f : dag.flows_of(reduce)) {
    EXPECT_GE(f.src, 40u);
    EXPECT_EQ(f.bytes, 2 * 4000 / 4);
  }
  const Coflow& gather = dag.coflows()[1];
  ASSERT_EQ(gather.flow_count, 2u);
  EXPECT_EQ(dag.flows_of(gather)[0].src, 40u);
  EXPECT_EQ(dag.flows_of(gather)[0].dst, 42u);
  EXPECT_EQ(after_names(dag, gather.after), std::set<std::string>{std::string(reduce.name)});

  options.gpus = {1, 2};
  Dag again;
  EXPECT_TRUE(Has(
      error_of([&] { load_chakra_trace(dir.prefix(), rank_paths(dir.prefix()), options, again); }),
      "gpus lists 2 GPUs for 4 NPUs"));
}

TEST(ChakraImport, RootedCollectivesAndBarriers) {
  // Direct broadcast: only the root sends; the others' own dependencies make
  // zero-time tasks after their arrival.
  const Scratch dir;
  for (int r = 0; r < 3; ++r) dir.write(r, {compute(1, 1), collective(2, et::BROADCAST, 90, {1})});
  Dag dag;
  ChakraOptions options;
  options.collective = kDirect;
  const ChakraSummary s = load_chakra_trace(dir.prefix(), rank_paths(dir.prefix()), options, dag);
  dag.validate(3);
  ASSERT_EQ(dag.coflows().size(), 1u);
  for (const Flow& f : dag.flows_of(dag.coflows()[0])) EXPECT_EQ(f.src, 0u);
  EXPECT_EQ(s.join_tasks, 2u);
  const Scratch barrier;
  for (int r = 0; r < 3; ++r) {
    et::Node b = node(1, et::COMM_COLL_NODE);
    with(b, "comm_type", et::BARRIER);
    barrier.write(r, {b});
  }
  const Dag ring = load(barrier.prefix());
  ASSERT_EQ(ring.coflows().size(), 2u);
  for (const Flow& f : ring.all_flows()) EXPECT_EQ(f.bytes, 1);
}

TEST(ChakraImport, ACollectiveOfOneNpuIsAZeroTimeTask) {
  const Scratch dir;
  dir.write(0, {collective(1, et::ALL_REDUCE, 64)});
  ChakraSummary s;
  const Dag dag = load(dir.prefix(), kRing, &s);
  EXPECT_EQ(dag.coflows().size(), 0u);
  ASSERT_EQ(dag.tasks().size(), 1u);
  EXPECT_EQ(dag.tasks()[0].duration, 0);
  EXPECT_EQ(s.single_npu_collectives, 1u);
}

TEST(ChakraImport, AnotherVersionIsReadAndNamed) {
  const Scratch dir;
  dir.write(0, {compute(1, 1)}, "t", "0.0.3");
  ChakraSummary s;
  load(dir.prefix(), kRing, &s);
  EXPECT_TRUE(Has(s.line(), "version \"0.0.3\" read as 0.0.4"));
}

/// [workload] of a run config naming a trace, read for a fabric of `gpus` GPUs.
Dag read_config_workload(const Scratch& dir, const std::string& table, GpuId gpus,
                         std::vector<config::InputFile>* inputs = nullptr) {
  const std::string path = dir.prefix("run") + ".toml";
  std::ofstream(path) << table;
  config::ConfigFile config(path);
  Dag dag;
  read_workload(config, gpus, 8, dag);
  config.reject_unknown();
  if (inputs != nullptr) *inputs = config.inputs();
  return dag;
}

TEST(ChakraImport, TheRunConfigsWorkloadTable) {
  const Scratch dir;
  const std::string trace = astra_trace("all_to_all", 4);
  const std::string head = "[workload]\nformat = \"chakra\"\nfile = \"" + trace + "\"\n";
  std::vector<config::InputFile> inputs;
  const Dag dag = read_config_workload(
      dir, head + "collective = \"direct\"\ngpus = [3, 5, 7, 9]\n[gpu]\npeak_tflops = 100\n", 16,
      &inputs);
  ASSERT_EQ(dag.coflows().size(), 1u);
  std::set<GpuId> used;
  for (const Flow& f : dag.all_flows()) used.insert(f.src);
  EXPECT_EQ(used, (std::set<GpuId>{3, 5, 7, 9}));
  // Each rank file is an input of the run, for /meta and rerun.
  ASSERT_EQ(inputs.size(), 4u);
  EXPECT_EQ(inputs[3].name, trace + ".3.et");
  EXPECT_EQ(inputs[3].role, "workload");
  const std::string config = "config " + dir.prefix("run") + ".toml: ";
  EXPECT_EQ(error_of([&] { read_config_workload(dir, head + "collective = \"tree\"\n", 16); }),
            config +
                "workload.collective: unknown collective algorithm \"tree\" (use ring or "
                "direct)");
  EXPECT_EQ(error_of([&] { read_config_workload(dir, head + "gpus = [0, 1, 2, 16]\n", 16); }),
            config + "workload.gpus: GPU 16 is outside the fabric (GPUs 0..15)");
  EXPECT_EQ(error_of([&] { read_config_workload(dir, head, 2); }),
            "chakra trace " + trace +
                ": 4 NPUs on a fabric of 2 GPUs (place them with [workload] gpus = [...])");
  EXPECT_EQ(error_of([&] { read_config_workload(dir, head + "[gpu]\nefficiency = 0.5\n", 16); }),
            config + "gpu.efficiency needs gpu.peak_tflops");
}

// ---- malformed traces: one line naming the file and the node ----

std::string trace_error(const Scratch& dir) {
  Dag dag;
  const std::string message =
      error_of([&] { load_chakra_trace(dir.prefix(), rank_paths(dir.prefix()), {}, dag); });
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

TEST(ChakraErrors, AMissingRankFile) {
  const Scratch dir;
  dir.write(0, {compute(1, 1)});
  dir.write(2, {compute(1, 1)});
  const std::string message = error_of([&] { rank_paths(dir.prefix()); });
  EXPECT_EQ(message, "chakra trace " + dir.prefix() + ": " + dir.prefix() + ".2.et exists but " +
                         dir.prefix() +
                         ".1.et does not (rank files are numbered from 0 without "
                         "a gap)");
  EXPECT_TRUE(Has(error_of([&] { rank_paths(dir.prefix("none")); }),
                  "no rank file " + dir.prefix("none") + ".0.et"));
}

TEST(ChakraErrors, APeerOutsideTheTrace) {
  const Scratch dir;
  dir.write(0, {send(4, 5, 10)});
  dir.write(1, {});
  EXPECT_EQ(trace_error(dir), "chakra trace " + dir.prefix() +
                                  ".0.et, node 4: attribute comm_dst "
                                  "= 5 is outside the trace's NPUs 0..1 (a rank file missing?)");
}

TEST(ChakraErrors, ADependencyOnAnUnknownNode) {
  const Scratch dir;
  dir.write(0, {compute(1, 1), compute(3, 1, {1, 9})});
  EXPECT_EQ(trace_error(dir), "chakra trace " + dir.prefix() +
                                  ".0.et, node 3: depends on node 9, which the file does not have");
}

TEST(ChakraErrors, ACycle) {
  const Scratch dir;
  dir.write(0, {compute(1, 1), compute(2, 1, {1, 3}), compute(3, 1, {2})});
  EXPECT_TRUE(Has(trace_error(dir), ".0.et, node 2: a dependency cycle: 2 -> 3 -> 2"));
}

TEST(ChakraErrors, ACycleAcrossFilesIsTheDagsToFind) {
  // NPU 0 sends after the all-reduce, NPU 1 joins it only after the receive.
  const Scratch dir;
  dir.write(0, {collective(1, et::ALL_REDUCE, 64), send(2, 1, 8, 0, {1})});
  dir.write(1, {receive(1, 0, 8), collective(2, et::ALL_REDUCE, 64, {1})});
  Dag dag;
  load_chakra_trace(dir.prefix(), rank_paths(dir.prefix()), {}, dag);
  EXPECT_TRUE(Has(error_of([&] { dag.validate(2); }), "the DAG has a cycle"));
}

TEST(ChakraErrors, AMessageCutShort) {
  const Scratch dir;
  const std::string path = dir.write(0, {compute(1, 1), compute(2, 1, {1})});
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 2);
  EXPECT_TRUE(Has(trace_error(dir),
                  ".0.et: message 3 (a node, after node 1) is cut short: its "
                  "length says"));
}

TEST(ChakraErrors, AnUnknownNodeType) {
  const Scratch dir;
  et::Node odd = compute(6, 1);
  odd.set_type(static_cast<et::NodeType>(42));
  dir.write(0, {compute(1, 1), odd});
  EXPECT_EQ(trace_error(dir), "chakra trace " + dir.prefix() +
                                  ".0.et, node 6: unknown node type 42 (Chakra's are 0 "
                                  "INVALID_NODE to 10 CHECKPOINT_NODE)");
}

TEST(ChakraErrors, UnmatchedMessagesAndUnequalCollectives) {
  const Scratch dir;
  dir.write(0, {send(1, 1, 10, 3)});
  dir.write(1, {receive(5, 0, 10, 4)});
  EXPECT_TRUE(Has(trace_error(dir), ".0.et, node 1: a send to NPU 1 (tag 3) that " + dir.prefix() +
                                        ".1.et never receives"));
  const Scratch receive_only;
  receive_only.write(0, {compute(1, 1)});
  receive_only.write(1, {receive(5, 0, 10, 4)});
  EXPECT_TRUE(Has(trace_error(receive_only), ".1.et, node 5: a receive from NPU 0 (tag 4) that " +
                                                 receive_only.prefix() + ".0.et never sends"));
  const Scratch unequal;
  unequal.write(0, {collective(1, et::ALL_REDUCE, 64)});
  unequal.write(1, {collective(1, et::ALL_REDUCE, 32)});
  EXPECT_TRUE(Has(trace_error(unequal),
                  ".1.et, node 1: comm_size 32 for all-reduce number 1, "
                  "which " +
                      unequal.prefix() + ".0.et (node 1) gives 64 bytes"));
}

TEST(ChakraErrors, MalformedNodesAndFiles) {
  const Scratch dir;
  dir.write(0, {compute(1, 1), compute(1, 1)});
  EXPECT_TRUE(Has(trace_error(dir), ".0.et, node 1: the id is used twice"));
  const Scratch no_size;
  no_size.write(0, {node(2, et::COMM_COLL_NODE)});
  EXPECT_TRUE(Has(trace_error(no_size),
                  ".0.et, node 2: a COMM_COLL_NODE without the attribute "
                  "comm_type"));
  const Scratch empty;
  std::ofstream(empty.prefix() + ".0.et").close();
  EXPECT_TRUE(Has(trace_error(empty), ".0.et: the file is empty"));
  const Scratch garbage;
  // A field of 5 bytes in a message of 3.
  std::ofstream(garbage.prefix() + ".0.et") << std::string("\x03\x0a\x05\x61", 4);
  EXPECT_TRUE(Has(trace_error(garbage), ".0.et: message 1 is not a GlobalMetadata"));
}

}  // namespace
}  // namespace shoal::work
