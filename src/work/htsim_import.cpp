#include "shoal/work/htsim_import.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "shoal/core/error.hpp"

namespace shoal::work {
namespace {

enum class TriggerType : std::uint8_t { kOneshot, kMultishot, kBarrier };

std::string_view type_name(TriggerType t) {
  switch (t) {
    case TriggerType::kOneshot:
      return "oneshot";
    case TriggerType::kMultishot:
      return "multishot";
    case TriggerType::kBarrier:
      break;
  }
  return "barrier";
}

struct Connection {
  std::size_t line = 0;
  GpuId src = 0;
  GpuId dst = 0;
  std::uint32_t id = 0;  // 0: none given (htsim does not allow 0 as an id)
  std::optional<Time> start;
  Bytes size = 0;
  std::uint32_t trigger = 0;  // 0: none; likewise below
  std::uint32_t send_done_trigger = 0;
  std::uint32_t recv_done_trigger = 0;
  std::string name;
};

struct TriggerDef {
  std::size_t line = 0;
  std::uint32_t id = 0;
  TriggerType type = TriggerType::kOneshot;
  std::uint32_t count = 0;               // activations a barrier needs
  std::vector<std::size_t> activations;  // the activating connection, once per activation
  std::vector<std::size_t> targets;      // connections it starts, in file order
};

/// A header line: where it was and its value.
struct Header {
  std::size_t line = 0;  // 0: not given
  std::uint32_t value = 0;
};

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v'; };
  while (i < text.size()) {
    while (i < text.size() && space(text[i])) ++i;
    const std::size_t begin = i;
    while (i < text.size() && !space(text[i])) ++i;
    if (i > begin) out.push_back(text.substr(begin, i - begin));
  }
  return out;
}

template <class Int>
std::optional<Int> parse_int(std::string_view text) {
  Int v{};
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

/// "1, 3 and 4" from line numbers (duplicates dropped, in order).
std::string list_lines(std::vector<std::size_t> lines) {
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += i + 1 == lines.size() ? " and " : ", ";
    out += std::to_string(lines[i]);
  }
  return (lines.size() == 1 ? "line " : "lines ") + out;
}

class Reader {
 public:
  Reader(const std::string& path, Dag& dag) : path_(path), dag_(dag) {}

  void run() {
    std::ifstream in(path_);
    if (!in) throw Error("htsim matrix " + path_ + ": cannot open the file");
    std::string text;
    std::size_t line = 0;
    while (std::getline(in, text)) {
      ++line;
      const std::vector<std::string_view> tokens = split(text);
      // Blank and '#' comment lines anywhere (htsim allows comments in the header only).
      if (tokens.empty() || tokens[0].front() == '#') continue;
      read_line(line, tokens);
    }
    if (in.bad()) throw Error("htsim matrix " + path_ + ": read error");
    check_counts();
    connect_triggers();
    add_to_dag();
  }

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw Error("htsim matrix " + path_ + ", line " + std::to_string(line) + ": " + what);
  }

  void read_line(std::size_t line, const std::vector<std::string_view>& tokens) {
    const std::string_view head = tokens[0];
    if (head == "Nodes") return read_header(line, tokens, nodes_);
    if (head == "Connections") return read_header(line, tokens, connections_);
    if (head == "Triggers") return read_header(line, tokens, triggers_);
    if (head == "Failures") {
      read_header(line, tokens, failures_);
      if (failures_.value > 0) fail(line, kNoFailures);
      return;
    }
    const bool connection = head.find("->") != std::string_view::npos;
    if (!connection && head != "trigger" && head != "failure") {
      fail(line, "unknown keyword '" + std::string(head) +
                     "' (expected Nodes, Connections, Triggers, Failures, SRC->DST or trigger)");
    }
    // The header ends at the first connection, trigger or failure line.
    if (nodes_.line == 0) fail(line, "no 'Nodes N' header line before this one");
    if (connections_.line == 0) fail(line, "no 'Connections C' header line before this one");
    body_started_ = true;
    if (connection) return read_connection(line, tokens);
    if (head == "trigger") return read_trigger(line, tokens);
    fail(line, kNoFailures);
  }

  void read_header(std::size_t line, const std::vector<std::string_view>& tokens, Header& h) {
    const std::string key(tokens[0]);
    if (body_started_) {
      fail(line, "header line '" + key + "' after the first connection or trigger line");
    }
    if (h.line != 0) {
      fail(line, "'" + key + "' is given twice (first on line " + std::to_string(h.line) + ")");
    }
    if (tokens.size() != 2) fail(line, "'" + key + "' takes one number: " + key + " N");
    const auto v = parse_int<std::uint32_t>(tokens[1]);
    if (!v) {
      fail(line,
           "'" + key + "': bad number '" + std::string(tokens[1]) + "' (a non-negative integer)");
    }
    h = {line, *v};
  }

  /// The token after tokens[i], for keyword `key`, checked not to repeat on the line.
  std::string_view value(std::size_t line, const std::vector<std::string_view>& tokens,
                         std::size_t& i, std::set<std::string_view>& seen) const {
    const std::string key(tokens[i]);
    if (!seen.insert(tokens[i]).second) fail(line, "'" + key + "' is given twice");
    if (i + 1 >= tokens.size()) fail(line, "'" + key + "' needs a value");
    return tokens[++i];
  }

  std::uint32_t nonzero_id(std::size_t line, std::string_view key, std::string_view text) const {
    const auto v = parse_int<std::uint32_t>(text);
    if (!v) {
      fail(line, "'" + std::string(key) + "': bad number '" + std::string(text) +
                     "' (an id from 1 to 4294967295)");
    }
    if (*v == 0) fail(line, "'" + std::string(key) + "' 0 is not allowed (htsim reserves id 0)");
    return *v;
  }

  GpuId host(std::size_t line, std::string_view text, std::string_view endpoints) const {
    const auto v = parse_int<GpuId>(text);
    if (!v) {
      fail(line, "'" + std::string(endpoints) +
                     "' is not SRC->DST with host numbers (non-negative integers)");
    }
    if (*v >= nodes_.value) {
      fail(line, "host " + std::to_string(*v) + " is outside the matrix (Nodes " +
                     std::to_string(nodes_.value) +
                     (nodes_.value == 0 ? ": no hosts)"
                                        : ": hosts 0.." + std::to_string(nodes_.value - 1) + ")"));
    }
    return *v;
  }

  /// htsim reads the start with stof and stores it, truncated, as picoseconds. We
  /// read integers exactly and decimals ("0.000000", "1e6") as doubles, truncated.
  Time start_time(std::size_t line, std::string_view text) const {
    if (const auto v = parse_int<Time>(text)) {
      if (*v >= 0) return *v;
    } else {
      double d = 0;
      const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (ec == std::errc() && p == text.data() + text.size() && std::isfinite(d) && d >= 0 &&
          d < 9.2e18) {
        return static_cast<Time>(d);
      }
    }
    fail(line,
         "'start': bad number '" + std::string(text) + "' (a non-negative time in picoseconds)");
  }

  void read_connection(std::size_t line, const std::vector<std::string_view>& tokens) {
    Connection c;
    c.line = line;
    const std::string_view endpoints = tokens[0];
    const std::size_t arrow = endpoints.find("->");
    c.src = host(line, endpoints.substr(0, arrow), endpoints);
    c.dst = host(line, endpoints.substr(arrow + 2), endpoints);
    if (c.src == c.dst)
      fail(line, "a connection from host " + std::to_string(c.src) + " to itself");
    std::set<std::string_view> seen;
    std::optional<Bytes> size;
    for (std::size_t i = 1; i < tokens.size(); ++i) {
      const std::string_view key = tokens[i];
      if (key == "start") {
        c.start = start_time(line, value(line, tokens, i, seen));
      } else if (key == "size") {
        const std::string_view text = value(line, tokens, i, seen);
        size = parse_int<Bytes>(text);
        if (!size || *size < 0) {
          fail(line, "'size': bad number '" + std::string(text) + "' (a number of bytes)");
        }
      } else if (key == "id") {
        c.id = nonzero_id(line, key, value(line, tokens, i, seen));
      } else if (key == "trigger") {
        c.trigger = nonzero_id(line, key, value(line, tokens, i, seen));
      } else if (key == "send_done_trigger") {
        c.send_done_trigger = nonzero_id(line, key, value(line, tokens, i, seen));
      } else if (key == "recv_done_trigger") {
        c.recv_done_trigger = nonzero_id(line, key, value(line, tokens, i, seen));
      } else if (key == "prio") {
        // A transport priority; Shoal's policies key on coflow labels instead.
        const std::string_view text = value(line, tokens, i, seen);
        if (!parse_int<std::int32_t>(text)) {
          fail(line, "'prio': bad number '" + std::string(text) + "' (an integer)");
        }
      } else if (key == "addon") {
        fail(line,
             "'addon' (re-arming a barrier on each activation) is not supported: a DAG node "
             "runs once");
      } else {
        fail(line, "unknown keyword '" + std::string(key) +
                       "' in a connection (known: id, start, trigger, size, send_done_trigger, "
                       "recv_done_trigger, prio)");
      }
    }
    if (c.start && c.trigger != 0) fail(line, "both 'start' and 'trigger' (give one)");
    if (!c.start && c.trigger == 0) {
      fail(line, "neither 'start' nor 'trigger' (htsim needs one to start the flow)");
    }
    if (!size || *size == 0) {
      fail(line,
           "no 'size' or size 0 (htsim then sends without end, which a coflow cannot express)");
    }
    c.size = *size;
    // The sizes must add up to an int64, or every total of them overflows.
    if (__builtin_add_overflow(total_bytes_, c.size, &total_bytes_)) {
      fail(line, "the connections' sizes add up to more than " +
                     std::to_string(std::numeric_limits<Bytes>::max()) + " bytes");
    }
    if (c.id != 0) {
      const auto [it, fresh] = flow_ids_.emplace(c.id, line);
      if (!fresh) {
        fail(line, "connection id " + std::to_string(c.id) + " is used twice (first on line " +
                       std::to_string(it->second) + ")");
      }
      c.name = "htsim-" + std::to_string(c.id);
    } else {
      c.name = "htsim-conn" + std::to_string(conns_.size() + 1);
    }
    conns_.push_back(std::move(c));
  }

  void read_trigger(std::size_t line, const std::vector<std::string_view>& tokens) {
    TriggerDef t;
    t.line = line;
    std::optional<TriggerType> type;
    bool has_count = false;
    std::set<std::string_view> seen;
    for (std::size_t i = 1; i < tokens.size(); ++i) {
      const std::string_view key = tokens[i];
      std::optional<TriggerType> this_type;
      if (key == "id") {
        t.id = nonzero_id(line, key, value(line, tokens, i, seen));
      } else if (key == "count") {
        const std::string_view text = value(line, tokens, i, seen);
        const auto v = parse_int<std::uint32_t>(text);
        if (!v) fail(line, "'count': bad number '" + std::string(text) + "'");
        t.count = *v;
        has_count = true;
      } else if (key == "oneshot") {
        this_type = TriggerType::kOneshot;
      } else if (key == "multishot") {
        this_type = TriggerType::kMultishot;
      } else if (key == "barrier") {
        this_type = TriggerType::kBarrier;
      } else {
        fail(line, "unknown keyword '" + std::string(key) +
                       "' in a trigger (known: id, count, oneshot, multishot, barrier)");
      }
      if (this_type) {
        if (type) {
          fail(line, "a trigger with two types ('" + std::string(type_name(*type)) + "' and '" +
                         std::string(key) + "')");
        }
        type = this_type;
      }
    }
    if (t.id == 0) fail(line, "a trigger line without 'id T'");
    const std::string which = "trigger " + std::to_string(t.id);
    if (!type) fail(line, which + " has no type (oneshot, multishot or barrier)");
    t.type = *type;
    if (t.type == TriggerType::kBarrier && (!has_count || t.count == 0)) {
      fail(line, "barrier " + which + " needs 'count C', the activations it waits for (C > 0)");
    }
    const auto [it, fresh] = trigger_index_.emplace(t.id, triggers_seen_.size());
    if (!fresh) {
      fail(line, which + " is defined twice (first on line " +
                     std::to_string(triggers_seen_[it->second].line) + ")");
    }
    triggers_seen_.push_back(std::move(t));
  }

  void check_counts() const {
    if (nodes_.line == 0) throw Error("htsim matrix " + path_ + ": no 'Nodes N' header line");
    if (connections_.line == 0) {
      throw Error("htsim matrix " + path_ + ": no 'Connections C' header line");
    }
    if (conns_.size() != connections_.value) {
      fail(connections_.line, "the header says Connections " + std::to_string(connections_.value) +
                                  " but the file has " + std::to_string(conns_.size()) +
                                  " connection lines");
    }
    if (triggers_.line == 0 && !triggers_seen_.empty()) {
      fail(triggers_seen_.front().line,
           "a trigger line, but no 'Triggers T' header line counting them");
    }
    if (triggers_seen_.size() != triggers_.value) {
      fail(triggers_.line, "the header says Triggers " + std::to_string(triggers_.value) +
                               " but the file has " + std::to_string(triggers_seen_.size()) +
                               " trigger lines");
    }
  }

  /// Records who activates and who waits for each trigger, then checks that
  /// "wait for all activators" is what htsim would do.
  void connect_triggers() {
    for (std::size_t k = 0; k < conns_.size(); ++k) {
      const Connection& c = conns_[k];
      auto find = [&](std::uint32_t id, std::string_view key) -> TriggerDef& {
        const auto it = trigger_index_.find(id);
        if (it == trigger_index_.end()) {
          fail(c.line, "'" + std::string(key) + " " + std::to_string(id) + "': trigger " +
                           std::to_string(id) + " is never defined (no 'trigger id " +
                           std::to_string(id) + " ...' line)");
        }
        return triggers_seen_[it->second];
      };
      if (c.trigger != 0) find(c.trigger, "trigger").targets.push_back(k);
      if (c.send_done_trigger != 0) {
        find(c.send_done_trigger, "send_done_trigger").activations.push_back(k);
      }
      if (c.recv_done_trigger != 0) {
        find(c.recv_done_trigger, "recv_done_trigger").activations.push_back(k);
      }
    }
    for (const TriggerDef& t : triggers_seen_) {
      if (t.targets.empty()) continue;  // its activations start nothing
      const std::string which = std::string(type_name(t.type)) + " trigger " + std::to_string(t.id);
      auto lines_of = [&](const std::vector<std::size_t>& conns) {
        std::vector<std::size_t> lines;
        for (const std::size_t k : conns) lines.push_back(conns_[k].line);
        return list_lines(lines);
      };
      const std::size_t n = t.activations.size();
      const std::string activated_by =
          " is activated " + std::to_string(n) + " times (" + lines_of(t.activations) + ")";
      if (n == 0) {
        fail(t.line, which + " is never activated (no connection has send_done_trigger " +
                         std::to_string(t.id) + " or recv_done_trigger " + std::to_string(t.id) +
                         "), so the connection on " + lines_of(t.targets) + " would never start");
      }
      switch (t.type) {
        case TriggerType::kOneshot:
          if (n > 1) {
            fail(t.line, which + activated_by +
                             " and fires at the first; Shoal's dependencies wait for all "
                             "of them, so this cannot be imported");
          }
          break;
        case TriggerType::kMultishot:
          if (n > 1) {
            fail(t.line, which + activated_by +
                             " and starts its k-th connection at the k-th; Shoal's "
                             "dependencies wait for all of them, so this cannot be imported");
          }
          if (t.targets.size() > 1) {
            fail(t.line, which +
                             " starts one connection per activation but is activated once, "
                             "so of the connections it starts (" +
                             lines_of(t.targets) + ") all but the first would never start");
          }
          break;
        case TriggerType::kBarrier:
          if (t.count != n) {
            fail(t.line, which + " has count " + std::to_string(t.count) + " but" + activated_by +
                             (t.count > n ? ", so it would never fire"
                                          : ", so it fires before all of them, which Shoal's "
                                            "dependencies cannot express"));
          }
          break;
      }
    }
  }

  void add_to_dag() {
    // htsim's triggers are global: any connection may start another anywhere. In
    // Shoal a dependency is local to a GPU (dag.hpp): a triggered connection must
    // have its source GPU among the endpoints of each connection activating its
    // trigger (a send_done activation seen at the sender, a recv_done one at the
    // receiver). We map all the same; Dag::validate rejects a non-local one.
    for (const Connection& c : conns_) {
      std::vector<std::string> after;
      if (c.trigger != 0) {
        const TriggerDef& t = triggers_seen_[trigger_index_.at(c.trigger)];
        for (const std::size_t k : t.activations) {
          if (std::find(after.begin(), after.end(), conns_[k].name) == after.end()) {
            after.push_back(conns_[k].name);
          }
        }
      }
      const Flow flow{c.src, c.dst, c.size};
      CoflowLabels labels;
      labels.type = CoflowType::kOther;
      try {
        dag_.add_coflow(c.name, labels, c.start.value_or(0), std::span<const Flow>(&flow, 1),
                        std::move(after));
      } catch (const Error& err) {
        fail(c.line, err.what());  // a name the DAG already holds
      }
    }
    try {
      dag_.resolve();
    } catch (const Error& err) {
      throw Error("htsim matrix " + path_ + ": " + err.what());
    }
  }

  static constexpr const char* kNoFailures =
      "link failures ('Failures', 'failure') are not supported: a workload does not fail links";

  const std::string& path_;
  Dag& dag_;
  Header nodes_, connections_, triggers_, failures_;
  bool body_started_ = false;
  std::vector<Connection> conns_;
  std::vector<TriggerDef> triggers_seen_;
  std::map<std::uint32_t, std::size_t> trigger_index_;
  std::map<std::uint32_t, std::size_t> flow_ids_;  // id -> line
  Bytes total_bytes_ = 0;
};

}  // namespace

void load_htsim_connection_matrix(const std::string& path, Dag& dag) { Reader(path, dag).run(); }

}  // namespace shoal::work
