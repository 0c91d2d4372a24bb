// A layering probe (tests/layering/CMakeLists.txt): nn/ and data/ are peers and may not include each other; this must fail to compile.
#include "data/datasets.h"
