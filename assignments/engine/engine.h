// Exercise: the tape's reverse walk (statement.md in this folder).
#pragma once

#include <armadillo>

#include <vector>

enum class OpKind { Leaf, Add, Mul, Tanh };  // Add and Mul are element-wise, Tanh has no second input

// One node of a tape, as the engine (autograd/tape.h) records it: the op, the
// indices of its inputs (earlier nodes; -1 when unused), the value it computed.
struct Node {
  OpKind op = OpKind::Leaf;
  int a = -1, b = -1;
  arma::mat value;
  arma::mat grad;  // dL/dvalue: zeros of value's size, except the last node's (dL/dy, seeded for you)
};

// nodes are in execution order (every input comes before its user). Fill every
// node's grad: walk the nodes backwards, each adding (+=) its vector-Jacobian
// product into its inputs' grads.
void walk_backward(std::vector<Node>& nodes);
