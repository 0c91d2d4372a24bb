// autograd demo: a tiny expression, its tape, and the gradients it gives.
#include <iostream>

#include "check/listing.h"
#include "cli/cli.h"
#include "ops/ops.h"

namespace cli {

int cmd_demo(const std::vector<std::string>& args) {
  po::options_description options("options");
  po::variables_map vm;
  if (!parse_options("demo", "Records y = sum(tanh(x W + b)) on a tape and back-propagates.", options, args, vm)) {
    return 0;
  }
  ag::Tape tape;
  ag::Var x = tape.leaf({{1.0, -2.0}}, "x");                // 1x2
  ag::Var W = tape.leaf({{0.5, -1.0}, {0.25, 2.0}}, "W");   // 2x2
  ag::Var b = tape.leaf({{0.1, -0.1}}, "b");                // 1x2
  ag::Var y = ag::sum(ag::tanh(ag::matmul(x, W) + b));       // 1x1
  std::cout << "y = sum(tanh(x W + b)) = " << y.value()(0) << "\n\n"
            << "the tape (a Wengert list, in the order the ops ran):\n" << ag::format_tape(tape) << "\n";
  tape.backward(y);  // frees what each node saved, unless retain_graph
  std::cout << "dy/dx =\n" << ag::format_matrix(x.grad())
            << "dy/dW =\n" << ag::format_matrix(W.grad())
            << "dy/db =\n" << ag::format_matrix(b.grad());
  return 0;
}

}  // namespace cli
