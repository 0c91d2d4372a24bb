// A layering probe (tests/layering/CMakeLists.txt): the tape explorer (page/explorer/) does not use train/; this must fail to compile.
#include "train/trainer.h"
