// The explorer's answer for one program: every node of its tape with its
// value, its gradient and the op's declared formulas; the backward walk, each
// step the product its node adds into each input's gradient; and, when a
// direction is picked, forward mode's tangents and the Hessian-vector product.
//
// The page asks with its URL hash (explore(), the one function the
// WebAssembly module exports):
//   program=x%20%3D%20...           a program (URL-encoded; lang.h)
//   program=...&direction=x          also forward mode: x moves along v = 1, 2, 3, ...
//                                    (row by row), every
//                                    node's tangent, and H v for every leaf
//   program=...&direction=x&v=1,0,0  the same along a typed v (the CLI's number
//                                    grammar; rows by ';'; x's shape)
//   exercise=layernorm_dx&answer=...  an exercise checked (exercise.h)
// and gets JSON back: {"error": "..."} naming the first problem, or the report.
#pragma once

#include <armadillo>

#include <string>
#include <vector>

namespace explorer {

constexpr arma::uword kShownNumbers = 4096;  // a larger matrix is sent as its shape only

struct NodeReport {
  std::size_t id = 0;
  std::string op, label, kind;  // kind: "leaf", "constant" or "op"
  std::string attributes;       // "eps=1e-05"
  std::vector<std::size_t> inputs;
  std::string forward, backward, tangent_rule;  // the op's declared formulas (OpDef)
  arma::mat value, grad;        // grad empty: no gradient reaches it
  arma::mat tangent, hvp;       // forward mode; hvp on leaves only
};

struct BackwardPart {
  std::size_t input = 0;
  arma::mat contribution;  // what this node's backward adds into the input's gradient
  arma::mat total;         // the input's gradient after adding it
};

struct BackwardStep {
  std::size_t node = 0;
  std::vector<BackwardPart> parts;
};

struct Exploration {
  std::vector<NodeReport> nodes;      // the forward walk: in the order they ran
  std::vector<BackwardStep> backward; // the backward walk: output first
  std::size_t output = 0;
  std::string output_name, note, direction;
  arma::mat v;                        // the direction's vector, when there is a direction
  const NodeReport* labelled(const std::string& name) const;  // the node bound to `name` last, or null
  std::string json() const;
};

// Throws ProgramError (lang.h) for a bad program.
// `v`: the direction's numbers as typed; empty means 1, 2, 3, ... row by row.
Exploration explore_program(const std::string& program, const std::string& direction = "", const std::string& v = "");

// The JSON answer to a URL hash (above); never throws.
std::string explore(const std::string& hash);

}  // namespace explorer
