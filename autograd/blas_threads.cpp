#include "autograd/blas_threads.h"

#include <string>

#include "autograd/error.h"

// The page's WebAssembly build (page/) compiles the engine too: no BLAS threads there.
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <dlfcn.h>
#define AUTOGRAD_HAS_DLSYM 1
#endif

namespace ag {

namespace {
template <class Function>
Function openblas(const char* name) {
#if defined(AUTOGRAD_HAS_DLSYM)
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
#else
  (void)name;
  return nullptr;
#endif
}
}  // namespace

bool set_blas_threads(int n) {
  if (n < 1) throw Error("set_blas_threads: need at least 1 thread, got " + std::to_string(n));
  using Set = void (*)(int);
  const Set set = openblas<Set>("openblas_set_num_threads");
  if (set == nullptr) return false;
  set(n);
  return true;
}

int blas_threads() {
  using Get = int (*)();
  const Get get = openblas<Get>("openblas_get_num_threads");
  return get == nullptr ? 0 : get();
}

}  // namespace ag
