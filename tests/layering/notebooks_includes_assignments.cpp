// A layering probe (tests/layering/CMakeLists.txt): the lessons do not use the grader; this must fail to compile.
#include "assignments/kit/grader.h"
