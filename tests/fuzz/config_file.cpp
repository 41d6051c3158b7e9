// shoal::config::ConfigFile: parsing, --set overrides ("#set" lines, overrides.hpp),
// and every getter on every key of every table the file holds.
#include <toml++/toml.h>

#include "fuzz_common.hpp"
#include "overrides.hpp"
#include "shoal/config/config_file.hpp"

namespace {

using shoal::fuzz::expect_only_errors;

/// Every getter on table.key; each may reject the value's type or unit.
void read_all(shoal::config::ConfigFile& config, const std::string& table, std::string_view key) {
  expect_only_errors([&] { config.integer(table, key); });
  expect_only_errors([&] { config.number(table, key); });
  expect_only_errors([&] { config.boolean(table, key); });
  expect_only_errors([&] { config.string(table, key); });
  expect_only_errors([&] { config.strings(table, key); });
  expect_only_errors([&] { config.time(table, key); });
  expect_only_errors([&] { config.bytes(table, key); });
  expect_only_errors([&] { config.rate(table, key); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (shoal::fuzz::hits_toml_unicode_bug(shoal::fuzz::text(data, size))) return -1;  // not ours
  const std::string path = shoal::fuzz::write_input(data, size, "config.toml");
  const std::string_view text = shoal::fuzz::text(data, size);
  expect_only_errors([&] {
    shoal::config::ConfigFile config(path, shoal::fuzz::leading_overrides(text));
    // The keys to ask for, from the document itself. Table names with '[' are
    // not ones a reader asks for ("name[i]" means an array element).
    toml::table root;
    try {
      root = toml::parse(text);
    } catch (const toml::parse_error&) {
      return;
    }
    for (const auto& [name, node] : root) {
      const std::string table(name.str());
      if (table.find('[') != std::string::npos) continue;
      if (const toml::table* t = node.as_table()) {
        for (const auto& [key, value] : *t) read_all(config, table, key.str());
        expect_only_errors([&] { config.entries(table); });
        expect_only_errors([&] { config.reject_unknown(table); });
      } else if (node.is_array_of_tables()) {
        std::size_t entries = 0;
        expect_only_errors([&] { entries = config.entries(table); });
        for (std::size_t i = 0; i < entries; ++i) {
          const toml::table* element = node.as_array()->get(i)->as_table();
          for (const auto& [key, value] : *element) {
            read_all(config, table + "[" + std::to_string(i) + "]", key.str());
          }
        }
      } else {
        read_all(config, table, "x");  // a table name holding a value
      }
    }
    config.reject_unknown();
  });
  return 0;
}
