// The grader program of the matmul_bias exercise: linked with a student's file (or a reference solution).
#include <iostream>

#include "assignments/kit/exercises.h"

int main() { return kit::print_report(kit::grade_matmul_bias(linear_backward), std::cout); }
