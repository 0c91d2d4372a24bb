// A layering probe (tests/layering/CMakeLists.txt): data/ and nn/ are peers and may not include each other; this must fail to compile.
#include "nn/module.h"
