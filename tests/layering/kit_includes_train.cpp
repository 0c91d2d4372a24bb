// A layering probe (tests/layering/CMakeLists.txt): the grading kit does not use train/; this must fail to compile.
#include "train/trainer.h"
