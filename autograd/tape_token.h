// Inside the engine only: what a Var reads to know whether its tape is alive
// (autograd/var.cpp keeps the pool of tokens, autograd/tape.cpp updates its own).
#pragma once

#include <atomic>
#include <cstdint>

namespace ag {

struct TapeToken {
  std::atomic<std::uint64_t> generation{0};  // the tape's current one; 0 while no tape holds the token
  std::atomic<std::uint64_t> first{0};       // the one its tape was built with
};

// A generation no tape has had yet: one counter for the whole process.
std::uint64_t next_generation();

}  // namespace ag
