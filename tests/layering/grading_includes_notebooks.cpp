// A layering probe (tests/layering/CMakeLists.txt): the grader does not use the lessons' renderer; this must fail to compile.
#include "notebooks/render.h"
