// Shared by sandbox.cpp and cleanup.cpp: the process groups of the
// running children and the temporary folders, which an interrupt cleans up.
// Held while forking, so that a signal never sees a child not yet registered.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <set>
#include <string>

namespace grading {

std::mutex& registry_mutex();
std::set<pid_t>& running_groups();  // guarded by registry_mutex()

}  // namespace grading
