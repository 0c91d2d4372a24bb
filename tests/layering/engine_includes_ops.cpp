// A layering probe (tests/layering/CMakeLists.txt): the engine may not include ops/; this must fail to compile.
#include "ops/ops.h"
