// The grader program of the softmax exercise: linked with a student's file (or a reference solution).
#include <iostream>

#include "assignments/kit/exercises.h"

int main() { return kit::print_report(kit::grade_softmax(softmax_backward), std::cout); }
