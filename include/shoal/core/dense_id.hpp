// Dense ids of one kind of thing (a flow, a task): each is an index into the
// flat arrays kept for that kind, and a function that takes one kind cannot be
// handed another by mistake, since an id is made from a number only explicitly.
#pragma once

#include <compare>
#include <cstdint>

namespace shoal::core {

template <class Tag>
class DenseId {
 public:
  constexpr DenseId() = default;
  constexpr explicit DenseId(std::uint32_t value) : value_(value) {}
  /// An id indexes its kind's arrays as it is.
  constexpr operator std::uint32_t() const { return value_; }
  constexpr DenseId& operator++() {
    ++value_;
    return *this;
  }
  friend constexpr bool operator==(DenseId, DenseId) = default;
  friend constexpr auto operator<=>(DenseId, DenseId) = default;

 private:
  std::uint32_t value_ = 0;
};

}  // namespace shoal::core
