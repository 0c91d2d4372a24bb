#include "assignments/kit/grader.h"

#include <iomanip>
#include <sstream>

#include "autograd/gradcheck.h"
#include "autograd/rng.h"
#include "check/node_check.h"
#include "ops/ops.h"

namespace kit {

namespace {

// d<dy, forward(inputs)>/d inputs[k], by the engine's central differences (eps 1e-6, double).
arma::mat numeric_gradient(const Exercise& ex, const ag::Inputs& inputs, std::size_t k, const arma::mat& dy) {
  return ag::numeric_gradient([&](const ag::Inputs& x) { return arma::accu(ex.forward(x) % dy); }, inputs, k);
}

// Sizes a factor hint may name: the rows and columns of each input.
ag::DiagnoseOptions sizes_of(const Exercise& ex, const ag::Inputs& inputs) {
  ag::DiagnoseOptions o;
  const arma::mat& x = inputs.at(0);
  o.sizes.push_back({"N, the number of rows of " + ex.input_names[0], double(x.n_rows)});
  o.sizes.push_back({"the number of columns of " + ex.input_names[0], double(x.n_cols)});
  return o;
}

void grade_case(const Exercise& ex, const Case& c, unsigned seed, GradeReport& report) {
  const arma::mat y = ex.forward(c.inputs);
  // A random dL/dy: an all-ones dy would hide mistakes (LayerNorm's true dx is then 0).
  const arma::mat dy = random_matrix(y.n_rows, y.n_cols, seed);
  ag::Grads yours;
  std::string threw;
  try {
    yours = ex.backward(c.inputs, y, dy);
    if (yours.size() != c.inputs.size()) threw = "returned the wrong number of gradients";
  } catch (const std::exception& e) {
    threw = std::string("your backward threw: ") + e.what();
  }
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    GradeRow row;
    row.check = c.name;
    row.gradient = "d" + ex.input_names[k];
    if (!threw.empty()) {
      row.diagnosis.kind = ag::Mistake::Unrecognised;
      row.note = threw;
    } else {
      row.diagnosis = ag::diagnose_gradient(yours[k], numeric_gradient(ex, c.inputs, k, dy), sizes_of(ex, c.inputs));
      row.points = row.diagnosis.correct() ? 1 : 0;
    }
    report.rows.push_back(row);
  }
}

// The backward as a custom op inside loss = sum(w * op(tanh(x), ...)), then the per-node check.
void grade_on_tape(const Exercise& ex, GradeReport& report) {
  GradeRow row;
  row.check = "on the tape (per-node check)";
  row.gradient = "all";
  const ag::Function op{ex.name + " (yours)", ex.forward, ex.backward};
  const Case& c = ex.cases.at(0);
  ag::Tape tape;
  std::vector<ag::Var> args;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) args.push_back(tape.leaf(c.inputs[k], ex.input_names[k]));
  args[0] = ag::tanh(args[0]);
  ag::Var y = ag::apply(op, args);
  ag::Var loss = ag::sum(ag::mul(tape.constant(random_matrix(y.rows(), y.cols(), 99)), y));
  (void)loss;
  const ag::NodeCheckReport nodes = ag::check_nodes(tape);
  bool custom_checked = false;
  for (const ag::NodeCheck& n : nodes.nodes) {
    if (n.op == op.name && n.status == ag::NodeStatus::Passed) custom_checked = true;
  }
  if (nodes.first_wrong || !custom_checked) {
    row.diagnosis.kind = ag::Mistake::Unrecognised;
    for (const ag::NodeCheck& n : nodes.nodes) {
      if (!nodes.first_wrong || n.id != *nodes.first_wrong) continue;
      row.note = "first wrong node on the tape: " + std::to_string(n.id) + " '" + n.op + "': " + n.note;
      for (const ag::Diagnosis& d : n.inputs) {
        if (!d.correct()) {
          row.diagnosis = d;  // the first wrong input's kind, for the result column
          break;
        }
      }
    }
  } else {
    row.points = 1;
  }
  report.rows.push_back(row);
}

}  // namespace

arma::mat random_matrix(arma::uword rows, arma::uword cols, unsigned seed, double lo, double hi) {
  ag::Rng rng(seed);
  return rng.uniform(rows, cols, lo, hi);
}

GradeReport grade(const Exercise& ex) {
  GradeReport report;
  report.exercise = ex.name;
  report.title = ex.title;
  unsigned seed = 1000;
  for (const Case& c : ex.cases) grade_case(ex, c, seed++, report);
  grade_on_tape(ex, report);
  return report;
}

int GradeReport::score() const {
  int s = 0;
  for (const GradeRow& r : rows) s += r.points;
  return s;
}

int GradeReport::max_score() const {
  int s = 0;
  for (const GradeRow& r : rows) s += r.max_points;
  return s;
}

int GradeReport::percent() const { return max_score() ? 100 * score() / max_score() : 0; }

bool GradeReport::found(ag::Mistake kind) const {
  for (const GradeRow& r : rows) {
    if (r.diagnosis.kind == kind) return true;
  }
  return false;
}

void GradeReport::print(std::ostream& os) const {
  os << "Grading: " << title << "   (statement: assignments/" << exercise << "/statement.md)\n\n";
  os << std::left << "  " << std::setw(30) << "check" << std::setw(10) << "gradient" << std::setw(26) << "result"
     << "points\n";
  std::string last_hint;
  for (const GradeRow& r : rows) {
    std::string result = ag::mistake_name(r.diagnosis.kind);
    if (r.diagnosis.kind == ag::Mistake::ConstantFactor) result += " " + r.diagnosis.factor_text;
    if (r.diagnosis.kind == ag::Mistake::PartlyCorrect) {
      result += " (" + std::to_string(r.diagnosis.correct_elements) + "/" +
                std::to_string(r.diagnosis.total_elements) + ")";
    }
    os << "  " << std::setw(30) << r.check << std::setw(10) << r.gradient << std::setw(26) << result << r.points
       << "/" << r.max_points << "\n";
    const std::string hint = r.note.empty() ? r.diagnosis.hint : r.note;
    if (r.points < r.max_points && hint != last_hint) {  // a repeated hint is printed once
      os << "      hint: " << hint << "\n";
      last_hint = hint;
    }
  }
  os << "\nscore: " << score() << "/" << max_score() << " (" << percent() << "%)\n";
}

int print_report(const GradeReport& report, std::ostream& os) {
  report.print(os);
  return report.score() == report.max_score() ? 0 : 1;
}

}  // namespace kit
