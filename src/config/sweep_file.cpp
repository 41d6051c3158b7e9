// Sweep files (docs/sweeps.md): [sweep] (base, results, ranks), [set] (fixed
// overrides) and [axes] (TABLE.KEY = [values...]), expanded in file order.
#include "shoal/config/sweep_file.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"

namespace shoal::config {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const toml::node* at, const std::string& key,
                         const std::string& what) const {
    std::string where = "sweep " + path_;
    if (at != nullptr && at->source().begin.line > 0) {
      where += ", line " + std::to_string(at->source().begin.line);
    }
    throw Error(where + ": " + (key.empty() ? "" : key + ": ") + what);
  }

  /// A value as a TOML literal, to hand to ConfigFile as an override.
  std::string literal(const toml::node& node, const std::string& key) const {
    if (const auto* s = node.as_string()) return quoted(s->get());
    if (const auto* i = node.as_integer()) return std::to_string(i->get());
    if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
    if (const auto* f = node.as_floating_point()) {
      const double v = f->get();
      if (!std::isfinite(v)) fail(&node, key, "a number must be finite");
      std::string text = fmt::format("{}", v);
      if (text.find_first_of(".e") == std::string::npos) text += ".0";
      return text;
    }
    if (const auto* a = node.as_array()) {
      std::string text = "[";
      for (std::size_t i = 0; i < a->size(); ++i) {
        if (i > 0) text += ", ";
        text += literal(*a->get(i), key);
      }
      return text + "]";
    }
    fail(&node, key,
         "values are strings, numbers, booleans or arrays of them (not tables or dates)");
  }

  /// A short label of a value for point names: letters, digits, '.', '+', '-'.
  std::string label(const toml::node& node, const std::string& key) const {
    std::string text;
    if (const auto* s = node.as_string()) {
      text = s->get();
    } else if (const auto* a = node.as_array()) {
      for (std::size_t i = 0; i < a->size(); ++i) {
        if (i > 0) text += "+";
        text += label(*a->get(i), key);
      }
    } else {
      text = literal(node, key);
    }
    for (char& c : text) {
      const bool keep =
          std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '+' || c == '-';
      if (!keep) c = '-';
    }
    if (text.empty()) fail(&node, key, "an empty value cannot name a point");
    return text;
  }

  /// Walks TABLE.KEY leaves of [set] or [axes]: exactly two levels.
  template <typename Visit>
  void leaves(const toml::table& section, const std::string& name, Visit&& visit) const {
    for (const auto& [table, node] : section) {
      const std::string table_name(table.str());
      const auto* inner = node.as_table();
      if (inner == nullptr) {
        fail(&node, name + "." + table_name,
             "expected TABLE.KEY = value (e.g. topology.gpus), a key of a config table");
      }
      for (const auto& [key, value] : *inner) {
        const std::string full = table_name + "." + std::string(key.str());
        if (value.is_table()) {
          fail(&value, name + "." + full, "expected TABLE.KEY = value: one level of table only");
        }
        visit(full, value);
      }
    }
  }

 private:
  static std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (u < 0x20 || u == 0x7f) {
        out += fmt::format("\\u{:04X}", static_cast<unsigned>(u));
      } else {
        out += c;
      }
    }
    return out + "\"";
  }

  std::string path_;
};

std::string axis_label(const std::string& key) {
  const auto dot = key.find('.');
  std::string label = key.substr(dot + 1);
  if (label == "name") label = key.substr(0, dot);  // policy.name -> policy
  std::replace(label.begin(), label.end(), '_', '-');
  return label;
}

}  // namespace

std::size_t Sweep::size() const {
  std::size_t n = 1;
  for (const SweepAxis& axis : axes) n *= axis.values.size();
  return n;
}

SweepPoint Sweep::point(std::size_t index) const {
  if (index >= size()) {
    throw Error("sweep " + path + ": point " + std::to_string(index) + " does not exist (0 to " +
                std::to_string(size() - 1) + ")");
  }
  SweepPoint p;
  p.index = index;
  p.overrides = fixed;
  std::vector<std::size_t> choice(axes.size());
  std::size_t rest = index;
  for (std::size_t a = axes.size(); a-- > 0;) {
    choice[a] = rest % axes[a].values.size();
    rest /= axes[a].values.size();
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const SweepAxis& axis = axes[a];
    if (!p.name.empty()) p.name += "_";
    p.name += axis_label(axis.key) + "-" + axis.labels[choice[a]];
    p.overrides.push_back(axis.key + "=" + axis.values[choice[a]]);
  }
  if (p.name.empty()) p.name = "base";
  return p;
}

std::string Sweep::results_folder() const {
  if (!results.empty()) return results;
  return (std::filesystem::path("results") / std::filesystem::path(path).stem()).string();
}

Sweep parse_sweep(std::string_view text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw Error("sweep " + path + (begin.line > 0 ? ", line " + std::to_string(begin.line) : "") +
                ": " + std::string(e.description()));
  }
  const Reader reader(path);
  Sweep sweep;
  sweep.path = path;

  for (const auto& [name, node] : root) {
    const std::string key(name.str());
    if (key != "sweep" && key != "set" && key != "axes") {
      reader.fail(&node, key, "unknown table; a sweep file has [sweep], [set] and [axes]");
    }
    if (!node.is_table()) reader.fail(&node, key, "must be a table");
  }
  const toml::table* head = root["sweep"].as_table();
  if (head == nullptr)
    reader.fail(nullptr, "sweep.base", "missing: [sweep] base = \"CONFIG.toml\"");
  for (const auto& [name, node] : *head) {
    const std::string key = "sweep." + std::string(name.str());
    if (name == "base" || name == "results" || name == "description") {
      if (!node.is_string()) reader.fail(&node, key, "must be a string");
    } else if (name == "ranks" || name == "gpus_per_rank" || name == "max_ranks") {
      const auto* v = node.as_integer();
      if (v == nullptr || v->get() < 1 || v->get() > 1'000'000) {
        reader.fail(&node, key, "must be a whole number from 1 to 1000000");
      }
    } else {
      reader.fail(&node, key,
                  "unknown key; [sweep] has base, results, description, ranks, gpus_per_rank, "
                  "max_ranks");
    }
  }
  const auto base = (*head)["base"].value<std::string>();
  if (!base || base->empty()) {
    reader.fail(head, "sweep.base", "missing: the run config the points start from");
  }
  const std::filesystem::path base_path(*base);
  sweep.base =
      base_path.is_absolute()
          ? base_path.string()
          : (std::filesystem::path(path).parent_path() / base_path).lexically_normal().string();
  sweep.results = (*head)["results"].value_or(std::string());
  if (const auto r = (*head)["ranks"].value<std::int64_t>()) sweep.ranks = static_cast<int>(*r);
  sweep.gpus_per_rank = (*head)["gpus_per_rank"].value_or(std::int64_t{0});
  sweep.max_ranks = static_cast<int>((*head)["max_ranks"].value_or(std::int64_t{0}));
  if (sweep.ranks && sweep.gpus_per_rank > 0) {
    reader.fail(head, "sweep.ranks",
                "give ranks (the same for every point) or gpus_per_rank, not both");
  }

  std::set<std::string> keys;
  if (const toml::table* set = root["set"].as_table()) {
    reader.leaves(*set, "set", [&](const std::string& key, const toml::node& value) {
      keys.insert(key);
      sweep.fixed.push_back(key + "=" + reader.literal(value, "set." + key));
    });
  }

  struct Located {
    toml::source_position at;
    SweepAxis axis;
  };
  std::vector<Located> axes;
  if (const toml::table* table = root["axes"].as_table()) {
    reader.leaves(*table, "axes", [&](const std::string& key, const toml::node& value) {
      const std::string name = "axes." + key;
      if (keys.contains(key)) reader.fail(&value, name, "also in [set]: a key is fixed or swept");
      const auto* values = value.as_array();
      if (values == nullptr || values->empty()) {
        reader.fail(&value, name, "an axis is a non-empty array of values, e.g. [1024, 2048]");
      }
      SweepAxis axis;
      axis.key = key;
      std::set<std::string> seen;
      for (const toml::node& v : *values) {
        axis.values.push_back(reader.literal(v, name));
        axis.labels.push_back(reader.label(v, name));
        if (!seen.insert(axis.labels.back()).second) {
          reader.fail(&v, name, "two values name the same point (\"" + axis.labels.back() + "\")");
        }
      }
      axes.push_back({value.source().begin, std::move(axis)});
    });
  }
  // Expansion follows the file's order, not toml++'s (sorted) table order.
  std::stable_sort(axes.begin(), axes.end(), [](const Located& a, const Located& b) {
    return std::pair(a.at.line, a.at.column) < std::pair(b.at.line, b.at.column);
  });
  std::size_t points = 1;
  for (Located& located : axes) {
    points *= located.axis.values.size();
    if (points > kMaxSweepPoints) {
      reader.fail(nullptr, "axes",
                  "more than " + std::to_string(kMaxSweepPoints) + " points; split the sweep");
    }
    sweep.axes.push_back(std::move(located.axis));
  }
  return sweep;
}

Sweep read_sweep_file(const std::string& path) {
  core::require_input_file(path, "sweep");
  std::ifstream in(path);
  if (!in) throw Error("sweep " + path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  Sweep sweep = parse_sweep(text.str(), path);
  if (!std::filesystem::is_regular_file(sweep.base)) {
    throw Error("sweep " + path + ": sweep.base: " + sweep.base +
                " does not exist (a path relative to the sweep file)");
  }
  return sweep;
}

}  // namespace shoal::config
