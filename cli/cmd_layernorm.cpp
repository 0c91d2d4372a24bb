// autograd layernorm: the seeds' walk-through on any input, then the backward
// three ways (composed tape, fused node, finite differences) and the two tapes.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "autograd/rng.h"
#include "cli/cli.h"
#include "data/csv.h"
#include "data/atomic_write.h"
#include "ops/layernorm.h"
#include "check/norm_compare.h"
#include "check/norm_second_order.h"
#include "cli/layernorm_report.h"

namespace cli {

namespace {

using namespace norm_report;

const char* kCsvLayout =
    "--output-file CSV layout (long format, one value per line, indices 1-based):\n"
    "  quantity,path,row,column,value\n"
    "  quantity: y, dx, dgamma or dbeta (no dbeta with --rms); dgamma and dbeta have row 1\n"
    "  path:     composed (tape of primitives), fused (one node) or numeric (finite differences)\n"
    "  e.g.      dx,fused,2,3,-0.1234\n";

struct Settings {
  std::string input, input_file, gamma, beta, grad_output, grad_output_file, output_file;
  bool header = false, rms = false;
  double eps = 1e-5;
  long long precision = 4, seed = 0, rows = 10;
  int order = 1;  // 2: also the Hessian-vector products
};

// A matrix from a literal or a CSV file; exactly one of the two may be given.
arma::mat load(const std::string& text, const std::string& file, bool header, const char* text_opt,
               const char* file_opt) {
  if (!text.empty() && !file.empty()) {
    throw UsageError(std::string("give --") + text_opt + " or --" + file_opt + ", not both");
  }
  if (!file.empty()) return ag::read_csv(file, header).values;
  return ag::parse_matrix(text, std::string("--") + text_opt);
}

// A 1 x D parameter from a literal: one value repeated, or D values.
arma::mat parameter(const std::string& text, const char* option, arma::uword cols, double fill) {
  if (text.empty()) return arma::mat(1, cols, arma::fill::value(fill));
  const arma::mat m = ag::parse_matrix(text, std::string("--") + option);
  if (m.n_elem == 1) return arma::mat(1, cols, arma::fill::value(m(0)));
  if (m.n_rows != 1 || m.n_cols != cols) {
    throw UsageError(std::string("--") + option + " has " + std::to_string(m.n_elem) + " values (" +
                     ag::shape_str(m) + ") but the input has " + std::to_string(cols) +
                     " columns: give 1 value or " + std::to_string(cols));
  }
  return m;
}

// The forward squares (x - mean) and the backward multiplies dy, gamma and
// x-hat and sums them: with every value within 1e100 none of that can reach
// inf, where the walk-through would print NaN.
constexpr double kMaxMagnitude = 1e100;

void require_representable(const arma::mat& m, const std::string& option) {
  const arma::uword i = arma::abs(m).index_max();
  if (m.n_elem == 0 || std::abs(m(i)) <= kMaxMagnitude) return;
  throw UsageError("--" + option + ": the value " + num(m(i), 3) + " (row " + std::to_string(i % m.n_rows + 1) +
                   ", column " + std::to_string(i / m.n_rows + 1) +
                   ") is too large: the norm squares its input, so values must stay within +-1e100");
}

ag::NormInputs read_inputs(const Settings& s, bool& random_dy) {
  if (s.input.empty() && s.input_file.empty()) throw UsageError("give the input with --input or --input-file");
  ag::NormInputs in;
  in.x = load(s.input, s.input_file, s.header, "input", "input-file");
  in.rms = s.rms;
  in.eps = require_positive("eps", s.eps);
  if (!s.rms && in.x.n_cols < 2) {
    throw UsageError("LayerNorm needs at least 2 values per row (a single value has no spread); the input is " +
                     ag::shape_str(in.x));
  }
  in.gamma = parameter(s.gamma, "gamma", in.x.n_cols, 1.0);
  in.beta = parameter(s.beta, "beta", in.x.n_cols, 0.0);
  require_representable(in.x, "input");
  require_representable(in.gamma, "gamma");
  require_representable(in.beta, "beta");
  random_dy = s.grad_output.empty() && s.grad_output_file.empty();
  if (random_dy) {
    ag::Rng rng(static_cast<std::uint64_t>(s.seed));
    in.dy = rng.uniform(in.x.n_rows, in.x.n_cols, -1.0, 1.0);
  } else {
    in.dy = load(s.grad_output, s.grad_output_file, s.header, "grad-output", "grad-output-file");
    require_representable(in.dy, "grad-output");
    if (arma::size(in.dy) != arma::size(in.x)) {
      throw UsageError("the output gradient is " + ag::shape_str(in.dy) + " but the input is " + ag::shape_str(in.x) +
                       "; they must have the same shape");
    }
  }
  return in;
}

void print_walkthrough(const ag::NormInputs& in, const Settings& s) {
  const int p = static_cast<int>(s.precision);
  ag::Tape tape;
  ag::Var x = tape.leaf(in.x, "x"), gamma = tape.leaf(in.gamma, "gamma"), beta = tape.leaf(in.beta, "beta");
  const ag::NormSteps steps = in.rms ? ag::rmsnorm_composed_steps(x, gamma, in.eps)
                                     : ag::layernorm_composed_steps(x, gamma, beta, in.eps);
  const arma::uword shown = std::min<arma::uword>(in.x.n_rows, static_cast<arma::uword>(s.rows));
  for (arma::uword r = 0; r < shown; ++r) {
    std::cout << "row " << r + 1 << ": x = " << row_str(in.x, r, p) << "\n";
    for (const auto& [label, v] : steps.steps) {
      std::cout << "  " << std::left << std::setw(32) << label << "= " << row_str(v.value(), r, p) << "\n";
    }
  }
  if (shown < in.x.n_rows) {
    std::cout << "(the first " << shown << " of " << in.x.n_rows << " rows; --rows N shows more)\n";
  }
  // The check: normalised rows have mean 0 and biased std 1 (RMSNorm: mean square 1).
  const arma::mat& xhat = steps.xhat.value();
  std::cout << "\ncheck: each normalised row has " << (in.rms ? "mean square 1" : "mean 0 and (biased) std 1")
            << " (eps pulls it a little below 1)\n";
  for (arma::uword r = 0; r < in.x.n_rows && r < shown; ++r) {
    const arma::rowvec row = xhat.row(r);
    const double m = arma::mean(row), sd = std::sqrt(arma::mean(arma::square(row - (in.rms ? 0.0 : m))));
    const double spread = in.rms ? arma::mean(arma::square(in.x.row(r))) : arma::var(in.x.row(r), 1);
    std::cout << "  row " << r + 1 << ": " << (in.rms ? "" : "mean " + num(m, p) + ", ") << (in.rms ? "rms " : "std ")
              << num(sd, p);
    if (spread == 0) std::cout << "   (a constant row: nothing to normalise, y = beta)";
    std::cout << "\n";
  }
}

bool second_order_agrees(const ag::NormHvp& h) {
  const std::string pair = h.disagreement();
  if (!pair.empty()) std::cerr << "autograd layernorm: the second-order check fails: " << pair << "\n";
  return pair.empty();
}

const char* kFootnote =
    "\nnote: no --grad-output was given, so dy is random (uniform in [-1, 1], --seed %SEED%).\n"
    "  With gamma = 1, beta = 0 and dy all ones, L = sum(y) = sum of each normalised row = 0\n"
    "  whatever x is, so the true dx is exactly zero: a backward that forgets terms, or returns\n"
    "  zeros, would match it. A random dy exercises every term of the gradient.\n";

void add_layernorm_options(po::options_description& options, Settings& s) {
  options.add_options()
      ("input", po::value(&s.input), "the input matrix: numbers separated by commas or spaces, rows by ';' (\"1.133,-0.299,0.503; -0.176 0.911 0.143\")")
      ("input-file", po::value(&s.input_file), "the input matrix from a CSV file (one row per line)")
      ("header", po::bool_switch(&s.header), "the CSV files have a header row")
      ("gamma", po::value(&s.gamma), "scale: one value for all columns or one per column (default 1)")
      ("beta", po::value(&s.beta), "shift: one value or one per column (default 0)")
      ("eps", po::value(&s.eps)->default_value(1e-5, "1e-5"), "added to the variance inside the square root")
      ("grad-output", po::value(&s.grad_output), "dL/dy, shaped like the input (default: random, see --seed)")
      ("grad-output-file", po::value(&s.grad_output_file), "dL/dy from a CSV file")
      ("seed", po::value(&s.seed)->default_value(0), "seed of the random dL/dy")
      ("rms", po::bool_switch(&s.rms), "RMSNorm instead: y = x / sqrt(mean(x^2) + eps) * gamma")
      ("precision", po::value(&s.precision)->default_value(4), "significant digits printed")
      ("rows", po::value(&s.rows)->default_value(10), "rows shown in the walk-through")
      ("output-file", po::value(&s.output_file), "write y, dx, dgamma, dbeta as CSV (layout below)")
      ("order", po::value(&s.order)->default_value(1),
       "2: also the Hessian-vector product of L along a random direction, composed vs fused "
       "(reverse-over-forward) vs finite differences of the gradient");
}

void check_settings(const Settings& s) {
  require_positive("precision", s.precision);
  require_positive("rows", s.rows);
  require_non_negative("seed", s.seed);
  if (s.order != 1 && s.order != 2) throw UsageError("--order must be 1 or 2, got " + std::to_string(s.order));
  if (s.precision > 17) throw UsageError("--precision must be 17 or less, got " + std::to_string(s.precision));
}

// Everything the command prints, computed first.
struct Results {
  ag::NormInputs in;
  bool random_dy = false;
  ag::NormComparison comparison;
  ag::NormHvp second;  // --order 2
};

Results compute(const Settings& s) {
  Results r;
  r.in = read_inputs(s, r.random_dy);
  r.comparison = ag::compare_norm(r.in, r.in.x.n_elem * r.in.x.n_cols <= 2000000);
  if (s.order == 2) r.second = ag::compare_norm_hvp(r.in, static_cast<std::uint64_t>(s.seed));
  return r;
}

void print_results(const Results& r, const Settings& s) {
  const ag::NormInputs& in = r.in;
  const int p = static_cast<int>(s.precision);
  std::cout << (s.rms ? "RMSNorm" : "LayerNorm") << " of a " << ag::shape_str(in.x) << " input, one row (token) at a time; eps = "
            << num(in.eps, 3) << "\ngamma = " << row_str(in.gamma, 0, p)
            << (s.rms ? "" : "\nbeta  = " + row_str(in.beta, 0, p)) << "\n\n";
  print_walkthrough(in, s);
  std::cout << "\ndy" << (r.random_dy ? " (random, see the note at the end)" : "") << " =\n" << matrix_str(in.dy, p, "  ");
  print_comparison(r.comparison, in.rms, p);
  print_tapes(r.comparison, in.rms);
  if (s.order == 2) print_second_order(r.second, in.rms);
  if (!s.output_file.empty()) std::cout << "\nwrote " << s.output_file << "\n";
  if (r.random_dy) {
    std::string note = kFootnote;
    note.replace(note.find("%SEED%"), 6, std::to_string(s.seed));
    std::cout << note;
  }
}

// 1 when two ways disagree: relative 1e-6, unless both sides are rounding noise
// around a true zero, plus what finite differences cannot resolve at this scale (NormDiff).
int exit_status(const Results& r, const Settings& s) {
  for (const ag::NormDiff& d : r.comparison.diffs) {
    if (!d.agrees) {
      std::cerr << "autograd layernorm: " << d.quantity << " from " << d.a << " and " << d.b
                << " disagree (max abs " << num(d.max_abs, 3) << ", max rel " << num(d.max_rel, 3) << ")\n";
      return 1;
    }
  }
  return s.order == 2 && !second_order_agrees(r.second) ? 1 : 0;
}

}  // namespace

int cmd_layernorm(const std::vector<std::string>& args) {
  po::options_description options("options");
  Settings s;
  add_layernorm_options(options, s);
  po::variables_map vm;
  if (!parse_options("layernorm",
                     "LayerNorm (or RMSNorm) step by step on your input, its backward three ways\n"
                     "(composed tape, fused node, finite differences) and the two tapes.\n\n" +
                         std::string(kCsvLayout),
                     options, args, vm)) {
    return 0;
  }
  check_settings(s);
  // Everything is computed, and the output file written, before anything is
  // printed: a refused --output-file leaves one line on stderr and nothing else.
  const Results r = compute(s);
  if (!s.output_file.empty()) ag::write_file_atomic(s.output_file, output_csv(r.comparison, r.in.rms));
  print_results(r, s);
  return exit_status(r, s);
}

}  // namespace cli
