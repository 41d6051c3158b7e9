// An array of trivially copyable values whose block is resized with
// std::realloc rather than copied.
//
// A std::vector grows or shrinks by copying into a new block, so for a moment
// it holds both. For the DAG's flows, hundreds of megabytes at 8,192 GPUs,
// that moment would be a rank's peak. A large block (above glibc's mmap
// threshold, which shoal fixes at 128 KiB: core/free_heap.hpp) is remapped
// instead: growing moves its pages, shrinking returns its tail pages, and
// neither copies.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace shoal::core {

template <class T>
class GrowingArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "realloc moves bytes: only for values that are their bytes");

 public:
  using value_type = T;

  GrowingArray() = default;
  GrowingArray(const GrowingArray&) = delete;
  GrowingArray& operator=(const GrowingArray&) = delete;
  GrowingArray(GrowingArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  GrowingArray& operator=(GrowingArray&& other) noexcept {
    if (this != &other) {
      std::free(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }
  ~GrowingArray() { std::free(data_); }

  /// Room for `capacity` values in all (never less than its size); throws
  /// std::bad_alloc.
  void reserve(std::size_t capacity) {
    if (capacity <= capacity_) return;
    resize_block(capacity);
  }
  /// Gives back the room beyond its size.
  void shrink_to_fit() {
    if (size_ == capacity_) return;
    if (size_ == 0) {
      std::free(std::exchange(data_, nullptr));
      capacity_ = 0;
      return;
    }
    resize_block(size_);
  }
  void append(std::span<const T> values) {
    room_for(size_ + values.size());
    if (!values.empty()) std::memcpy(data_ + size_, values.data(), values.size_bytes());
    size_ += values.size();
  }

  void push_back(const T& value) {
    room_for(size_ + 1);
    data_[size_++] = value;
  }
  /// Grows or shrinks to `size` values, new ones zero (all bytes 0).
  void resize(std::size_t size) {
    room_for(size);
    if (size > size_) std::memset(static_cast<void*>(data_ + size_), 0, (size - size_) * sizeof(T));
    size_ = size;
  }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& operator[](std::size_t i) { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T* data() const { return data_; }
  T* data() { return data_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  operator std::span<const T>() const { return {data_, size_}; }

 private:
  /// Room for `size` values, at least doubling when it grows: what append,
  /// push_back and resize share.
  void room_for(std::size_t size) {
    if (size > capacity_) reserve(std::max(size, 2 * capacity_));
  }
  void resize_block(std::size_t capacity) {
    void* block = std::realloc(data_, capacity * sizeof(T));
    if (block == nullptr) throw std::bad_alloc();
    data_ = static_cast<T*>(block);
    capacity_ = capacity;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace shoal::core
