// Issue 37: but for the norms and softmax, the exercises named no mistake: a missing 1/N, a
// transposed dW, BatchNorm's statistics held constant, an `=` for `+=` in the engine's walk
// all got "wrong everywhere" or a bare constant factor. Each now gets its own label (the
// result column, the CSV's mistakes) and a hint that says what to change (kit/zoo_hints.h).
#define BOOST_TEST_MODULE assignments_mistakes
#include <boost/test/unit_test.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "assignments/kit/grader.h"
// Each mistake, made in one gradient with the others right, gets its label on the first
// case's row of that gradient, on three seeds, and on the tape. Each is written here from its
// description, not taken from the zoo.
namespace {

using Mats = std::vector<arma::mat>;

struct Planted {
  std::string label, gradient, hint;  // the result that gradient's row must show, and a part of its hint
  std::function<arma::mat(const Mats& sent, const Mats& right)> wrong;
  std::string check = "";  // the case where it shows ("": the first)
};

arma::mat softmax_rows(const arma::mat& z) {
  arma::mat e = arma::exp(z.each_col() - arma::max(z, 1));
  return e.each_col() / arma::sum(e, 1);
}

arma::mat onehot(const arma::mat& z) {  // the op table's labels, i mod C
  arma::mat h(arma::size(z), arma::fill::zeros);
  for (arma::uword i = 0; i < z.n_rows; ++i) h(i, i % z.n_cols) = 1;
  return h;
}

// sent: z, dy (1x1).
Mats cross_entropy_right(const Mats& s) { return {s[1](0, 0) * (softmax_rows(s[0]) - onehot(s[0])) / double(s[0].n_rows)}; }

// sent: X, W, dy.
Mats linear_right(const Mats& s) { return {s[2] * s[1].t(), s[0].t() * s[2], arma::sum(s[2], 0)}; }

// sent: x, gamma, dy, eps. BatchNorm's statistics per column.
struct Bn {
  arma::mat xhat, dxhat;
  arma::rowvec rstd;
};
Bn bn(const Mats& s, double divisor_less = 0) {
  const arma::mat centred = s[0].each_row() - arma::mean(s[0], 0);
  const double n = double(s[0].n_rows);
  Bn b;
  b.rstd = 1 / arma::sqrt(arma::sum(arma::square(centred), 0) / (n - divisor_less) + s[3](0, 0));
  b.xhat = centred.each_row() % b.rstd;
  b.dxhat = s[2].each_row() % s[1];
  return b;
}
arma::mat bn_dx(const Bn& b, bool mean_term, bool var_term, int dim = 0) {
  arma::mat t = b.dxhat;
  if (dim == 0) {
    if (mean_term) t.each_row() -= arma::mean(b.dxhat, 0);
    if (var_term) t -= b.xhat.each_row() % arma::mean(b.dxhat % b.xhat, 0);
  } else {
    if (mean_term) t.each_col() -= arma::mean(b.dxhat, 1);
    if (var_term) t -= b.xhat.each_col() % arma::mean(b.dxhat % b.xhat, 1);
  }
  return t.each_row() % b.rstd;
}
Mats batchnorm_right(const Mats& s) {
  const Bn b = bn(s);
  return {bn_dx(b, true, true), arma::sum(s[2] % b.xhat, 0), arma::sum(s[2], 0)};
}

// sent: a, b, dy. The graph c = a b, t = tanh(c), e = t + c, f = e a, y = f f, walked as a
// student would, with the bugs a student makes.
struct Bugs {
  bool equals = false;     // `=` where `+=` belongs, everywhere
  std::function<arma::mat(const arma::mat& c)> local = [](const arma::mat& c) {  // tanh's derivative
    return arma::mat(1 - arma::square(arma::tanh(c)));
  };
  bool forwards = false;   // the nodes walked first to last
  bool y_once = false;     // y = f f gives f one contribution
  bool swapped = false;    // a product's inputs get dout times their own value
  int a_paths = 3;         // 1: only through f, 2: only through c, 3: both
};
Mats engine_walk(const Mats& s, const Bugs& bug) {
  const arma::mat &a = s[0], &b = s[1], &dy = s[2];
  const arma::mat c = a % b, t = arma::tanh(c), e = t + c, f = e % a;
  arma::mat gf = arma::zeros(arma::size(a)), ge = gf, gt = gf, gc = gf, ga = gf, gb = gf;
  if (bug.forwards) return {ga, gb};  // every node passes on its gradient before it has any
  const auto into = [&](arma::mat& g, const arma::mat& v) { g = bug.equals ? v : arma::mat(g + v); };
  const auto mul = [&](arma::mat& gu, arma::mat& gv, const arma::mat& gout, const arma::mat& u, const arma::mat& v) {
    into(gu, gout % (bug.swapped ? u : v));
    into(gv, gout % (bug.swapped ? v : u));
  };
  if (bug.y_once) {
    into(gf, dy % f);
  } else {
    mul(gf, gf, dy, f, f);  // y = f f: both operands are f
  }
  arma::mat ga_f = ga, ga_c = ga;  // a's two paths, kept apart to drop one
  mul(ge, ga_f, gf, e, a);  // f = e a
  into(gt, ge);             // e = t + c
  into(gc, ge);
  into(gc, gt % bug.local(c));  // t = tanh(c)
  mul(ga_c, gb, gc, a, b);  // c = a b
  if (bug.equals) return {ga_c, gb};  // the last write to a wins: c is walked after f
  if (bug.a_paths & 1) ga += ga_f;
  if (bug.a_paths & 2) ga += ga_c;
  return {ga, gb};
}
Mats engine_right(const Mats& s) { return engine_walk(s, Bugs{}); }

struct Exercise {
  std::string name;
  std::function<Mats(const Mats&)> right;
  std::vector<Planted> mistakes;
};

const std::vector<Exercise>& exercises() {
  static const std::vector<Exercise> all = {
      {"log_softmax_ce", cross_entropy_right,
       {{"one-hot missing", "dz", "not subtracted",
         [](const Mats& s, const Mats&) { return arma::mat(s[1](0, 0) * softmax_rows(s[0]) / double(s[0].n_rows)); }},
        {"minus one everywhere", "dz", "every entry",
         [](const Mats& s, const Mats&) { return arma::mat(s[1](0, 0) * (softmax_rows(s[0]) - 1) / double(s[0].n_rows)); }},
        {"softmax down the columns", "dz", "down the columns",
         [](const Mats& s, const Mats&) {
           return arma::mat(s[1](0, 0) * (softmax_rows(s[0].t()).t() - onehot(s[0])) / double(s[0].n_rows));
         }},
        {"dy left out", "dz", "without dy", [](const Mats& s, const Mats& r) { return arma::mat(r[0] / s[1](0, 0)); }},
        {"sum, not mean", "dz", "divide by N",
         [](const Mats& s, const Mats& r) { return arma::mat(r[0] * double(s[0].n_rows)); }},
        {"overflow", "dz", "Subtract each row's largest",
         [](const Mats& s, const Mats&) {
           const arma::mat e = arma::exp(s[0]);  // no max subtracted: the large-logits case overflows
           return arma::mat(s[1](0, 0) * (e.each_col() / arma::sum(e, 1) - onehot(s[0])) / double(s[0].n_rows));
         }}}},
      {"matmul_bias", linear_right,
       {{"W not transposed", "dX", "W^T", [](const Mats& s, const Mats&) { return arma::mat(s[2] * s[1]); },
         "square W 3x3 @ 3x3"},
        {"dW transposed", "dW", "X^T dy", [](const Mats& s, const Mats&) { return arma::mat(s[2].t() * s[0]); },
         "square W 3x3 @ 3x3"},
        {"db averaged", "db", "their sum", [](const Mats& s, const Mats&) { return arma::mat(arma::mean(s[2], 0)); }},
        {"db summed over everything", "db", "one entry per",
         [](const Mats& s, const Mats&) { return arma::mat(1, s[2].n_cols, arma::fill::value(arma::accu(s[2]))); }},
        {"`=` for `+=`", "db", "last row", [](const Mats& s, const Mats&) { return arma::mat(s[2].row(s[2].n_rows - 1)); }},
        {"db from one row", "db", "first row", [](const Mats& s, const Mats&) { return arma::mat(s[2].row(0)); }}}},
      {"batchnorm", batchnorm_right,
       {{"statistics held constant", "dx", "constants", [](const Mats& s, const Mats&) { return bn_dx(bn(s), false, false); }},
        {"missing mean term", "dx", "- mean(dxhat) is missing",
         [](const Mats& s, const Mats&) { return bn_dx(bn(s), false, true); }},
        {"missing variance term", "dx", "orthogonal", [](const Mats& s, const Mats&) { return bn_dx(bn(s), true, false); }},
        {"means across the rows", "dx", "LayerNorm", [](const Mats& s, const Mats&) { return bn_dx(bn(s), true, true, 1); }},
        {"unbiased variance", "dx", "N-1", [](const Mats& s, const Mats&) { return bn_dx(bn(s, 1), true, true); }},
        {"gamma missing", "dx", "gamma = 1",
         [](const Mats& s, const Mats&) {
           Bn b = bn(s);
           b.dxhat = s[2];
           return bn_dx(b, true, true);
         }},
        {"wrong sign, variance term", "dx", "wrong sign",
         [](const Mats& s, const Mats&) {
           const Bn b = bn(s);
           arma::mat t = b.dxhat;
           t.each_row() -= arma::mean(b.dxhat, 0);
           t += b.xhat.each_row() % arma::mean(b.dxhat % b.xhat, 0);
           return arma::mat(t.each_row() % b.rstd);
         }},
        {"rstd missing", "dx", "1 / sqrt(var + eps)",
         [](const Mats& s, const Mats&) {
           Bn b = bn(s);
           b.rstd.ones();  // xhat keeps it; the factor in front goes
           return bn_dx(b, true, true);
         }},
        {"dgamma from x", "dgamma", "uses x", [](const Mats& s, const Mats&) { return arma::mat(arma::sum(s[2] % s[0], 0)); }},
        {"dgamma from x - mean", "dgamma", "without the factor rstd",
         [](const Mats& s, const Mats&) { return arma::mat(arma::sum(s[2] % (s[0].each_row() - arma::mean(s[0], 0)), 0)); }},
        {"unbiased variance", "dgamma", "N-1", [](const Mats& s, const Mats&) { return arma::mat(arma::sum(s[2] % bn(s, 1).xhat, 0)); }},
        {"dgamma averaged", "dgamma", "their sum", [](const Mats& s, const Mats&) { return arma::mat(arma::mean(s[2] % bn(s).xhat, 0)); }},
        {"`=` for `+=`", "dgamma", "last row",
         [](const Mats& s, const Mats&) {
           const arma::uword last = s[0].n_rows - 1;
           return arma::mat(s[2].row(last) % bn(s).xhat.row(last));
         }}}},
  };
  return all;
}

// The engine's mistakes are in its walk; the gradients they change are named.
struct Walked {
  std::string label, hint;
  Bugs bug;
  std::vector<std::string> gradients;
};

Bugs with(const std::function<void(Bugs&)>& set) {
  Bugs b;
  set(b);
  return b;
}

const std::vector<Walked>& engine_mistakes() {
  static const std::vector<Walked> all = {
      {"`=` for `+=`", "both contributions", with([](Bugs& b) { b.equals = true; }), {"da", "db"}},
      {"y = f f counted once", "2 f dy", with([](Bugs& b) { b.y_once = true; }), {"da", "db"}},
      {"a's path through f lost", "only the part through c", with([](Bugs& b) { b.a_paths = 2; }), {"da"}},
      {"a's path through c lost", "only the part through f", with([](Bugs& b) { b.a_paths = 1; }), {"da"}},
      {"tanh derivative", "1 - tanh(c)^2",
       with([](Bugs& b) { b.local = [](const arma::mat& c) { return arma::mat(1 - arma::tanh(c)); }; }), {"da", "db"}},
      {"tanh derivative from c", "1 - c^2",
       with([](Bugs& b) { b.local = [](const arma::mat& c) { return arma::mat(1 - arma::square(c)); }; }), {"da", "db"}},
      {"product rule swapped", "its own value", with([](Bugs& b) { b.swapped = true; }), {"da", "db"}},
      // Walked first to last, every node passes on its gradient before it has any: both are 0,
      // which the generic diagnosis names "zero" (as it does the untouched stub).
      {"zero", "all zeros", with([](Bugs& b) { b.forwards = true; }), {"da", "db"}},
  };
  return all;
}

// The row of `gradient` in the case `check` ("" the first case).
const kit::GradeRow& row_of(const kit::GradeReport& r, const std::string& gradient, const std::string& check) {
  for (const kit::GradeRow& row : r.rows) {
    if (row.gradient == gradient && (check.empty() || row.check == check)) return row;
  }
  throw std::runtime_error("no row for " + gradient + " in " + check);
}

std::size_t index_of(const kit::Exercise& ex, const std::string& gradient) {
  for (std::size_t k = 0; k < ex.spec.inputs.size(); ++k) {
    if ("d" + ex.spec.inputs[k].name == gradient) return k;
  }
  throw std::runtime_error("no input for " + gradient);
}

void expect_named(const kit::GradeReport& r, const std::string& gradient, const std::string& label,
                  const std::string& hint, const std::string& what, const std::string& check = "") {
  BOOST_TEST(r.score() < r.max_score(), what);
  const kit::GradeRow& row = row_of(r, gradient, check);
  BOOST_TEST(row.result == label, what << " got '" << row.result << "' on " << row.check);
  BOOST_TEST(row.diagnosis.hint.find(hint) != std::string::npos, what << ": " << row.diagnosis.hint);
  if (!check.empty()) return;  // a mistake of one case's shape: on the tape's, it is a wrong shape
  const kit::GradeRow& tape = r.rows.back();  // the same backward used on a tape is named the same
  BOOST_TEST(tape.result == label, what << " on the tape got '" << tape.result << "'");
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_mistake_of_the_other_exercises_gets_its_own_label_and_hint) {
  for (const Exercise& e : exercises()) {
    const kit::Exercise ex = kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", e.name);
    for (const Planted& m : e.mistakes) {
      const std::size_t k = index_of(ex, m.gradient);
      for (unsigned seed : {1u, 2u, 3u}) {
        const kit::GradeReport r = kit::grade_in_process(
            ex,
            [&](const Mats& sent) {
              Mats answer = e.right(sent);
              answer[k] = m.wrong(sent, answer);
              return answer;
            },
            seed);
        const std::string what = e.name + ": " + m.label;
        if (m.label == "overflow") {  // only the large-logits case overflows
          bool named = false;
          for (const kit::GradeRow& row : r.rows) named = named || row.result == "overflow";
          BOOST_TEST(named, what);
          continue;
        }
        expect_named(r, m.gradient, m.label, m.hint, what, m.check);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(each_mistake_in_the_engines_walk_gets_its_own_label) {
  const kit::Exercise ex = kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", "engine");
  for (const Walked& m : engine_mistakes()) {
    for (unsigned seed : {1u, 2u, 3u}) {
      const kit::GradeReport r =
          kit::grade_in_process(ex, [&](const Mats& sent) { return engine_walk(sent, m.bug); }, seed);
      for (const std::string& g : m.gradients) expect_named(r, g, m.label, m.hint, "engine: " + m.label);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_right_backwards_are_not_named) {
  for (const Exercise& e : exercises()) {
    const kit::GradeReport r =
        kit::grade_in_process(kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", e.name), e.right, 1);
    BOOST_TEST(r.score() == r.max_score(), e.name);
  }
  const kit::GradeReport r =
      kit::grade_in_process(kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", "engine"), engine_right, 1);
  BOOST_TEST(r.score() == r.max_score());
}
