// A FIFO on one growable array: push at the back, pop at the front, no
// allocation once it has grown to its working size. The capacity is a power
// of two, so wrapping is a mask, not a division.
#pragma once

#include <cstddef>
#include <vector>

namespace shoal::net {

template <class T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }

  void push(const T& value) {
    if (size_ == items_.size()) grow();
    items_[(head_ + size_) & (items_.size() - 1)] = value;
    ++size_;
  }

  /// The back item moves `places` places towards the front (the ones it
  /// passes move back by one); places < size().
  void move_back_forward(std::size_t places) {
    const std::size_t mask = items_.size() - 1;
    for (std::size_t i = size_ - 1; i + places >= size_ && i > 0; --i) {
      std::swap(items_[(head_ + i) & mask], items_[(head_ + i - 1) & mask]);
    }
  }

  void pop() {
    head_ = (head_ + 1) & (items_.size() - 1);
    --size_;
  }

 private:
  void grow() {
    std::vector<T> bigger(items_.empty() ? 8 : items_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = items_[(head_ + i) & (items_.size() - 1)];
    items_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> items_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace shoal::net
