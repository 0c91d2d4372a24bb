// A vector whose elements never move, so a reference to one stays valid
// while the vector grows: the tape's node store.
//
// Elements live in chunks of 16, 32, 64, ... elements. A chunk is allocated
// once, never reallocated (it is a std::vector reserved to its full size and
// never filled past it) and kept by clear(), so a training loop that records
// the same graph every step reuses the same elements. Element i lives in
// chunk k = floor(log2(i / 16 + 1)), at offset i - 16 (2^k - 1).
//
// clear() and pop_back() call the element's reset(), which empties it for
// reuse (a Node drops its values and closure but keeps its id lists' capacity).
#pragma once

#include <cstddef>
#include <vector>

namespace ag {

template <class T>
class StableVector {
 public:
  // A fresh element at the end: default-constructed, or one that reset() emptied.
  T& emplace_back() {
    if (size_ == constructed_) {
      if (chunks_.empty() || chunks_.back().size() == chunks_.back().capacity()) {
        chunks_.emplace_back();
        chunks_.back().reserve(kFirstChunk << (chunks_.size() - 1));
      }
      chunks_.back().emplace_back();  // within capacity: nothing moves
      ++constructed_;
    }
    return (*this)[size_++];
  }

  void pop_back() { (*this)[--size_].reset(); }

  void clear() {
    for (std::size_t i = 0; i < size_; ++i) (*this)[i].reset();
    size_ = 0;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  T& operator[](std::size_t i) { return chunks_[chunk_of(i)][offset_in_chunk(i)]; }
  const T& operator[](std::size_t i) const { return chunks_[chunk_of(i)][offset_in_chunk(i)]; }

 private:
  static constexpr std::size_t kFirstChunk = 16;

  static std::size_t chunk_of(std::size_t i) {
    // floor(log2(i / 16 + 1)); the argument is never 0.
    return 63 - static_cast<std::size_t>(__builtin_clzll(i / kFirstChunk + 1));
  }
  static std::size_t offset_in_chunk(std::size_t i) {
    return i - kFirstChunk * ((std::size_t{1} << chunk_of(i)) - 1);
  }

  // chunk k holds 16 * 2^k elements. Growing chunks_ moves the chunks' buffer
  // pointers (std::vector's move), never the elements.
  std::vector<std::vector<T>> chunks_;
  std::size_t size_ = 0;                // elements in use
  std::size_t constructed_ = 0;         // elements ever constructed (>= size_)
};

}  // namespace ag
