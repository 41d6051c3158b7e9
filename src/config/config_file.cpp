#include "shoal/config/config_file.hpp"

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"

namespace shoal::config {

struct ConfigFile::Impl {
  toml::table root;
  std::set<std::string, std::less<>> used;  // "table.key" and "table"
};

namespace {

std::string where(const std::string& path, const toml::source_region& source) {
  if (source.begin.line == 0) return "config " + path + " (--set)";  // not from the file
  return "config " + path + ", line " + std::to_string(source.begin.line);
}

std::string dotted(std::string_view table, std::string_view key) {
  return std::string(table) + "." + std::string(key);
}

}  // namespace

ConfigFile::ConfigFile(const std::string& path, const std::vector<std::string>& overrides,
                       const std::string& shown_as)
    : path_(shown_as.empty() ? path : shown_as),
      folder_(std::filesystem::path(path).parent_path().string()),
      impl_(std::make_unique<Impl>()) {
  core::require_input_file(path, "config");
  {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream whole;
    whole << in.rdbuf();
    text_ = std::move(whole).str();
  }
  try {
    impl_->root = toml::parse(text_, path);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    if (begin.line == 0) throw Error("config " + path_ + ": " + std::string(e.description()));
    throw Error("config " + path_ + ", line " + std::to_string(begin.line) + ", column " +
                std::to_string(begin.column) + ": " + std::string(e.description()));
  }
  for (const std::string& item : overrides) {
    const auto eq = item.find('=');
    const auto dot = item.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 >= eq ||
        eq + 1 > item.size()) {
      throw Error("--set \"" + item + "\": expected TABLE.KEY=VALUE, e.g. network.cell_size=64KiB");
    }
    const std::string table = item.substr(0, dot);
    const std::string key = item.substr(dot + 1, eq - dot - 1);
    const std::string value = item.substr(eq + 1);
    // A TOML literal if it is one (4, 0.5, true, "x"), else the text as a string.
    toml::table parsed;
    try {
      parsed = toml::parse("v = " + value);
    } catch (const toml::parse_error&) {
      parsed.insert("v", value);
    }
    toml::node* node = impl_->root.get(table);
    if (node == nullptr) {
      impl_->root.insert(table, toml::table{});
      node = impl_->root.get(table);
    }
    if (!node->is_table()) throw Error("--set \"" + item + "\": " + table + " is not a table");
    node->as_table()->insert_or_assign(key, *parsed.get("v"));
  }
}

std::string ConfigFile::locate(const std::string& name, const std::string& folder) const {
  if (const auto mapped = input_map_.find(name); mapped != input_map_.end()) return mapped->second;
  const std::filesystem::path p(name);
  return p.is_absolute() ? p.string()
                         : (std::filesystem::path(folder.empty() ? folder_ : folder) / p).string();
}

std::string ConfigFile::input(std::string_view role, const std::string& name) {
  return input(role, name, folder_);
}

std::string ConfigFile::input(std::string_view role, const std::string& name,
                              const std::string& folder) {
  std::string file = locate(name, folder);
  inputs_.push_back({std::string(role), name, file});
  return file;
}

std::string ConfigFile::resolved_text() const {
  std::ostringstream out;
  out << impl_->root << "\n";
  return std::move(out).str();
}

ConfigFile::~ConfigFile() = default;
ConfigFile::ConfigFile(ConfigFile&&) noexcept = default;
ConfigFile& ConfigFile::operator=(ConfigFile&&) noexcept = default;

namespace {

/// Finds table.key, marking both used; nullptr when absent.
/// Finds table.key, marking both used; nullptr when absent. `table` may name an
/// element of an array of tables, "perturbation[2]".
const toml::node* find(ConfigFile::Impl& impl, const std::string& path, std::string_view table,
                       std::string_view key) {
  if (const auto bracket = table.find('['); bracket != std::string_view::npos) {
    const std::string name(table.substr(0, bracket));
    const auto index = static_cast<std::size_t>(
        std::stoul(std::string(table.substr(bracket + 1, table.size() - bracket - 2))));
    impl.used.insert(name);
    impl.used.insert(name + "[]." + std::string(key));
    const toml::node* array = impl.root.get(name);
    if (array == nullptr || !array->is_array_of_tables() || index >= array->as_array()->size()) {
      return nullptr;
    }
    return array->as_array()->get(index)->as_table()->get(key);
  }
  impl.used.insert(std::string(table));
  impl.used.insert(dotted(table, key));
  const toml::node* t = impl.root.get(table);
  if (t == nullptr) return nullptr;
  if (!t->is_table())
    throw Error(where(path, t->source()) + ": " + std::string(table) + " must be a table ([" +
                std::string(table) + "])");
  return t->as_table()->get(key);
}

[[noreturn]] void wrong_type(const std::string& path, const toml::node& n, std::string_view table,
                             std::string_view key, std::string_view expected) {
  throw Error(where(path, n.source()) + ": " + dotted(table, key) + " must be " +
              std::string(expected));
}

}  // namespace

std::optional<std::int64_t> ConfigFile::integer(std::string_view table, std::string_view key) {
  const toml::node* n = find(*impl_, path_, table, key);
  if (n == nullptr) return std::nullopt;
  if (!n->is_integer()) wrong_type(path_, *n, table, key, "an integer");
  return n->as_integer()->get();
}

bool ConfigFile::holds_integer(std::string_view table, std::string_view key) {
  const toml::node* n = find(*impl_, path_, table, key);
  return n != nullptr && n->is_integer();
}

std::optional<double> ConfigFile::number(std::string_view table, std::string_view key) {
  const toml::node* n = find(*impl_, path_, table, key);
  if (n == nullptr) return std::nullopt;
  if (n->is_integer()) return static_cast<double>(n->as_integer()->get());
  if (!n->is_floating_point()) wrong_type(path_, *n, table, key, "a number");
  return n->as_floating_point()->get();
}

std::optional<bool> ConfigFile::boolean(std::string_view table, std::string_view key) {
  const toml::node* n = find(*impl_, path_, table, key);
  if (n == nullptr) return std::nullopt;
  if (!n->is_boolean()) wrong_type(path_, *n, table, key, "true or false");
  return n->as_boolean()->get();
}

std::optional<std::string> ConfigFile::string(std::string_view table, std::string_view key) {
  const toml::node* n = find(*impl_, path_, table, key);
  if (n == nullptr) return std::nullopt;
  if (!n->is_string()) wrong_type(path_, *n, table, key, "a string");
  return n->as_string()->get();
}

std::optional<std::vector<std::string>> ConfigFile::strings(std::string_view table,
                                                            std::string_view key) {
  const toml::node* n = find(*impl_, path_, table, key);
  if (n == nullptr) return std::nullopt;
  const toml::array* array = n->as_array();
  if (array == nullptr) wrong_type(path_, *n, table, key, "an array of strings");
  std::vector<std::string> values;
  for (const toml::node& item : *array) {
    if (!item.is_string()) wrong_type(path_, item, table, key, "an array of strings");
    values.push_back(item.as_string()->get());
  }
  return values;
}

std::optional<std::vector<std::int64_t>> ConfigFile::integers(std::string_view table,
                                                              std::string_view key) {
  const toml::node* n = find(*impl_, path_, table, key);
  if (n == nullptr) return std::nullopt;
  const toml::array* array = n->as_array();
  if (array == nullptr) wrong_type(path_, *n, table, key, "an array of integers");
  std::vector<std::int64_t> values;
  for (const toml::node& item : *array) {
    if (!item.is_integer()) wrong_type(path_, item, table, key, "an array of integers");
    values.push_back(item.as_integer()->get());
  }
  return values;
}

namespace {

template <class Parse>
auto with_unit(ConfigFile::Impl& impl, const std::string& path, std::string_view table,
               std::string_view key, std::string_view example, Parse parse)
    -> std::optional<decltype(parse(std::string_view{}))> {
  const toml::node* n = find(impl, path, table, key);
  if (n == nullptr) return std::nullopt;
  if (!n->is_string()) {
    wrong_type(path, *n, table, key, "a string with a unit, e.g. \"" + std::string(example) + "\"");
  }
  try {
    return parse(n->as_string()->get());
  } catch (const Error& e) {
    throw Error(where(path, n->source()) + ": " + dotted(table, key) + ": " + e.what());
  }
}

}  // namespace

std::optional<Time> ConfigFile::time(std::string_view table, std::string_view key) {
  return with_unit(*impl_, path_, table, key, "1us",
                   [](std::string_view s) { return parse_time(s); });
}

std::optional<Bytes> ConfigFile::bytes(std::string_view table, std::string_view key) {
  return with_unit(*impl_, path_, table, key, "32MiB",
                   [](std::string_view s) { return parse_bytes(s); });
}

std::optional<BitsPerSecond> ConfigFile::rate(std::string_view table, std::string_view key) {
  return with_unit(*impl_, path_, table, key, "400Gbps",
                   [](std::string_view s) { return parse_rate(s); });
}

void ConfigFile::reject_unknown(std::string_view table) const {
  const toml::node* node = impl_->root.get(table);
  if (node == nullptr || !node->is_table()) return;
  for (const auto& [key, value] : *node->as_table()) {
    const std::string name = dotted(table, key.str());
    if (!impl_->used.contains(name)) {
      throw Error(where(path_, key.source()) + ": unknown key '" + name + "'");
    }
  }
}

std::size_t ConfigFile::entries(std::string_view array) {
  impl_->used.insert(std::string(array));
  const toml::node* node = impl_->root.get(array);
  if (node == nullptr) return 0;
  if (!node->is_array_of_tables()) {
    throw Error(where(path_, node->source()) + ": " + std::string(array) + " must be written [[" +
                std::string(array) + "]]");
  }
  return node->as_array()->size();
}

void ConfigFile::reject_unknown() const {
  for (const auto& [table_key, node] : impl_->root) {
    const std::string table(table_key.str());
    if (!impl_->used.contains(table)) {
      throw Error(where(path_, table_key.source()) + ": unknown table or key '" + table + "'");
    }
    if (node.is_array_of_tables()) {
      for (const toml::node& element : *node.as_array()) {
        for (const auto& [key, value] : *element.as_table()) {
          if (!impl_->used.contains(table + "[]." + std::string(key.str()))) {
            throw Error(where(path_, key.source()) + ": unknown key '" + std::string(key.str()) +
                        "' in [[" + table + "]]");
          }
        }
      }
      continue;
    }
    if (!node.is_table()) continue;
    for (const auto& [key, value] : *node.as_table()) {
      const std::string name = dotted(table, key.str());
      if (!impl_->used.contains(name)) {
        throw Error(where(path_, key.source()) + ": unknown key '" + name + "'");
      }
    }
  }
}

}  // namespace shoal::config
