// Unit strings (times, sizes, rates): every parse either throws shoal::Error or
// returns a value that its formatted form parses back to exactly.
#include <cstdio>
#include <cstdlib>

#include "fuzz_common.hpp"
#include "shoal/core/units.hpp"

namespace {

template <class Parse, class Format>
void round_trip(std::string_view text, Parse parse, Format format, const char* what) {
  shoal::fuzz::expect_only_errors([&] {
    const std::int64_t value = parse(text);
    if (value < 0) {
      std::fprintf(stderr, "shoal fuzz: %s parsed to a negative value %lld\n", what,
                   static_cast<long long>(value));
      std::abort();
    }
    if (value == shoal::kTimeInfinity) return;  // formatted "never"
    const std::string shown = format(value);
    const std::int64_t again = parse(shown);
    if (again != value) {
      std::fprintf(stderr, "shoal fuzz: %s %lld formats as \"%s\", which parses to %lld\n", what,
                   static_cast<long long>(value), shown.c_str(), static_cast<long long>(again));
      std::abort();
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = shoal::fuzz::text(data, size);
  round_trip(text, shoal::parse_time, shoal::format_time, "duration");
  round_trip(text, shoal::parse_bytes, shoal::format_bytes, "size");
  round_trip(text, shoal::parse_rate, shoal::format_rate, "rate");
  return 0;
}
