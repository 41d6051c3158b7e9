// htsim connection matrices read into a Dag: flows, start times, triggers as
// dependencies, and one error line (file and line number) per malformed input.
#include "shoal/work/htsim_import.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/error.hpp"

namespace shoal::work {
namespace {

using shoal::test::error_of;

/// A matrix written to its own temporary file, removed at the end of the test.
class MatrixFile {
 public:
  explicit MatrixFile(std::string_view text) {
    static int counter = 0;
    std::string test = testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(test.begin(), test.end(), '/', '_');  // parameterized: "Test/param"
    path_ = (std::filesystem::temp_directory_path() /
             ("shoal_htsim_" + test + "_" + std::to_string(::getpid()) + "_" +
              std::to_string(counter++) + ".cm"))
                .string();
    std::ofstream(path_) << text;
  }
  ~MatrixFile() { std::filesystem::remove(path_); }
  MatrixFile(const MatrixFile&) = delete;
  MatrixFile& operator=(const MatrixFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string load_error(std::string_view text) {
  const MatrixFile file(text);
  Dag dag;
  std::string message = error_of([&] { load_htsim_connection_matrix(file.path(), dag); });
  // Report it without the temporary path, which differs from run to run.
  const std::string prefix = "htsim matrix " + file.path();
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
  if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
  return message;
}

std::vector<std::string> after_names(const Dag& dag, const Coflow& c) {
  std::vector<std::string> names;
  for (const NodeRef r : c.after) names.emplace_back(dag.name(r));
  return names;
}

const Coflow& coflow(const Dag& dag, std::string_view name) {
  const auto ref = dag.find(name);
  EXPECT_TRUE(ref && ref->kind == NodeRef::Kind::kCoflow) << name;
  return dag.coflows().at(ref ? ref->index : 0);
}

TEST(HtsimImport, PlainMatrixGivesOneCoflowPerConnection) {
  const MatrixFile file(
      "# a comment in the header\n"
      "Nodes 4\n"
      "Connections 3\n"
      "\n"
      "0->1 id 1 start 0 size 4096\n"
      "2->3 id 7 start 1500000 size 1000000 prio 3\n"
      "3->0 start 2.5e3 size 10\n");
  Dag dag;
  load_htsim_connection_matrix(file.path(), dag);
  ASSERT_EQ(dag.coflows().size(), 3u);
  ASSERT_EQ(dag.all_flows().size(), 3u);
  EXPECT_TRUE(dag.tasks().empty());

  const std::string names[] = {"htsim-1", "htsim-7", "htsim-conn3"};
  const Time starts[] = {0, 1'500'000, 2'500};
  const Flow flows[] = {{0, 1, 4096}, {2, 3, 1'000'000}, {3, 0, 10}};
  for (std::size_t i = 0; i < 3; ++i) {
    const Coflow& c = dag.coflows()[i];
    EXPECT_EQ(c.name, names[i]);
    EXPECT_EQ(c.labels.type, CoflowType::kOther);
    EXPECT_EQ(c.earliest_start, starts[i]);  // htsim's start is in picoseconds
    EXPECT_TRUE(c.after.empty());
    ASSERT_EQ(c.flow_count, 1u);
    const Flow& f = dag.flows_of(c)[0];
    EXPECT_EQ(f.src, flows[i].src);
    EXPECT_EQ(f.dst, flows[i].dst);
    EXPECT_EQ(f.bytes, flows[i].bytes);
  }
  EXPECT_EQ(dag.gpus_used(), 4u);
  EXPECT_EQ(dag.total_bytes(), 4096 + 1'000'000 + 10);
  EXPECT_NO_THROW(dag.validate(4));
}

TEST(HtsimImport, BarrierChainWaitsForEveryActivator) {
  // Hosts 0 and 2 send to 1; once 1 has both, it sends to 3; then 3 sends to 0.
  const MatrixFile file(
      "Nodes 4\n"
      "Connections 4\n"
      "Triggers 2\n"
      "0->1 id 1 start 0 size 100 recv_done_trigger 1\n"
      "2->1 id 2 start 0 size 200 recv_done_trigger 1\n"
      "1->3 id 3 trigger 1 size 300 send_done_trigger 2\n"
      "3->0 id 4 size 400 trigger 2\n"
      "trigger id 1 barrier count 2\n"
      "trigger id 2 count 1 barrier\n");
  Dag dag;
  load_htsim_connection_matrix(file.path(), dag);
  ASSERT_EQ(dag.coflows().size(), 4u);
  EXPECT_TRUE(coflow(dag, "htsim-1").after.empty());
  EXPECT_TRUE(coflow(dag, "htsim-2").after.empty());
  EXPECT_EQ(after_names(dag, coflow(dag, "htsim-3")),
            (std::vector<std::string>{"htsim-1", "htsim-2"}));
  EXPECT_EQ(after_names(dag, coflow(dag, "htsim-4")), (std::vector<std::string>{"htsim-3"}));
  EXPECT_EQ(coflow(dag, "htsim-3").earliest_start, 0);
  EXPECT_EQ(coflow(dag, "htsim-4").earliest_start, 0);
  EXPECT_NO_THROW(dag.validate(4));
}

TEST(HtsimImport, BarrierCountsBothActivationsOfOneConnection) {
  const MatrixFile file(
      "Nodes 3\n"
      "Connections 2\n"
      "Triggers 1\n"
      "0->1 id 1 start 0 size 100 send_done_trigger 5 recv_done_trigger 5\n"
      "1->2 id 2 trigger 5 size 100\n"
      "trigger id 5 barrier count 2\n");
  Dag dag;
  load_htsim_connection_matrix(file.path(), dag);
  EXPECT_EQ(after_names(dag, coflow(dag, "htsim-2")), (std::vector<std::string>{"htsim-1"}));
  EXPECT_NO_THROW(dag.validate(3));
}

TEST(HtsimImport, OneshotWithOneActivatorStartsAllItsConnections) {
  // Trigger lines may come before the connections that use them.
  const MatrixFile file(
      "Nodes 4\n"
      "Connections 3\n"
      "Triggers 1\n"
      "trigger id 9 oneshot\n"
      "0->1 id 1 start 1000 size 64 send_done_trigger 9\n"
      "0->2 id 2 trigger 9 size 64\n"
      "0->3 id 3 trigger 9 size 64\n");
  Dag dag;
  load_htsim_connection_matrix(file.path(), dag);
  EXPECT_TRUE(coflow(dag, "htsim-1").after.empty());
  EXPECT_EQ(coflow(dag, "htsim-1").earliest_start, 1000);
  EXPECT_EQ(after_names(dag, coflow(dag, "htsim-2")), (std::vector<std::string>{"htsim-1"}));
  EXPECT_EQ(after_names(dag, coflow(dag, "htsim-3")), (std::vector<std::string>{"htsim-1"}));
  EXPECT_NO_THROW(dag.validate(4));
}

TEST(HtsimImport, MultishotWithOneActivatorAndOneConnection) {
  const MatrixFile file(
      "Nodes 3\n"
      "Connections 2\n"
      "Triggers 1\n"
      "0->1 id 1 start 0 size 64 recv_done_trigger 3\n"
      "1->2 id 2 trigger 3 size 64\n"
      "trigger id 3 multishot\n");
  Dag dag;
  load_htsim_connection_matrix(file.path(), dag);
  EXPECT_EQ(after_names(dag, coflow(dag, "htsim-2")), (std::vector<std::string>{"htsim-1"}));
  EXPECT_NO_THROW(dag.validate(3));
}

TEST(HtsimImport, TriggerThatStartsNothingIsAccepted) {
  const MatrixFile file(
      "Nodes 2\n"
      "Connections 2\n"
      "Triggers 1\n"
      "0->1 id 1 start 0 size 64 send_done_trigger 3\n"
      "1->0 id 2 start 0 size 64 send_done_trigger 3\n"
      "trigger id 3 oneshot\n");
  Dag dag;
  load_htsim_connection_matrix(file.path(), dag);
  EXPECT_EQ(dag.coflows().size(), 2u);
  EXPECT_TRUE(coflow(dag, "htsim-2").after.empty());
}

TEST(HtsimImport, AppendsToADagThatHoldsNodes) {
  Dag dag;
  dag.add_task("warmup", 0, 5, {});
  const MatrixFile file("Nodes 2\nConnections 1\n0->1 id 1 start 0 size 8\n");
  load_htsim_connection_matrix(file.path(), dag);
  EXPECT_EQ(dag.tasks().size(), 1u);
  EXPECT_EQ(dag.coflows().size(), 1u);

  // Loading the same matrix again clashes on the coflow name, reported at its line.
  const std::string message = error_of([&] { load_htsim_connection_matrix(file.path(), dag); });
  EXPECT_EQ(message, "htsim matrix " + file.path() +
                         ", line 3: name \"htsim-1\" is used twice (task and coflow names must "
                         "be unique)");
}

TEST(HtsimImport, SeveralActivatorsOfAOneshotAreRejected) {
  EXPECT_EQ(load_error("Nodes 4\n"
                       "Connections 3\n"
                       "Triggers 1\n"
                       "0->2 id 1 start 0 size 10 recv_done_trigger 5\n"
                       "1->2 id 2 start 0 size 10 recv_done_trigger 5\n"
                       "2->3 id 3 trigger 5 size 10\n"
                       "trigger id 5 oneshot\n"),
            ", line 7: oneshot trigger 5 is activated 2 times (lines 4 and 5) and fires at the "
            "first; Shoal's dependencies wait for all of them, so this cannot be imported");
}

TEST(HtsimImport, NonLocalTriggerIsRejectedByValidate) {
  // Connection 1 (0->1) starts connection 2 (2->3): in htsim a trigger reaches any
  // host; in Shoal host 2 cannot learn that a flow between 0 and 1 has finished.
  const MatrixFile file(
      "Nodes 4\n"
      "Connections 2\n"
      "Triggers 1\n"
      "0->1 id 1 start 0 size 10 send_done_trigger 1\n"
      "2->3 id 2 trigger 1 size 10\n"
      "trigger id 1 oneshot\n");
  Dag dag;
  load_htsim_connection_matrix(file.path(), dag);  // the import itself maps it
  EXPECT_EQ(after_names(dag, coflow(dag, "htsim-2")), (std::vector<std::string>{"htsim-1"}));
  EXPECT_EQ(error_of([&] { dag.validate(4); }),
            "coflow \"htsim-2\" depends on coflow \"htsim-1\", which involves none of its "
            "sending GPUs");
}

TEST(HtsimImport, FileProblemsWithoutALine) {
  Dag dag;
  const std::string missing = "/nonexistent/shoal_htsim_missing.cm";
  EXPECT_EQ(error_of([&] { load_htsim_connection_matrix(missing, dag); }),
            "htsim matrix " + missing + ": cannot open the file");
  EXPECT_EQ(load_error("# nothing but a comment\n"), ": no 'Nodes N' header line");
  EXPECT_EQ(load_error("Nodes 3\n"), ": no 'Connections C' header line");
}

struct BadMatrix {
  const char* what;
  const char* text;
  const char* error;  // the message after "htsim matrix PATH"
};

class HtsimImportErrors : public testing::TestWithParam<BadMatrix> {};

TEST_P(HtsimImportErrors, NamesTheLine) {
  EXPECT_EQ(load_error(GetParam().text), GetParam().error);
}

// Headers and one ordinary connection, before the line under test.
#define HEAD "Nodes 4\nConnections 1\n"
#define HEAD_T "Nodes 4\nConnections 2\nTriggers 1\n"

INSTANTIATE_TEST_SUITE_P(
    HtsimMalformed, HtsimImportErrors,
    testing::Values(
        BadMatrix{"unknown_keyword", "Nodes 4\nConnections 0\nflows 3\n",
                  ", line 3: unknown keyword 'flows' (expected Nodes, Connections, Triggers, "
                  "Failures, SRC->DST or trigger)"},
        BadMatrix{"unknown_connection_keyword", HEAD "0->1 id 1 start 0 size 5 color red\n",
                  ", line 3: unknown keyword 'color' in a connection (known: id, start, trigger, "
                  "size, send_done_trigger, recv_done_trigger, prio)"},
        BadMatrix{"unknown_trigger_keyword", HEAD_T "trigger id 1 sometimes\n",
                  ", line 4: unknown keyword 'sometimes' in a trigger (known: id, count, oneshot, "
                  "multishot, barrier)"},
        BadMatrix{"missing_value", HEAD "0->1 id 1 start 0 size\n",
                  ", line 3: 'size' needs a value"},
        BadMatrix{"missing_size", HEAD "0->1 id 1 start 0\n",
                  ", line 3: no 'size' or size 0 (htsim then sends without end, which a coflow "
                  "cannot express)"},
        BadMatrix{"zero_size", HEAD "0->1 id 1 start 0 size 0\n",
                  ", line 3: no 'size' or size 0 (htsim then sends without end, which a coflow "
                  "cannot express)"},
        BadMatrix{"no_start_method", HEAD "0->1 id 1 size 5\n",
                  ", line 3: neither 'start' nor 'trigger' (htsim needs one to start the flow)"},
        BadMatrix{"start_and_trigger", HEAD "0->1 id 1 start 0 trigger 2 size 5\n",
                  ", line 3: both 'start' and 'trigger' (give one)"},
        BadMatrix{"repeated_key", HEAD "0->1 id 1 start 0 size 5 size 6\n",
                  ", line 3: 'size' is given twice"},
        BadMatrix{"bad_size", HEAD "0->1 id 1 start 0 size 12kB\n",
                  ", line 3: 'size': bad number '12kB' (a number of bytes)"},
        BadMatrix{"negative_start", HEAD "0->1 id 1 start -3 size 5\n",
                  ", line 3: 'start': bad number '-3' (a non-negative time in picoseconds)"},
        BadMatrix{"bad_start", HEAD "0->1 id 1 start soon size 5\n",
                  ", line 3: 'start': bad number 'soon' (a non-negative time in picoseconds)"},
        BadMatrix{"bad_prio", HEAD "0->1 id 1 start 0 size 5 prio high\n",
                  ", line 3: 'prio': bad number 'high' (an integer)"},
        BadMatrix{"bad_id", HEAD "0->1 id x1 start 0 size 5\n",
                  ", line 3: 'id': bad number 'x1' (an id from 1 to 4294967295)"},
        BadMatrix{"zero_id", HEAD "0->1 id 0 start 0 size 5\n",
                  ", line 3: 'id' 0 is not allowed (htsim reserves id 0)"},
        // Found writing the fuzz targets: the total overflowed (`workload check`: negative bytes).
        BadMatrix{"sizes_past_int64",
                  "Nodes 4\nConnections 2\n0->1 start 0 size 5000000000000000000\n"
                  "1->2 start 0 size 5000000000000000000\n",
                  ", line 4: the connections' sizes add up to more than 9223372036854775807 "
                  "bytes"},
        BadMatrix{"duplicate_id",
                  "Nodes 4\nConnections 2\n0->1 id 4 start 0 size 5\n"
                  "# between\n1->2 id 4 start 0 size 5\n",
                  ", line 5: connection id 4 is used twice (first on line 3)"},
        BadMatrix{"bad_endpoints", HEAD "a->1 id 1 start 0 size 5\n",
                  ", line 3: 'a->1' is not SRC->DST with host numbers (non-negative integers)"},
        BadMatrix{"node_out_of_range", HEAD "0->4 id 1 start 0 size 5\n",
                  ", line 3: host 4 is outside the matrix (Nodes 4: hosts 0..3)"},
        BadMatrix{"self_connection", HEAD "2->2 id 1 start 0 size 5\n",
                  ", line 3: a connection from host 2 to itself"},
        BadMatrix{"connection_count",
                  "Nodes 4\nConnections 3\n0->1 start 0 size 5\n"
                  "1->2 start 0 size 5\n",
                  ", line 2: the header says Connections 3 but the file has 2 connection lines"},
        BadMatrix{"trigger_count", "Nodes 4\nConnections 0\nTriggers 2\ntrigger id 1 oneshot\n",
                  ", line 3: the header says Triggers 2 but the file has 1 trigger lines"},
        BadMatrix{"triggers_without_header", "Nodes 4\nConnections 0\ntrigger id 1 oneshot\n",
                  ", line 3: a trigger line, but no 'Triggers T' header line counting them"},
        BadMatrix{"bad_header_number", "Nodes four\n",
                  ", line 1: 'Nodes': bad number 'four' (a non-negative integer)"},
        BadMatrix{"header_without_number", "Nodes 4\nConnections\n",
                  ", line 2: 'Connections' takes one number: Connections N"},
        BadMatrix{"header_twice", "Nodes 4\nNodes 5\n",
                  ", line 2: 'Nodes' is given twice (first on line 1)"},
        BadMatrix{"header_after_body", HEAD "0->1 start 0 size 5\nTriggers 0\n",
                  ", line 4: header line 'Triggers' after the first connection or trigger line"},
        BadMatrix{"connection_before_nodes", "Connections 1\n0->1 start 0 size 5\n",
                  ", line 2: no 'Nodes N' header line before this one"},
        BadMatrix{"connection_before_count", "Nodes 2\n0->1 start 0 size 5\n",
                  ", line 2: no 'Connections C' header line before this one"},
        BadMatrix{"trigger_never_defined",
                  HEAD_T "0->1 id 1 start 0 size 5 send_done_trigger 2\n"
                         "1->2 id 2 trigger 2 size 5\ntrigger id 3 oneshot\n",
                  ", line 4: 'send_done_trigger 2': trigger 2 is never defined (no 'trigger id 2 "
                  "...' line)"},
        BadMatrix{"trigger_never_activated",
                  HEAD_T "0->1 id 1 start 0 size 5\n1->2 id 2 trigger 3 size 5\n"
                         "trigger id 3 oneshot\n",
                  ", line 6: oneshot trigger 3 is never activated (no connection has "
                  "send_done_trigger 3 or recv_done_trigger 3), so the connection on line 5 "
                  "would never start"},
        BadMatrix{"trigger_without_id", HEAD_T "trigger oneshot\n",
                  ", line 4: a trigger line without 'id T'"},
        BadMatrix{"trigger_without_type", HEAD_T "trigger id 4\n",
                  ", line 4: trigger 4 has no type (oneshot, multishot or barrier)"},
        BadMatrix{"trigger_two_types", HEAD_T "trigger id 4 oneshot barrier\n",
                  ", line 4: a trigger with two types ('oneshot' and 'barrier')"},
        BadMatrix{"trigger_defined_twice",
                  "Nodes 4\nConnections 0\nTriggers 2\ntrigger id 4 oneshot\n"
                  "trigger id 4 multishot\n",
                  ", line 5: trigger 4 is defined twice (first on line 4)"},
        BadMatrix{"barrier_without_count", HEAD_T "trigger id 4 barrier\n",
                  ", line 4: barrier trigger 4 needs 'count C', the activations it waits for "
                  "(C > 0)"},
        BadMatrix{"barrier_never_fires",
                  HEAD_T "0->1 id 1 start 0 size 5 send_done_trigger 7\n"
                         "1->2 id 2 trigger 7 size 5\ntrigger id 7 barrier count 2\n",
                  ", line 6: barrier trigger 7 has count 2 but is activated 1 times (line 4), "
                  "so it would never fire"},
        BadMatrix{"barrier_fires_early",
                  "Nodes 4\nConnections 3\nTriggers 1\n"
                  "0->1 id 1 start 0 size 5 recv_done_trigger 7\n"
                  "2->1 id 2 start 0 size 5 recv_done_trigger 7\n"
                  "1->3 id 3 trigger 7 size 5\ntrigger id 7 barrier count 1\n",
                  ", line 7: barrier trigger 7 has count 1 but is activated 2 times (lines 4 and "
                  "5), so it fires before all of them, which Shoal's dependencies cannot "
                  "express"},
        BadMatrix{"multishot_several_activators",
                  "Nodes 4\nConnections 3\nTriggers 1\n"
                  "0->1 id 1 start 0 size 5 recv_done_trigger 7\n"
                  "2->1 id 2 start 0 size 5 recv_done_trigger 7\n"
                  "1->3 id 3 trigger 7 size 5\ntrigger id 7 multishot\n",
                  ", line 7: multishot trigger 7 is activated 2 times (lines 4 and 5) and starts "
                  "its k-th connection at the k-th; Shoal's dependencies wait for all of them, "
                  "so this cannot be imported"},
        BadMatrix{"multishot_several_targets",
                  "Nodes 4\nConnections 3\nTriggers 1\n"
                  "0->1 id 1 start 0 size 5 recv_done_trigger 7\n"
                  "1->2 id 2 trigger 7 size 5\n1->3 id 3 trigger 7 size 5\n"
                  "trigger id 7 multishot\n",
                  ", line 7: multishot trigger 7 starts one connection per activation but is "
                  "activated once, so of the connections it starts (lines 5 and 6) all but the "
                  "first would never start"},
        BadMatrix{"failure_line",
                  "Nodes 4\nConnections 0\nfailure switch_type TOR switch_id 0 link_id 1\n",
                  ", line 3: link failures ('Failures', 'failure') are not supported: a "
                  "workload does not fail links"},
        BadMatrix{"failures_header", "Nodes 4\nFailures 1\n",
                  ", line 2: link failures ('Failures', 'failure') are not supported: a "
                  "workload does not fail links"},
        BadMatrix{"addon", HEAD "0->1 id 1 start 0 size 5 addon\n",
                  ", line 3: 'addon' (re-arming a barrier on each activation) is not supported: "
                  "a DAG node runs once"}),
    [](const testing::TestParamInfo<BadMatrix>& info) { return std::string(info.param.what); });

#undef HEAD
#undef HEAD_T

}  // namespace
}  // namespace shoal::work
