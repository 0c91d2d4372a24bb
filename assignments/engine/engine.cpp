// exercise: engine
// The tape's reverse walk. Read statement.md in this folder first.
// Grade it with:  autograd grade assignments/engine/engine.cpp
#include "assignments/engine/engine.h"

void walk_backward(std::vector<Node>& nodes) {
  // TODO 1: loop over the nodes from the last to the first (the last one's grad is seeded).
  // TODO 2: for each op, add (+=) its vector-Jacobian product into the grads of its inputs:
  //   Add: dL/da += g, dL/db += g; Mul: dL/da += g % b, dL/db += g % a; Tanh: dL/da += g % (1 - y^2).
  (void)nodes;
}
