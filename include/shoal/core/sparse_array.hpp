// An array by dense id of which a rank uses only some entries, such as the
// ports of the links its nodes send on: the block is mapped zeroed from the
// system and an entry is constructed where it is used, so the pages of
// entries no one constructs are never touched and take no memory. A rank
// uses the ports of the links its own nodes send on, a few of the fabric's.
// An entry that owns memory (a vector's) is destroyed with the array: the
// array then lists those it constructed.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace shoal::core {

template <class T>
class SparseArray {
  static_assert(alignof(T) <= 4096, "the block is page-aligned");
  static constexpr bool kTrivial = std::is_trivially_destructible_v<T>;

 public:
  SparseArray() = default;
  /// Room for `size` entries, none constructed; throws std::bad_alloc.
  explicit SparseArray(std::size_t size) : size_(size) {
    if (size == 0) return;
    void* block =
        ::mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(block);
  }
  SparseArray(const SparseArray&) = delete;
  SparseArray& operator=(const SparseArray&) = delete;
  SparseArray(SparseArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        constructed_(std::exchange(other.constructed_, {})) {}
  SparseArray& operator=(SparseArray&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      constructed_ = std::exchange(other.constructed_, {});
    }
    return *this;
  }
  ~SparseArray() { release(); }

  /// Constructs entry i (value-initialized), once, and returns it; only a
  /// constructed entry may be used.
  T& construct(std::size_t i) {
    if constexpr (!kTrivial) constructed_.push_back(i);
    return *std::construct_at(data_ + i);
  }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  std::size_t size() const { return size_; }

 private:
  std::size_t bytes() const { return size_ * sizeof(T); }
  void release() {
    if constexpr (!kTrivial) {
      for (const std::size_t i : constructed_) std::destroy_at(data_ + i);
      constructed_.clear();
    }
    if (data_ != nullptr) ::munmap(data_, bytes());
    data_ = nullptr;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::vector<std::size_t> constructed_;  // where entries own memory: those to destroy
};

}  // namespace shoal::core
