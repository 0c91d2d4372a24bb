// A layering probe (tests/layering/CMakeLists.txt): ops/ may not include the checking tools; this must fail to compile.
#include "check/op_table.h"
