// A layering probe (tests/layering/CMakeLists.txt): bench/ does not use the command line; this must fail to compile.
#include "cli/cli.h"
