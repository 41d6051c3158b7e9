// Per-entity random streams: xoshiro256** seeded from (run seed, entity id)
// through SplitMix64, so an entity draws the same numbers on any rank.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "shoal/core/units.hpp"

namespace shoal::core {

/// SplitMix64's finalizer: a fast bijective 64-bit mix.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Tables of the exponential ziggurat (256 layers), computed once.
struct ExponentialZiggurat {
  std::array<std::uint32_t, 256> k{};  // acceptance thresholds on the 32-bit draw
  std::array<double, 256> w{};         // draw -> x scale per layer
  std::array<double, 256> f{};         // exp(-x) at each layer edge
  ExponentialZiggurat();
  static const ExponentialZiggurat& get() {
    static const ExponentialZiggurat tables;
    return tables;
  }
};

class Rng {
 public:
  Rng() = default;
  Rng(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t x = mix64(seed) ^ mix64(stream ^ 0xD1B54A32D192ED03ULL);
    for (auto& word : s_) {
      x += 0x9E3779B97F4A7C15ULL;
      word = mix64(x);
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform integer in [0, n), n > 0, without bias (Lemire's method).
  std::uint64_t below(std::uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Standard exponential variate (mean 1): Marsaglia and Tsang's ziggurat, one
  /// 64-bit draw and a table look-up in 99% of calls, no logarithm.
  double standard_exponential();

  /// Exponentially distributed duration with the given mean, truncated to whole ps.
  Time exponential(Time mean) {
    if (mean <= 0) return 0;
    const double x = static_cast<double>(mean) * standard_exponential();
    return x >= 9.0e18 ? Time{9'000'000'000'000'000'000} : static_cast<Time>(x);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4] = {};
};

inline double Rng::standard_exponential() {
  const ExponentialZiggurat& z = ExponentialZiggurat::get();
  for (;;) {
    const std::uint64_t bits = next();
    const auto layer = static_cast<std::size_t>(bits & 0xFF);
    const auto j = static_cast<std::uint32_t>(bits >> 32);
    const double x = j * z.w[layer];
    if (j < z.k[layer]) return x;  // inside the layer's rectangle: the common case
    if (layer == 0) return 7.69711747013104972 - std::log(1.0 - uniform());  // the tail
    if (z.f[layer] + uniform() * (z.f[layer - 1] - z.f[layer]) < std::exp(-x)) return x;
  }
}

}  // namespace shoal::core
