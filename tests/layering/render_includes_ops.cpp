// A layering probe (tests/layering/CMakeLists.txt): the renderer uses the engine's errors only, not ops/; this must fail to compile.
#include "ops/ops.h"
