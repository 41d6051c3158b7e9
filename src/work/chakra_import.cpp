// A Chakra trace's rank files into one Dag. Each file is read on its own
// (chakra_read.cpp); here sends meet their receives, collectives their other
// members, and every node becomes the tasks and coflows docs/workloads.md
// ("Chakra") describes, its dependencies those of what its own NPU waits for.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "chakra_read.hpp"
#include "shoal/core/error.hpp"
#include "shoal/work/chakra_trace.hpp"

namespace shoal::work {

namespace {

using chakra::NodeKind;
using chakra::RankTrace;
using chakra::TraceNode;

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct Message {
  std::uint32_t src = 0, src_node = 0, dst = 0, dst_node = 0;
  Bytes bytes = 0;
};

/// Messages that form one coflow: each on its own, or those of one "shoal_coflow".
struct MessageCoflow {
  std::string name;
  std::vector<std::uint32_t> messages;
};

struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  Bytes bytes = 0;
  std::vector<std::uint32_t> ranks;  // the members, in ring order
  std::vector<std::uint32_t> nodes;  // each member's node in its file
  std::vector<std::vector<Flow>> steps;
  std::vector<std::string> step_names;
  std::vector<std::uint32_t> first_send;  // by position: the step it first sends in (kNone)
  std::vector<std::uint32_t> last_flow;   // by position: the last step it has a flow in
};

/// What one node of a rank file became.
struct Image {
  enum class Kind : std::uint8_t { kTask, kMessage, kCollective } kind = Kind::kTask;
  std::uint32_t index = kNone;  // the message or collective
  std::uint32_t position = 0;   // a collective member's
  std::string task;             // its task, or its zero-time wait at a receiver ("": none)
  std::string done;             // what its NPU's later nodes wait for
};

std::string_view task_kind_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::kForward:
      return "forward";
    case TaskKind::kBackward:
      return "backward";
    case TaskKind::kOptimizer:
      return "optimizer";
    case TaskKind::kOther:
      break;
  }
  return "other";
}

class Importer {
 public:
  Importer(const std::string& prefix, const std::vector<std::string>& paths,
           const ChakraOptions& options, Dag& dag)
      : prefix_(prefix), paths_(paths), options_(options), dag_(dag) {}

  ChakraSummary run() {
    if (paths_.empty()) throw Error("chakra trace " + prefix_ + ": no rank file");
    if (paths_.size() > kMaxGpuId) throw Error("chakra trace " + prefix_ + ": too many rank files");
    const auto npus = static_cast<std::uint32_t>(paths_.size());
    summary_.trace = prefix_;
    summary_.npus = npus;
    check_gpus();
    for (std::uint32_t r = 0; r < npus; ++r) {
      ranks_.push_back(chakra::read_rank_trace(paths_[r], r, npus, options_, summary_));
      images_.emplace_back(ranks_.back().nodes.size());
    }
    match_messages();
    group_messages();
    match_collectives();
    name_nodes();
    add_tasks();
    add_coflows();
    try {
      dag_.resolve();
    } catch (const Error& e) {
      throw Error("chakra trace " + prefix_ + ": " + e.what());
    }
    spdlog::info("{}", summary_.line());
    return summary_;
  }

 private:
  const TraceNode& node(std::uint32_t rank, std::uint32_t index) const {
    return ranks_[rank].nodes[index];
  }
  [[noreturn]] void fail_at(std::uint32_t rank, std::uint32_t index,
                            const std::string& what) const {
    throw Error("chakra trace " + ranks_[rank].path + ", node " +
                std::to_string(node(rank, index).id) + ": " + what);
  }
  GpuId gpu(std::uint32_t rank) const { return options_.gpus.empty() ? rank : options_.gpus[rank]; }

  void check_gpus() const {
    if (options_.gpus.empty()) return;
    if (options_.gpus.size() != paths_.size()) {
      throw Error("chakra trace " + prefix_ + ": gpus lists " +
                  std::to_string(options_.gpus.size()) + " GPUs for " +
                  std::to_string(paths_.size()) + " NPUs (one GPU per rank file)");
    }
    std::unordered_map<GpuId, std::size_t> seen;
    for (std::size_t i = 0; i < options_.gpus.size(); ++i) {
      const auto [it, fresh] = seen.emplace(options_.gpus[i], i);
      if (!fresh) {
        throw Error("chakra trace " + prefix_ + ": gpus gives GPU " +
                    std::to_string(options_.gpus[i]) + " to NPUs " + std::to_string(it->second) +
                    " and " + std::to_string(i));
      }
    }
  }

  /// The k-th send from s to d with tag t meets the k-th receive at d from s with t.
  void match_messages() {
    using Key = std::tuple<std::uint32_t, std::uint32_t, std::int64_t>;
    std::map<Key, std::deque<std::uint32_t>> sends, receives;
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
      for (std::uint32_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        const TraceNode& n = node(r, i);
        if (n.kind == NodeKind::kSend) sends[{r, n.peer, n.tag}].push_back(i);
        if (n.kind == NodeKind::kRecv) receives[{n.peer, r, n.tag}].push_back(i);
      }
    }
    for (auto& [key, from] : sends) {
      const auto [src, dst, tag] = key;
      std::deque<std::uint32_t>& to = receives[key];
      for (const std::uint32_t s : from) {
        if (to.empty()) {
          fail_at(src, s,
                  "a send to NPU " + std::to_string(dst) + " (tag " + std::to_string(tag) +
                      ") that " + ranks_[dst].path + " never receives");
        }
        const std::uint32_t d = to.front();
        to.pop_front();
        const TraceNode& receive = node(dst, d);
        if (receive.bytes != node(src, s).bytes) {
          fail_at(dst, d,
                  "a receive of " + std::to_string(receive.bytes) + " bytes from NPU " +
                      std::to_string(src) + " (tag " + std::to_string(tag) + "), which sends " +
                      std::to_string(node(src, s).bytes) + " (its node " +
                      std::to_string(node(src, s).id) + ")");
        }
        const auto m = static_cast<std::uint32_t>(messages_.size());
        images_[src][s].kind = images_[dst][d].kind = Image::Kind::kMessage;
        images_[src][s].index = images_[dst][d].index = m;
        messages_.push_back({src, s, dst, d, node(src, s).bytes});
      }
    }
    for (const auto& [key, left] : receives) {
      if (left.empty()) continue;
      const auto [src, dst, tag] = key;
      fail_at(dst, left.front(),
              "a receive from NPU " + std::to_string(src) + " (tag " + std::to_string(tag) +
                  ") that " + ranks_[src].path + " never sends");
    }
    summary_.messages = messages_.size();
  }

  /// Messages of one "shoal_coflow" form one coflow (a Shoal export's), any
  /// other is a coflow of its own; in the order of their sends.
  void group_messages() {
    std::unordered_map<std::string, std::uint32_t> by_name;
    message_coflow_.assign(messages_.size(), kNone);
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
      for (std::uint32_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        if (node(r, i).kind != NodeKind::kSend) continue;
        const std::uint32_t m = images_[r][i].index;
        const std::string& group = node(r, i).coflow;
        std::uint32_t c = static_cast<std::uint32_t>(message_coflows_.size());
        if (!group.empty()) {
          const auto [it, fresh] = by_name.emplace(group, c);
          c = it->second;
          if (fresh) message_coflows_.emplace_back();
        } else {
          message_coflows_.emplace_back();
        }
        message_coflows_[c].messages.push_back(m);
        message_coflow_[m] = c;
      }
    }
  }

  /// The k-th collective of a (pg_name, comm_type) in each file are one.
  void match_collectives() {
    using Key = std::pair<std::string, CollectiveKind>;
    std::map<Key, std::vector<std::vector<std::uint32_t>>> by_key;
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
      for (std::uint32_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        const TraceNode& n = node(r, i);
        if (n.kind != NodeKind::kCollective) continue;
        auto& per_rank = by_key[{n.group, n.collective}];
        per_rank.resize(ranks_.size());
        per_rank[r].push_back(i);
      }
    }
    for (const auto& [key, per_rank] : by_key) {
      std::size_t count = 0;
      for (const auto& list : per_rank) count = std::max(count, list.size());
      for (std::size_t k = 0; k < count; ++k) {
        Collective c;
        c.kind = key.second;
        for (std::uint32_t r = 0; r < per_rank.size(); ++r) {
          if (k < per_rank[r].size()) {
            c.ranks.push_back(r);
            c.nodes.push_back(per_rank[r][k]);
          }
        }
        const TraceNode& first = node(c.ranks[0], c.nodes[0]);
        c.bytes = first.bytes;
        for (std::size_t p = 1; p < c.ranks.size(); ++p) {
          if (node(c.ranks[p], c.nodes[p]).bytes != c.bytes) {
            fail_at(c.ranks[p], c.nodes[p],
                    "comm_size " + std::to_string(node(c.ranks[p], c.nodes[p]).bytes) + " for " +
                        std::string(collective_name(c.kind)) + " number " + std::to_string(k + 1) +
                        (key.first.empty() ? "" : " of pg_name \"" + key.first + "\"") +
                        ", which " + ranks_[c.ranks[0]].path + " (node " +
                        std::to_string(first.id) + ") gives " + std::to_string(c.bytes) + " bytes");
          }
        }
        const auto members = static_cast<std::uint32_t>(c.ranks.size());
        try {
          c.steps = collective_steps(c.kind, first.algorithm.value_or(options_.collective), members,
                                     c.bytes);
        } catch (const Error& e) {
          fail_at(c.ranks[0], c.nodes[0], e.what());
        }
        c.first_send.assign(members, kNone);
        c.last_flow.assign(members, kNone);
        for (std::uint32_t s = 0; s < c.steps.size(); ++s) {
          for (const Flow& f : c.steps[s]) {
            if (c.first_send[f.src] == kNone) c.first_send[f.src] = s;
            c.last_flow[f.src] = c.last_flow[f.dst] = s;
          }
        }
        ++summary_.collectives[std::string(collective_name(c.kind))];
        if (c.steps.empty()) ++summary_.single_npu_collectives;
        for (std::uint32_t p = 0; p < members; ++p) {
          Image& image = images_[c.ranks[p]][c.nodes[p]];
          image.kind = Image::Kind::kCollective;
          image.index = static_cast<std::uint32_t>(collectives_.size());
          image.position = p;
        }
        collectives_.push_back(std::move(c));
      }
    }
  }

  bool free(const std::string& name) const {
    return !name.empty() && used_.count(name) == 0 && !dag_.find(name);
  }
  /// `preferred` when no node has it yet, else `fallback`, else `fallback`~k.
  std::string claim(const std::string& preferred, const std::string& fallback) {
    std::string name = free(preferred) ? preferred : fallback;
    for (int k = 2; !free(name); ++k) name = fallback + "~" + std::to_string(k);
    used_.insert(name);
    return name;
  }
  std::string fallback(std::uint32_t rank, std::uint32_t index) const {
    return "npu" + std::to_string(rank) + "." + std::to_string(node(rank, index).id);
  }

  /// Names every task and coflow, and what each node's later nodes wait for:
  /// the shared coflows first, each after its first node.
  void name_nodes() {
    for (MessageCoflow& c : message_coflows_) {
      const Message& m = messages_[c.messages.front()];
      const TraceNode& send = node(m.src, m.src_node);
      c.name = claim(send.coflow.empty() ? send.name : send.coflow, fallback(m.src, m.src_node));
    }
    for (Collective& c : collectives_) {
      if (c.steps.empty()) continue;  // no traffic: its member's task takes the name
      const std::string name =
          claim(node(c.ranks[0], c.nodes[0]).name, fallback(c.ranks[0], c.nodes[0]));
      for (std::size_t s = 0; s < c.steps.size(); ++s) {
        c.step_names.push_back(c.steps.size() == 1 ? name
                                                   : claim(name + ".step" + std::to_string(s + 1),
                                                           name + ".step" + std::to_string(s + 1)));
      }
    }
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
      for (std::uint32_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        const TraceNode& n = node(r, i);
        Image& image = images_[r][i];
        switch (image.kind) {
          case Image::Kind::kTask:
            image.task = claim(n.name, fallback(r, i));
            image.done = image.task;
            break;
          case Image::Kind::kMessage:
            image.done = message_coflows_[message_coflow_[image.index]].name;
            // A receive that waits for nodes of its own ends at the later of
            // those and the flow's arrival: a zero-time task after both.
            if (n.kind == NodeKind::kRecv && !n.deps.empty()) {
              image.task = claim(n.name, fallback(r, i));
              image.done = image.task;
            }
            break;
          case Image::Kind::kCollective: {
            const Collective& c = collectives_[image.index];
            const std::uint32_t p = image.position;
            if (c.steps.empty() || (c.first_send[p] == kNone && !n.deps.empty())) {
              // No traffic (one NPU), or a member that only receives yet waits
              // for nodes of its own: a zero-time task.
              image.task = claim(c.steps.empty() ? n.name : std::string(), fallback(r, i));
              image.done = image.task;
            } else {
              image.done = c.step_names[c.last_flow[p]];
            }
            break;
          }
        }
      }
    }
  }

  /// What node `index` of NPU `rank` waits for, as Shoal names, each once.
  std::vector<std::string> waits(std::uint32_t rank, std::uint32_t index) const {
    std::vector<std::string> out;
    for (const std::uint32_t d : node(rank, index).deps) {
      const std::string& name = images_[rank][d].done;
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
    return out;
  }
  static void add_once(std::vector<std::string>& list, const std::string& name) {
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  }

  TaskLabels task_labels(std::uint32_t rank, std::uint32_t index) const {
    const chakra::ShoalLabels& l = node(rank, index).labels;
    TaskLabels out;
    if (!l.type.empty()) {
      bool known = false;
      for (const TaskKind k :
           {TaskKind::kOther, TaskKind::kForward, TaskKind::kBackward, TaskKind::kOptimizer}) {
        if (l.type == task_kind_name(k)) {
          out.kind = k;
          known = true;
        }
      }
      if (!known) {
        fail_at(rank, index,
                "attribute shoal_type \"" + l.type +
                    "\" is not a task kind (other, forward, backward, optimizer)");
      }
    }
    out.job = l.numbers[0].value_or(0);
    out.iteration = l.numbers[1].value_or(0);
    out.micro_batch = l.numbers[2].value_or(0);
    out.layer = l.numbers[3].value_or(0);
    return out;
  }

  CoflowLabels coflow_labels(std::uint32_t rank, std::uint32_t index) const {
    const chakra::ShoalLabels& l = node(rank, index).labels;
    CoflowLabels out;
    if (!l.type.empty()) {
      try {
        out.type = parse_coflow_type(l.type);
      } catch (const Error& e) {
        fail_at(rank, index, std::string("attribute shoal_type: ") + e.what());
      }
    }
    out.job = l.numbers[0].value_or(0);
    out.iteration = l.numbers[1].value_or(0);
    out.micro_batch = l.numbers[2].value_or(0);
    out.layer = l.numbers[3].value_or(0);
    out.stage = l.numbers[4].value_or(0);
    return out;
  }

  struct PendingTask {
    std::optional<std::uint64_t> index;  // "shoal_index"
    std::string name;
    GpuId gpu = 0;
    Time duration = 0;
    std::vector<std::string> after;
    TaskLabels labels;
  };
  struct PendingCoflow {
    std::optional<std::uint64_t> index;
    std::string name;
    CoflowLabels labels;
    Time start = 0;
    std::vector<Flow> flows;
    std::vector<std::string> after;
  };

  /// Where every item carries its own distinct number (a Shoal export's
  /// "shoal_index" or "shoal_flow"), puts them in that order: the Dag read
  /// back then numbers tasks, coflows and flows as the one written, and a run
  /// of it is the same run, ECMP hashes of flow ids included.
  template <class T, class Number>
  static void in_exported_order(std::vector<T>& items, Number number) {
    std::vector<std::uint64_t> numbers;
    for (const T& item : items) {
      const std::optional<std::uint64_t> n = number(item);
      if (!n) return;
      numbers.push_back(*n);
    }
    std::sort(numbers.begin(), numbers.end());
    if (std::adjacent_find(numbers.begin(), numbers.end()) != numbers.end()) return;
    std::stable_sort(items.begin(), items.end(),
                     [&](const T& a, const T& b) { return *number(a) < *number(b); });
  }

  void add_tasks() {
    std::vector<PendingTask> tasks;
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
      for (std::uint32_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        const Image& image = images_[r][i];
        if (image.task.empty()) continue;
        PendingTask& t = tasks.emplace_back();
        t.index = node(r, i).index;
        t.name = image.task;
        t.gpu = gpu(r);
        t.after = waits(r, i);
        t.labels = task_labels(r, i);
        if (image.kind == Image::Kind::kTask && node(r, i).kind == NodeKind::kCompute) {
          t.duration = node(r, i).duration;
        } else if (image.kind == Image::Kind::kMessage) {
          add_once(t.after, message_coflows_[message_coflow_[image.index]].name);
          ++summary_.join_tasks;
        } else if (image.kind == Image::Kind::kCollective) {
          const Collective& c = collectives_[image.index];
          if (!c.steps.empty()) {
            add_once(t.after, c.step_names[c.last_flow[image.position]]);
            ++summary_.join_tasks;
          }
        }
      }
    }
    in_exported_order(tasks, [](const PendingTask& t) { return t.index; });
    for (PendingTask& t : tasks) {
      dag_.add_task(std::move(t.name), t.gpu, t.duration, std::move(t.after), t.labels);
    }
  }

  void add_coflows() {
    std::vector<PendingCoflow> coflows;
    for (MessageCoflow& c : message_coflows_) {
      in_exported_order(c.messages, [&](std::uint32_t m) {
        return node(messages_[m].src, messages_[m].src_node).flow;
      });
      PendingCoflow& p = coflows.emplace_back();
      for (const std::uint32_t m : c.messages) {
        const Message& msg = messages_[m];
        if (msg.bytes == 0) ++summary_.not_modelled["comm_size 0 (sent as 1 byte)"];
        p.flows.push_back({gpu(msg.src), gpu(msg.dst), std::max<Bytes>(1, msg.bytes)});
        for (const std::string& w : waits(msg.src, msg.src_node)) add_once(p.after, w);
      }
      const Message& first = messages_[c.messages.front()];
      const TraceNode& send = node(first.src, first.src_node);
      p.index = send.index;
      p.name = c.name;
      p.labels = coflow_labels(first.src, first.src_node);
      p.start = send.start.value_or(0);
    }
    for (const Collective& c : collectives_) {
      const TraceNode& first = node(c.ranks[0], c.nodes[0]);
      for (std::uint32_t s = 0; s < c.steps.size(); ++s) {
        PendingCoflow& p = coflows.emplace_back();
        for (const Flow& f : c.steps[s]) {
          p.flows.push_back({gpu(c.ranks[f.src]), gpu(c.ranks[f.dst]), f.bytes});
        }
        if (s > 0) p.after.push_back(c.step_names[s - 1]);
        for (std::uint32_t m = 0; m < c.ranks.size(); ++m) {
          if (c.first_send[m] != s) continue;
          for (const std::string& w : waits(c.ranks[m], c.nodes[m])) add_once(p.after, w);
        }
        // An exported collective is one coflow; ring steps have no number of their own.
        if (c.steps.size() == 1) p.index = first.index;
        p.name = c.step_names[s];
        p.labels = coflow_labels(c.ranks[0], c.nodes[0]);
        p.start = first.start.value_or(0);
      }
    }
    in_exported_order(coflows, [](const PendingCoflow& c) { return c.index; });
    for (PendingCoflow& c : coflows) {
      for (const Flow& f : c.flows) {
        if (__builtin_add_overflow(total_bytes_, f.bytes, &total_bytes_)) {
          throw Error("chakra trace " + prefix_ + ": the flows add up to more than " +
                      std::to_string(std::numeric_limits<Bytes>::max()) + " bytes");
        }
      }
      dag_.add_coflow(std::move(c.name), c.labels, c.start, c.flows, std::move(c.after));
      ++summary_.coflows;
    }
  }

  const std::string& prefix_;
  const std::vector<std::string>& paths_;
  const ChakraOptions& options_;
  Dag& dag_;
  ChakraSummary summary_;
  std::vector<RankTrace> ranks_;
  std::vector<std::vector<Image>> images_;
  std::vector<Message> messages_;
  std::vector<std::uint32_t> message_coflow_;  // by message
  std::vector<MessageCoflow> message_coflows_;
  std::vector<Collective> collectives_;
  std::unordered_set<std::string> used_;
  Bytes total_bytes_ = 0;
};

}  // namespace

ChakraSummary load_chakra_trace(const std::string& prefix, const std::vector<std::string>& paths,
                                const ChakraOptions& options, Dag& dag) {
  return Importer(prefix, paths, options, dag).run();
}

}  // namespace shoal::work
