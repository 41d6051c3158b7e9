#include "shoal/work/dag_file.hpp"

#include <toml++/toml.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include "shoal/core/error.hpp"
#include "shoal/core/random.hpp"

namespace shoal::work {
namespace {

/// "workload PATH, line N", or without the line for nodes that have none (JSON).
std::string where(const std::string& path, const toml::source_region& source) {
  if (source.begin.line == 0) return "workload " + path;
  return "workload " + path + ", line " + std::to_string(source.begin.line);
}

/// A JSON document as the TOML tree the readers take: objects become tables.
/// `depth` counts the enclosing objects and arrays: a workload needs 5 (a flow
/// in a coflow), and deep nesting must not exhaust the stack.
toml::table to_toml(const nlohmann::json& object, const std::string& path, int depth = 0);

constexpr int kMaxJsonDepth = 64;
constexpr auto kMaxJsonInteger =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

/// Appends one JSON value, converted, to `out`.
void append_to_toml(toml::array& out, const nlohmann::json& item, const std::string& path,
                    int depth) {
  if (depth > kMaxJsonDepth) {
    throw Error("workload " + path + ": objects and arrays nested deeper than " +
                std::to_string(kMaxJsonDepth) + " levels (a workload needs 5)");
  }
  if (item.is_object()) {
    out.push_back(to_toml(item, path, depth + 1));
  } else if (item.is_array()) {
    toml::array array;
    for (const auto& element : item) append_to_toml(array, element, path, depth + 1);
    out.push_back(std::move(array));
  } else if (item.is_string()) {
    out.push_back(item.get<std::string>());
  } else if (item.is_boolean()) {
    out.push_back(item.get<bool>());
  } else if (item.is_number_unsigned() && item.get<std::uint64_t>() > kMaxJsonInteger) {
    throw Error("workload " + path + ": the number " + item.dump() +
                " is too large (integers go up to " + std::to_string(kMaxJsonInteger) + ")");
  } else if (item.is_number_integer()) {
    out.push_back(item.get<std::int64_t>());
  } else if (item.is_number()) {
    out.push_back(item.get<double>());
  } else {
    throw Error("workload " + path + ": null is not a value a workload can hold");
  }
}

toml::table to_toml(const nlohmann::json& object, const std::string& path, int depth) {
  toml::table out;
  for (const auto& [key, value] : object.items()) {
    toml::array one;
    append_to_toml(one, value, path, depth);
    out.insert(key, std::move(*one.get(0)));
  }
  return out;
}

/// One [[task]], [[coflow]] or [[pattern]] entry, read key by key; keys nobody
/// asked for are errors, like every other mistake, with the file and line.
class Entry {
 public:
  /// `subject` names the entry in messages: `task "fwd0"`, or `task #2` without a name.
  Entry(const std::string& path, std::string subject, const toml::table& t)
      : path_(path), subject_(std::move(subject)), table_(t) {}

  static std::string subject_of(std::string_view kind, std::size_t index, const toml::table& t) {
    if (const toml::node* n = t.get("name"); n != nullptr && n->is_string()) {
      return std::string(kind) + " \"" + n->as_string()->get() + "\"";
    }
    return std::string(kind) + " #" + std::to_string(index + 1);
  }

  /// An entry nested in this one (a flow of a coflow), reported under this one's name.
  Entry nested(std::string_view kind, std::size_t index, const toml::table& t) const {
    return Entry(path_, subject_ + ", " + std::string(kind) + " #" + std::to_string(index + 1), t);
  }

  [[noreturn]] void fail(const toml::node* at, const std::string& what) const {
    throw Error(where(path_, at != nullptr ? at->source() : table_.source()) + ": " + subject_ +
                ": " + what);
  }

  const toml::node* get(std::string_view key) {
    used_.insert(std::string(key));
    return table_.get(key);
  }

  const toml::node& require(std::string_view key) {
    const toml::node* n = get(key);
    if (n == nullptr) fail(nullptr, "missing key '" + std::string(key) + "'");
    return *n;
  }

  std::string string(std::string_view key, std::optional<std::string> fallback = std::nullopt) {
    const toml::node* n = fallback ? get(key) : &require(key);
    if (n == nullptr) return *fallback;
    if (!n->is_string()) fail(n, "'" + std::string(key) + "' must be a string");
    return n->as_string()->get();
  }

  std::int64_t integer(std::string_view key, std::optional<std::int64_t> fallback = std::nullopt,
                       std::int64_t max = UINT32_MAX) {
    const toml::node* n = fallback ? get(key) : &require(key);
    if (n == nullptr) return *fallback;
    if (!n->is_integer()) fail(n, "'" + std::string(key) + "' must be an integer");
    const std::int64_t v = n->as_integer()->get();
    if (v < 0 || v > max) {
      fail(n, "'" + std::string(key) + "' must be between 0 and " + std::to_string(max));
    }
    return v;
  }

  GpuId gpu(std::string_view key) {
    return static_cast<GpuId>(integer(key, std::nullopt, kMaxGpuId));
  }

  template <class Parse>
  std::int64_t unit(std::string_view key, Parse parse, std::string_view example,
                    std::optional<std::int64_t> fallback = std::nullopt) {
    const toml::node* n = fallback ? get(key) : &require(key);
    if (n == nullptr) return *fallback;
    if (!n->is_string()) {
      fail(n, "'" + std::string(key) + "' must be a string with a unit, e.g. \"" +
                  std::string(example) + "\"");
    }
    try {
      return parse(n->as_string()->get());
    } catch (const Error& e) {
      fail(n, "'" + std::string(key) + "': " + e.what());
    }
  }

  Time time(std::string_view key, std::optional<Time> fallback = std::nullopt) {
    return unit(
        key, [](std::string_view s) { return parse_time(s); }, "10us", fallback);
  }
  Bytes bytes(std::string_view key) {
    return unit(
        key, [](std::string_view s) { return parse_bytes(s); }, "32MB");
  }

  std::vector<std::string> names(std::string_view key) {
    std::vector<std::string> out;
    const toml::node* n = get(key);
    if (n == nullptr) return out;
    if (n->is_string()) return {n->as_string()->get()};
    if (!n->is_array()) fail(n, "'" + std::string(key) + "' must be a name or a list of names");
    for (const toml::node& item : *n->as_array()) {
      if (!item.is_string()) fail(&item, "'" + std::string(key) + "' must list names (strings)");
      out.push_back(item.as_string()->get());
    }
    return out;
  }

  /// A GPU list: [0, 3, 5] or a range string "0..1023" (inclusive).
  std::vector<GpuId> gpus(std::string_view key) {
    const toml::node& n = require(key);
    std::vector<GpuId> out;
    if (n.is_array()) {
      for (const toml::node& item : *n.as_array()) {
        if (!item.is_integer() || item.as_integer()->get() < 0 ||
            item.as_integer()->get() > kMaxGpuId) {
          fail(&item, "'" + std::string(key) + "' must list GPU ids (integers 0.." +
                          std::to_string(kMaxGpuId) + ")");
        }
        out.push_back(static_cast<GpuId>(item.as_integer()->get()));
      }
    } else if (n.is_string()) {
      const std::string text = n.as_string()->get();
      const auto dots = text.find("..");
      std::uint32_t first = 0, last = 0;
      const auto ok = [](const char* b, const char* e, std::uint32_t& v) {
        const auto [p, ec] = std::from_chars(b, e, v);
        return ec == std::errc() && p == e && b != e;
      };
      if (dots == std::string::npos || !ok(text.data(), text.data() + dots, first) ||
          !ok(text.data() + dots + 2, text.data() + text.size(), last) || last < first) {
        fail(&n, "'" + std::string(key) + "' must be a list of GPU ids or a range \"FIRST..LAST\"");
      }
      if (last > kMaxGpuId) {
        fail(&n, "'" + std::string(key) + "' reaches GPU " + std::to_string(last) +
                     "; GPU ids go up to " + std::to_string(kMaxGpuId));
      }
      for (std::uint64_t g = first; g <= last; ++g) out.push_back(static_cast<GpuId>(g));
    } else {
      fail(&n, "'" + std::string(key) + "' must be a list of GPU ids or a range \"FIRST..LAST\"");
    }
    if (out.empty()) fail(&n, "'" + std::string(key) + "' is empty");
    std::vector<GpuId> sorted = out;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      fail(&n, "'" + std::string(key) + "' lists a GPU twice");
    }
    return out;
  }

  CoflowLabels labels(CoflowType default_type) {
    CoflowLabels l;
    l.type = default_type;
    if (const toml::node* n = get("type")) {
      if (!n->is_string()) fail(n, "'type' must be a string (EP, PP, DP, TP or OTHER)");
      try {
        l.type = parse_coflow_type(n->as_string()->get());
      } catch (const Error& e) {
        fail(n, e.what());
      }
    }
    l.job = static_cast<std::uint32_t>(integer("job", 0));
    l.iteration = static_cast<std::uint32_t>(integer("iteration", 0));
    l.micro_batch = static_cast<std::uint32_t>(integer("micro_batch", 0));
    l.layer = static_cast<std::uint32_t>(integer("layer", 0));
    l.stage = static_cast<std::uint32_t>(integer("stage", 0));
    return l;
  }

  /// Rejects any key outside `allowed` before reading: a misspelt key is reported
  /// as itself, not as the required key it was meant to be.
  void allow_only(std::initializer_list<std::string_view> allowed) const {
    for (const auto& [key, value] : table_) {
      if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) {
        fail(&value, "unknown key '" + std::string(key.str()) + "'");
      }
    }
  }

  void reject_unknown() const {
    for (const auto& [key, value] : table_) {
      if (!used_.contains(std::string(key.str()))) {
        fail(&value, "unknown key '" + std::string(key.str()) + "'");
      }
    }
  }

 private:
  const std::string& path_;
  std::string subject_;
  const toml::table& table_;
  std::set<std::string, std::less<>> used_;
};

/// What a workload file adds up to so far, for its bounds.
struct Totals {
  std::uint64_t pattern_flows = 0;
  Bytes bytes = 0;
};

/// Counts `count` flows of `bytes` each: the bytes of a file's flows must add up
/// to an int64, or every total of them (`shoal workload check`) overflows.
void add_bytes(Entry& e, Bytes bytes, std::uint64_t count, Totals& totals) {
  Bytes sum = 0;
  if (__builtin_mul_overflow(bytes, count, &sum) ||
      __builtin_add_overflow(totals.bytes, sum, &totals.bytes)) {
    e.fail(nullptr, "the flows of the workload add up to more than " +
                        std::to_string(std::numeric_limits<Bytes>::max()) + " bytes");
  }
}

/// The flows the patterns of one workload file may expand to, in all: a full
/// all-to-all among 4,096 GPUs. A few lines of pattern must not ask for more
/// memory than any machine has ("0..16777215" all-to-all: 2.8e14 flows).
constexpr std::uint64_t kMaxPatternFlows = std::uint64_t{1} << 24;

/// Counts a pattern's `flows` of `bytes` each, before it expands.
void expand(Entry& e, std::uint64_t flows, Bytes bytes, Totals& totals) {
  totals.pattern_flows += flows;
  if (totals.pattern_flows > kMaxPatternFlows) {
    e.fail(nullptr, "expands to " + std::to_string(flows) +
                        " flows; the patterns of a workload file hold at most " +
                        std::to_string(kMaxPatternFlows) +
                        " in all (an all-to-all among 4096 GPUs)");
  }
  add_bytes(e, bytes, flows, totals);
}

void read_task(Entry& e, Dag& dag, Totals& /*totals*/) {
  e.allow_only({"name", "gpu", "duration", "after"});
  std::string name = e.string("name");
  const GpuId gpu = e.gpu("gpu");
  const Time duration = e.time("duration");
  std::vector<std::string> after = e.names("after");
  e.reject_unknown();
  dag.add_task(std::move(name), gpu, duration, std::move(after));
}

void read_coflow(Entry& e, Dag& dag, Totals& totals) {
  e.allow_only({"name", "type", "job", "iteration", "micro_batch", "layer", "stage", "start",
                "after", "flows"});
  std::string name = e.string("name");
  const CoflowLabels labels = e.labels(CoflowType::kOther);
  const Time start = e.time("start", 0);
  std::vector<std::string> after = e.names("after");
  const toml::node& list = e.require("flows");
  if (!list.is_array()) e.fail(&list, "'flows' must be a list of {src, dst, bytes}");
  std::vector<Flow> flows;
  for (const toml::node& item : *list.as_array()) {
    if (!item.is_table()) e.fail(&item, "'flows' must be a list of {src, dst, bytes}");
    Entry f = e.nested("flow", flows.size(), *item.as_table());
    f.allow_only({"src", "dst", "bytes"});
    Flow flow;
    flow.src = f.gpu("src");
    flow.dst = f.gpu("dst");
    flow.bytes = f.bytes("bytes");
    add_bytes(f, flow.bytes, 1, totals);
    f.reject_unknown();
    flows.push_back(flow);
  }
  e.reject_unknown();
  dag.add_coflow(std::move(name), labels, start, flows, std::move(after));
}

/// Traffic patterns: each expands to one coflow.
void read_pattern(Entry& e, Dag& dag, Totals& totals) {
  // Keys of any kind here; reject_unknown() below catches one that the kind ignores.
  e.allow_only({"name", "kind", "type", "job", "iteration", "micro_batch", "layer", "stage",
                "start", "after", "gpus", "bytes", "seed", "group_size", "groups", "sources",
                "destination", "source", "destinations"});
  std::string name = e.string("name");
  const std::string kind = e.string("kind");
  const CoflowLabels labels = e.labels(CoflowType::kOther);
  const Time start = e.time("start", 0);
  std::vector<std::string> after = e.names("after");
  std::vector<Flow> flows;
  if (kind == "permutation") {
    const std::vector<GpuId> gpus = e.gpus("gpus");
    const Bytes bytes = e.bytes("bytes");
    if (gpus.size() < 2) e.fail(nullptr, "a permutation needs at least 2 GPUs");
    expand(e, gpus.size(), bytes, totals);
    // A random derangement (nobody sends to itself) by Sattolo's algorithm: a single
    // cycle through all GPUs, drawn from the pattern's own seed.
    core::Rng rng(static_cast<std::uint64_t>(e.integer("seed", 1, INT64_MAX)), 0);
    std::vector<std::size_t> next(gpus.size());
    for (std::size_t i = 0; i < next.size(); ++i) next[i] = i;
    for (std::size_t i = next.size() - 1; i > 0; --i) std::swap(next[i], next[rng.below(i)]);
    for (std::size_t i = 0; i < gpus.size(); ++i) flows.push_back({gpus[i], gpus[next[i]], bytes});
  } else if (kind == "all-to-all") {
    const std::vector<GpuId> gpus = e.gpus("gpus");
    const Bytes bytes = e.bytes("bytes");
    const auto group_size =
        static_cast<std::size_t>(e.integer("group_size", static_cast<std::int64_t>(gpus.size())));
    const std::string layout = e.string("groups", "contiguous");
    if (group_size < 2 || gpus.size() % group_size != 0) {
      e.fail(nullptr, "group_size " + std::to_string(group_size) +
                          " must be at least 2 and divide " + std::to_string(gpus.size()) +
                          " GPUs");
    }
    if (layout != "contiguous" && layout != "strided") {
      e.fail(nullptr, "'groups' must be \"contiguous\" or \"strided\"");
    }
    expand(e, std::uint64_t{gpus.size()} * (group_size - 1), bytes, totals);
    const std::size_t groups = gpus.size() / group_size;
    // contiguous: group k = positions [k*size, (k+1)*size); strided: k, k+groups, k+2*groups, ...
    auto member = [&](std::size_t group, std::size_t j) {
      return gpus[layout == "contiguous" ? group * group_size + j : group + j * groups];
    };
    for (std::size_t g = 0; g < groups; ++g) {
      for (std::size_t a = 0; a < group_size; ++a) {
        for (std::size_t b = 0; b < group_size; ++b) {
          if (a != b) flows.push_back({member(g, a), member(g, b), bytes});
        }
      }
    }
  } else if (kind == "incast") {
    const std::vector<GpuId> sources = e.gpus("sources");
    const GpuId destination = e.gpu("destination");
    const Bytes bytes = e.bytes("bytes");
    expand(e, sources.size(), bytes, totals);
    for (const GpuId s : sources) flows.push_back({s, destination, bytes});
  } else if (kind == "one-to-many") {
    const GpuId source = e.gpu("source");
    const std::vector<GpuId> destinations = e.gpus("destinations");
    const Bytes bytes = e.bytes("bytes");
    expand(e, destinations.size(), bytes, totals);
    for (const GpuId d : destinations) flows.push_back({source, d, bytes});
  } else {
    e.fail(e.get("kind"), "unknown pattern kind \"" + kind +
                              "\" (use permutation, all-to-all, incast or one-to-many)");
  }
  e.reject_unknown();
  dag.add_coflow(std::move(name), labels, start, flows, std::move(after));
}

}  // namespace

void load_dag_file(const std::string& path, Dag& dag, bool json) {
  toml::table root;
  if (json) {
    // Generated workloads: the same entries, as {"task": [...], "coflow": [...], ...}.
    std::ifstream in(path);
    if (!in) throw Error("workload " + path + ": cannot be opened");
    nlohmann::json json;
    try {
      json = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& err) {
      // The library's text, without its "[json.exception.parse_error.101] " tag.
      std::string what = err.what();
      if (const auto tag = what.find("] "); what.rfind("[json.", 0) == 0 && tag != what.npos) {
        what.erase(0, tag + 2);
      }
      throw Error("workload " + path + ", byte " + std::to_string(err.byte) + ": not valid JSON (" +
                  what + ")");
    } catch (const nlohmann::json::exception& err) {
      // Valid syntax, but a value JSON cannot hold: a number beyond a double (1e400).
      throw Error("workload " + path + ": not valid JSON (" + std::string(err.what()) + ")");
    }
    if (!json.is_object()) {
      throw Error("workload " + path +
                  ": the document must be an object of task, coflow and pattern lists");
    }
    root = to_toml(json, path);
  } else {
    try {
      root = toml::parse_file(path);
    } catch (const toml::parse_error& err) {
      const auto& at = err.source().begin;
      if (at.line == 0) throw Error("workload " + path + ": " + std::string(err.description()));
      throw Error("workload " + path + ", line " + std::to_string(at.line) + ", column " +
                  std::to_string(at.column) + ": " + std::string(err.description()));
    }
  }
  using Reader = void (*)(Entry&, Dag&, Totals&);
  const std::pair<std::string_view, Reader> sections[] = {
      {"task", read_task}, {"coflow", read_coflow}, {"pattern", read_pattern}};
  for (const auto& [key, value] : root) {
    const std::string_view name = key.str();  // clang 14 cannot capture a structured binding
    const bool known = std::any_of(std::begin(sections), std::end(sections),
                                   [&](const auto& s) { return s.first == name; });
    if (!known) {
      throw Error(where(path, key.source()) + ": unknown key '" + std::string(key.str()) +
                  "' (a workload holds [[task]], [[coflow]] and [[pattern]] entries)");
    }
  }
  const bool empty = std::none_of(std::begin(sections), std::end(sections), [&](const auto& s) {
    const toml::node* list = root.get(s.first);
    return list != nullptr && (!list->is_array() || !list->as_array()->empty());
  });
  if (empty) {
    throw Error("workload " + path +
                ": holds no [[task]], [[coflow]] or [[pattern]] entry: nothing to simulate");
  }
  Totals totals;
  for (const auto& [section, read] : sections) {
    const toml::node* list = root.get(section);
    if (list == nullptr) continue;
    if (!list->is_array_of_tables()) {
      throw Error(where(path, list->source()) + ": '" + std::string(section) +
                  "' must be written [[" + std::string(section) + "]]");
    }
    std::size_t index = 0;
    for (const toml::node& item : *list->as_array()) {
      const toml::table& table = *item.as_table();
      Entry entry(path, Entry::subject_of(section, index++, table), table);
      try {
        read(entry, dag, totals);
      } catch (const Error& err) {
        const std::string what = err.what();
        if (what.rfind("workload ", 0) == 0) throw;
        entry.fail(nullptr, what);  // from the Dag: a duplicate name
      }
    }
  }
  // Now that every name is known, an 'after' naming none is reported at its line.
  for (const auto& [section, read] : sections) {
    const toml::node* list = root.get(section);
    if (list == nullptr) continue;
    std::size_t index = 0;
    for (const toml::node& item : *list->as_array()) {
      const toml::table& table = *item.as_table();
      Entry entry(path, Entry::subject_of(section, index++, table), table);
      for (const std::string& name : entry.names("after")) {
        if (!dag.find(name)) {
          entry.fail(table.get("after"), "'after' names \"" + name + "\", which does not exist");
        }
      }
    }
  }
  try {
    dag.resolve();
  } catch (const Error& err) {
    throw Error("workload " + path + ": " + err.what());
  }
}

}  // namespace shoal::work
