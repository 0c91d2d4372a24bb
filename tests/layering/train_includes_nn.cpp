// A layering probe (tests/layering/CMakeLists.txt): train/ may include nn/ (a layer below): the control, which must compile.
#include "nn/module.h"
