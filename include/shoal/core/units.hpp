// Simulated time, data sizes and link rates as exact integers, with the unit
// strings users write in configs ("1us", "2.5ms", "400Gbps", "32MB", "32MiB").
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace shoal {

/// Simulated time in picoseconds. 1 byte at 800 Gb/s is 10 ps; int64 covers 106 days.
using Time = std::int64_t;
/// A data size in bytes.
using Bytes = std::int64_t;
/// A link rate in bits per second.
using BitsPerSecond = std::int64_t;

inline constexpr Time kPicosecond = 1;
inline constexpr Time kNanosecond = 1'000;
inline constexpr Time kMicrosecond = 1'000'000;
inline constexpr Time kMillisecond = 1'000'000'000;
inline constexpr Time kSecond = 1'000'000'000'000;
/// "Never": later than any event; saturating additions stop here.
inline constexpr Time kTimeInfinity = std::numeric_limits<Time>::max();

/// Parses a duration such as "1us", "2.5ms", "0s", "100ns", "3ps" (units ps, ns,
/// us or µs, ms, s; decimal point allowed). The result must be a whole number of
/// picoseconds and fit in int64. Throws shoal::Error with the reason otherwise.
Time parse_time(std::string_view text);

/// Parses a size: B; decimal kB/KB, MB, GB, TB (powers of 1000); binary KiB, MiB,
/// GiB, TiB (powers of 1024). "32MB" = 32,000,000 B; "32MiB" = 33,554,432 B.
Bytes parse_bytes(std::string_view text);

/// Parses a rate: bps, Kbps, Mbps, Gbps, Tbps (also "Gb/s"), or bytes per second
/// B/s, KB/s, MB/s, GB/s, TB/s. Returned in bits per second; must be > 0.
BitsPerSecond parse_rate(std::string_view text);

/// Short human forms: "2.5 ms", "400 Gbps", "32 MiB" (binary when exact, else decimal).
std::string format_time(Time t);
std::string format_bytes(Bytes b);
std::string format_rate(BitsPerSecond r);
/// For tables people read: format_bytes where it has at most 4 significant
/// digits, else rounded to 4 in decimal units ("1.921 GB", not "1.920831744 GB").
std::string format_bytes_short(Bytes b);
/// Rounded to 4 significant digits in decimal units ("97.48 MB"), even where
/// a binary unit is exact: for figures read side by side, such as a memory
/// line's peaks, which a whole number of MiB would put in another unit.
std::string format_bytes_decimal(Bytes b);

/// Time to serialize `bytes` at `rate`, rounded up to a whole picosecond.
Time transmit_time(Bytes bytes, BitsPerSecond rate);

/// a + b, clamped to kTimeInfinity (both non-negative).
constexpr Time saturating_add(Time a, Time b) {
  return a > kTimeInfinity - b ? kTimeInfinity : a + b;
}

}  // namespace shoal
