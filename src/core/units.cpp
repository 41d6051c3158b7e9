#include "shoal/core/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include "shoal/core/error.hpp"

namespace shoal {
namespace {

using Wide = __int128;

struct UnitEntry {
  std::string_view name;
  std::int64_t multiplier;  // base units per one of this unit
};

constexpr std::array kTimeUnits{
    UnitEntry{"ps", 1},
    UnitEntry{"ns", kNanosecond},
    UnitEntry{"us", kMicrosecond},
    UnitEntry{"\xC2\xB5s", kMicrosecond},
    UnitEntry{"ms", kMillisecond},
    UnitEntry{"s", kSecond},
};

constexpr std::int64_t kKi = 1024;
constexpr std::array kByteUnits{
    UnitEntry{"B", 1},
    UnitEntry{"kB", 1'000},
    UnitEntry{"KB", 1'000},
    UnitEntry{"MB", 1'000'000},
    UnitEntry{"GB", 1'000'000'000},
    UnitEntry{"TB", 1'000'000'000'000},
    UnitEntry{"KiB", kKi},
    UnitEntry{"MiB", kKi* kKi},
    UnitEntry{"GiB", kKi* kKi* kKi},
    UnitEntry{"TiB", kKi* kKi* kKi* kKi},
};

constexpr std::array kRateUnits{
    UnitEntry{"bps", 1},
    UnitEntry{"b/s", 1},
    UnitEntry{"Kbps", 1'000},
    UnitEntry{"kbps", 1'000},
    UnitEntry{"Kb/s", 1'000},
    UnitEntry{"Mbps", 1'000'000},
    UnitEntry{"Mb/s", 1'000'000},
    UnitEntry{"Gbps", 1'000'000'000},
    UnitEntry{"Gb/s", 1'000'000'000},
    UnitEntry{"Tbps", 1'000'000'000'000},
    UnitEntry{"Tb/s", 1'000'000'000'000},
    UnitEntry{"B/s", 8},
    UnitEntry{"KB/s", 8'000},
    UnitEntry{"kB/s", 8'000},
    UnitEntry{"MB/s", 8'000'000},
    UnitEntry{"GB/s", 8'000'000'000},
    UnitEntry{"TB/s", 8'000'000'000'000},
};

std::string quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  out.append(s);
  out.push_back('"');
  return out;
}

template <std::size_t N>
std::string unit_list(const std::array<UnitEntry, N>& units) {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ", ";
    out += u.name;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A non-negative decimal number: value = mantissa * 10^exponent, exact unless
/// `inexact` (a non-zero digit past the ~30 significant digits it can hold).
struct Decimal {
  Wide mantissa = 0;
  int exponent = 0;
  bool inexact = false;
};

/// Reads "123", "2.5", "1e3", "1.5e-2" from the front of `s`; leaves the rest in `s`.
std::optional<Decimal> read_decimal(std::string_view& s) {
  Decimal d;
  std::size_t i = 0;
  bool any_digit = false;
  constexpr Wide kMantissaLimit = static_cast<Wide>(1) << 100;
  // Zeros after the point are held back until a non-zero digit follows, so
  // "0.500000000000000000000" stays 5 * 10^-1 however many zeros it carries.
  int pending_zeros = 0;
  auto take_digits = [&](bool after_point) {
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      any_digit = true;
      const int digit = s[i] - '0';
      if (after_point && digit == 0) {
        ++pending_zeros;
      } else if (after_point) {
        for (; pending_zeros > 0 && d.mantissa < kMantissaLimit; --pending_zeros) {
          d.mantissa *= 10;
          --d.exponent;
        }
        if (pending_zeros > 0 || d.mantissa >= kMantissaLimit) {
          d.inexact = true;  // a significant digit too far out to hold
        } else {
          d.mantissa = d.mantissa * 10 + digit;
          --d.exponent;
        }
      } else if (d.mantissa < kMantissaLimit) {
        d.mantissa = d.mantissa * 10 + digit;
      } else {
        ++d.exponent;  // too many digits to hold: keep the magnitude
        if (digit != 0) d.inexact = true;
      }
      ++i;
    }
  };
  take_digits(false);
  if (i < s.size() && s[i] == '.') {
    ++i;
    take_digits(true);
  }
  if (!any_digit) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E') && i + 1 < s.size()) {
    std::size_t j = i + 1;
    bool negative = false;
    if (s[j] == '+' || s[j] == '-') negative = s[j++] == '-';
    if (j < s.size() && s[j] >= '0' && s[j] <= '9') {
      int e = 0;
      while (j < s.size() && s[j] >= '0' && s[j] <= '9') {
        if (e < 10000) e = e * 10 + (s[j] - '0');
        ++j;
      }
      d.exponent += negative ? -e : e;
      i = j;
    }
  }
  s.remove_prefix(i);
  return d;
}

template <std::size_t N>
std::int64_t parse_quantity(std::string_view text, std::string_view what,
                            const std::array<UnitEntry, N>& units) {
  const std::string_view original = trim(text);
  std::string_view rest = original;
  if (!rest.empty() && rest.front() == '-') {
    throw Error("invalid " + std::string(what) + " " + quoted(original) + ": must not be negative");
  }
  if (!rest.empty() && rest.front() == '+') rest.remove_prefix(1);
  const auto number = read_decimal(rest);
  if (!number) {
    throw Error("invalid " + std::string(what) + " " + quoted(original) +
                ": expected a number followed by a unit (" + unit_list(units) + ")");
  }
  const std::string_view unit = trim(rest);
  if (unit.empty()) {
    throw Error("invalid " + std::string(what) + " " + quoted(original) + ": missing unit (" +
                unit_list(units) + ")");
  }
  const UnitEntry* entry = nullptr;
  for (const auto& u : units) {
    if (u.name == unit) entry = &u;
  }
  if (entry == nullptr) {
    throw Error("invalid " + std::string(what) + " " + quoted(original) + ": unknown unit " +
                quoted(unit) + " (use " + unit_list(units) + ")");
  }
  // value = mantissa * multiplier * 10^exponent, exactly, or an error.
  const Wide limit = std::numeric_limits<std::int64_t>::max();
  const std::string too_large =
      "invalid " + std::string(what) + " " + quoted(original) + ": too large";
  const std::string too_fine = "invalid " + std::string(what) + " " + quoted(original) +
                               ": finer than the smallest unit (" +
                               std::string(units.front().name) + ")";
  if (number->mantissa == 0) return 0;
  Wide value = 0;
  // mantissa < 2^101 and multiplier < 2^44: the product can pass 2^127, so check.
  if (__builtin_mul_overflow(number->mantissa, static_cast<Wide>(entry->multiplier), &value)) {
    throw Error(too_large);
  }
  int exponent = number->exponent;
  for (; exponent > 0; --exponent) {
    if (value > limit) throw Error(too_large);
    value *= 10;
  }
  for (; exponent < 0; ++exponent) {
    if (value % 10 != 0) throw Error(value / 10 > limit ? too_large : too_fine);
    value /= 10;
  }
  if (value > limit) throw Error(too_large);
  if (number->inexact) throw Error(too_fine);
  return static_cast<std::int64_t>(value);
}

/// value in the largest unit not above it, written exactly: every significant
/// digit of the quotient ("1.234567 us", "1.5 MiB"), so the text parses back to
/// the same integer. Any unit works: a power of two divides into a finite decimal.
template <std::size_t N>
std::string format_in(std::int64_t value, const std::array<UnitEntry, N>& units,
                      std::string_view zero_unit) {
  if (value == 0) return "0 " + std::string(zero_unit);
  const UnitEntry* best = &units.front();
  for (const auto& u : units) {
    if (value >= u.multiplier && u.multiplier >= best->multiplier) best = &u;
  }
  std::string out = std::to_string(value / best->multiplier);
  Wide rest = value % best->multiplier;
  if (rest != 0) {
    out += '.';
    while (rest != 0) {  // long division; ends within log2(multiplier) digits
      rest *= 10;
      out += static_cast<char>('0' + static_cast<int>(rest / best->multiplier));
      rest %= best->multiplier;
    }
  }
  out += ' ';
  out += best->name;
  return out;
}

}  // namespace

Time parse_time(std::string_view text) { return parse_quantity(text, "duration", kTimeUnits); }

Bytes parse_bytes(std::string_view text) { return parse_quantity(text, "size", kByteUnits); }

BitsPerSecond parse_rate(std::string_view text) {
  const auto rate = parse_quantity(text, "rate", kRateUnits);
  if (rate == 0) throw Error("invalid rate " + quoted(trim(text)) + ": must be greater than zero");
  return rate;
}

std::string format_time(Time t) {
  if (t == kTimeInfinity) return "never";
  if (t < 0) return std::string(1, '-').append(format_time(-t));
  constexpr std::array kShown{UnitEntry{"ps", 1}, UnitEntry{"ns", kNanosecond},
                              UnitEntry{"us", kMicrosecond}, UnitEntry{"ms", kMillisecond},
                              UnitEntry{"s", kSecond}};
  return format_in(t, kShown, "s");
}

std::string format_bytes(Bytes b) {
  if (b < 0) return std::string(1, '-').append(format_bytes(-b));
  // Binary units when the size is a whole number of them (32 MiB), else decimal.
  constexpr std::array kBinary{UnitEntry{"B", 1}, UnitEntry{"KiB", kKi},
                               UnitEntry{"MiB", kKi * kKi}, UnitEntry{"GiB", kKi * kKi * kKi},
                               UnitEntry{"TiB", kKi * kKi * kKi * kKi}};
  constexpr std::array kDecimal{UnitEntry{"B", 1}, UnitEntry{"kB", 1'000},
                                UnitEntry{"MB", 1'000'000}, UnitEntry{"GB", 1'000'000'000},
                                UnitEntry{"TB", 1'000'000'000'000}};
  // Both are exact; the shorter reads better: "32 MiB" for 33554432, "32 MB" for
  // 32000000 (not "30.517578125 MiB"), "1.5 KiB" for 1536; binary on a tie.
  std::string binary = format_in(b, kBinary, "B");
  std::string decimal = format_in(b, kDecimal, "B");
  return decimal.size() < binary.size() ? decimal : binary;
}

std::string format_bytes_short(Bytes b) {
  std::string exact = format_bytes(b);
  const std::size_t digits = static_cast<std::size_t>(
      std::count_if(exact.begin(), exact.end(), [](char c) { return c >= '0' && c <= '9'; }));
  return digits <= 4 ? exact : format_bytes_decimal(b);
}

std::string format_bytes_decimal(Bytes b) {
  if (b < 0) return std::string(1, '-').append(format_bytes_decimal(-b));
  constexpr std::array kDecimal{"B", "kB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(b);
  std::size_t unit = 0;
  while (value >= 999.95 && unit + 1 < kDecimal.size()) {
    value /= 1000.0;
    ++unit;
  }
  const int decimals = value >= 100 ? 1 : value >= 10 ? 2 : 3;
  return fmt::format("{:.{}f} {}", value, unit == 0 ? 0 : decimals, kDecimal[unit]);
}

std::string format_rate(BitsPerSecond r) {
  constexpr std::array kShown{UnitEntry{"bps", 1}, UnitEntry{"Kbps", 1'000},
                              UnitEntry{"Mbps", 1'000'000}, UnitEntry{"Gbps", 1'000'000'000},
                              UnitEntry{"Tbps", 1'000'000'000'000}};
  return format_in(r, kShown, "bps");
}

Time transmit_time(Bytes bytes, BitsPerSecond rate) {
  // Cells up to 1 MB fit the product in 64 bits: no 128-bit division per cell.
  if (bytes >= 0 && bytes <= 1'000'000 && rate > 0 && rate <= (Time{1} << 50)) {
    const auto bits_ps = static_cast<std::uint64_t>(bytes) * 8 * kSecond;
    const auto r = static_cast<std::uint64_t>(rate);
    return static_cast<Time>((bits_ps + r - 1) / r);
  }
  const Wide bits_ps = static_cast<Wide>(bytes) * 8 * kSecond;
  const Wide t = (bits_ps + rate - 1) / rate;
  return t > kTimeInfinity ? kTimeInfinity : static_cast<Time>(t);
}

}  // namespace shoal
