// A layering probe (tests/layering/CMakeLists.txt): bench/ does not use the grader; this must fail to compile.
#include "assignments/kit/grader.h"
