// A layering probe (tests/layering/CMakeLists.txt): train/ may not include the top layer; this must fail to compile.
#include "cli/cli.h"
