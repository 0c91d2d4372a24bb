// Reference solution: Stan's reverse loop; every node adds (+=) its vector-Jacobian product into its inputs.
#include "assignments/engine/engine.h"

void walk_backward(std::vector<Node>& nodes) {
  for (std::size_t k = nodes.size(); k-- > 0;) {
    const Node& n = nodes[k];
    const arma::mat g = n.grad;  // a copy: y = f f adds into f itself
    switch (n.op) {
      case OpKind::Leaf: break;
      case OpKind::Add:
        nodes[n.a].grad += g;
        nodes[n.b].grad += g;
        break;
      case OpKind::Mul: {
        const arma::mat va = nodes[n.a].value, vb = nodes[n.b].value;
        nodes[n.a].grad += g % vb;
        nodes[n.b].grad += g % va;
        break;
      }
      case OpKind::Tanh: nodes[n.a].grad += g % (1 - arma::square(n.value)); break;
    }
  }
}
