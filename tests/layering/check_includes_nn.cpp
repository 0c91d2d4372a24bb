// A layering probe (tests/layering/CMakeLists.txt): the checking tools may not include nn/; this must fail to compile.
#include "nn/module.h"
