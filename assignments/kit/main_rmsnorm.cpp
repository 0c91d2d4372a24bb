// The grader program of the rmsnorm exercise: linked with a student's file (or a reference solution).
#include <iostream>

#include "assignments/kit/exercises.h"

int main() { return kit::print_report(kit::grade_rmsnorm(rmsnorm_backward), std::cout); }
