// A layering probe (tests/layering/CMakeLists.txt): the grader uses data/ (atomic writes): the control of the top layer, which must compile.
#include "data/atomic_write.h"
