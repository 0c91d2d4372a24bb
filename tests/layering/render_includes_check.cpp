// A layering probe (tests/layering/CMakeLists.txt): the renderer does not use the checking tools; this must fail to compile.
#include "check/op_table.h"
