// The explorer's program recorded on a tape: each statement evaluated with the
// op table's ops (check/op_table.h), by the names the table gives them.
//
// A name bound to a literal (x = [3, 1, 5, 7], g = 2) is a leaf: backward
// gives its gradient. A literal inside an expression (y * [1, 2, 3, 4]) is a
// constant. A call names a row: mean(a, dim=1) is the row "mean(dim=1)",
// add_scalar(a, c=2) the row "add_scalar" with its constant c. layernorm,
// rmsnorm and batchnorm are the composed rows (layernorm_composed ...), whose
// gamma and beta may be left out (ones and zeros, constants).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "autograd/tape.h"
#include "page/explorer/lang.h"

namespace explorer {

struct Recorded {
  std::map<std::string, ag::Var> names;     // every name, bound to its latest value
  std::vector<std::string> leaves;          // the names bound to literals, in program order
  std::map<std::size_t, std::string> labels;  // node id -> the names bound to it ("y", "y, z")
  ag::Var output;                           // the last statement's value
  std::string output_name;
};

// Records `program` on `tape`. `given` names are bound first, as constants
// (an exercise's inputs); rebinding one is refused. Errors are ProgramErrors.
Recorded record(const std::vector<Statement>& program, ag::Tape& tape,
                const std::map<std::string, arma::mat>& given = {});

// The names a call may use, sorted: the op table's rows with "(dim=N)" taken
// off, and the aliases; what an unknown op's message picks its nearest from.
const std::vector<std::string>& callable_names();


}  // namespace explorer
