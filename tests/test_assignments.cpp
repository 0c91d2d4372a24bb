// The assignment kit, graded in this process with trusted code: the reference
// solutions get full marks on fresh seeds, every mistake of the LayerNorm and
// RMSNorm zoos loses marks and gets its own hint, the stub earns nothing for
// what it is given, and the reader of the child's answer refuses every
// malformed frame. (The sandbox, the cheats and class mode: test_cli_grade.cpp.)
#define BOOST_TEST_MODULE assignments
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <functional>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "assignments/engine/engine.h"
#include "assignments/kit/grader.h"

#if __has_include("../assignments/solutions/layernorm.cpp")
#define HAVE_SOLUTIONS 1
#define softmax_backward softmax_backward_ref
#define layernorm_backward layernorm_backward_ref
#define rmsnorm_backward rmsnorm_backward_ref
#define linear_backward linear_backward_ref
#define batchnorm_backward batchnorm_backward_ref
#define log_softmax_ce_backward log_softmax_ce_backward_ref
#define walk_backward walk_backward_ref
#include "../assignments/solutions/batchnorm.cpp"
#include "../assignments/solutions/engine.cpp"
#include "../assignments/solutions/layernorm.cpp"
#include "../assignments/solutions/log_softmax_ce.cpp"
#include "../assignments/solutions/matmul_bias.cpp"
#include "../assignments/solutions/rmsnorm.cpp"
#include "../assignments/solutions/softmax.cpp"
#undef softmax_backward
#undef layernorm_backward
#undef rmsnorm_backward
#undef linear_backward
#undef batchnorm_backward
#undef log_softmax_ce_backward
#undef walk_backward
#endif

namespace {

using Mats = std::vector<arma::mat>;

kit::Exercise exercise(const std::string& name) { return kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", name); }

std::string table(const kit::GradeReport& r) {
  std::ostringstream os;
  r.print(os);
  return os.str();
}

// The labels of the op table's softmax_cross_entropy row, as the adapter passes them: y_i = i mod C.
arma::uvec row_labels(const arma::mat& z) {
  arma::uvec labels(z.n_rows);
  for (arma::uword i = 0; i < z.n_rows; ++i) labels(i) = i % z.n_cols;
  return labels;
}

// The engine exercise's graph as its adapter records it (c = a b, e = tanh(c) + c, f = e a, y = f f),
// walked by `walk`; the leaves' grads are the answer.
Mats on_engine_graph(const Mats& sent, const std::function<void(std::vector<Node>&)>& walk) {  // a, b, dy
  std::vector<Node> n;
  auto push = [&n](OpKind op, int a, int b, const arma::mat& v) {
    n.push_back({op, a, b, v, arma::mat(arma::size(v), arma::fill::zeros)});
  };
  push(OpKind::Leaf, -1, -1, sent[0]);
  push(OpKind::Leaf, -1, -1, sent[1]);
  push(OpKind::Mul, 0, 1, sent[0] % sent[1]);
  push(OpKind::Tanh, 2, -1, arma::tanh(n[2].value));
  push(OpKind::Add, 3, 2, n[3].value + n[2].value);
  push(OpKind::Mul, 4, 0, n[4].value % n[0].value);
  push(OpKind::Mul, 5, 5, n[5].value % n[5].value);
  n[6].grad = sent[2];
  walk(n);
  return {n[0].grad, n[1].grad};
}

// A LayerNorm backward written the way students write it, with one switch per classic mistake.
struct LayerNormAttempt {
  bool no_mean = false, no_variance = false, variance_plus = false, no_gamma = false, unbiased = false;
  bool no_rstd = false, dgamma_from_x = false, dgamma_assigned = false, dbeta_unsummed = false;
  bool dgamma_transposed = false;
  Mats operator()(const Mats& sent) const {  // x, gamma, dy, eps
    const arma::mat &x = sent[0], &gamma = sent[1], &dy = sent[2];
    const double eps = sent[3](0), d = double(x.n_cols);
    const arma::mat centred = x.each_col() - arma::mean(x, 1);
    arma::vec var = arma::mean(arma::square(centred), 1);
    if (unbiased) var *= d / (d - 1);
    const arma::vec rstd = 1.0 / arma::sqrt(var + eps);
    const arma::mat xhat = centred.each_col() % rstd;
    arma::mat dxhat = dy;
    if (!no_gamma) dxhat.each_row() %= gamma;
    arma::mat dx = dxhat;
    if (!no_mean) dx.each_col() -= arma::mean(dxhat, 1);
    const arma::vec proj = arma::mean(dxhat % xhat, 1);
    if (!no_variance) dx -= (variance_plus ? -1.0 : 1.0) * (xhat.each_col() % proj);
    if (!no_rstd) dx.each_col() %= rstd;
    arma::mat dgamma(1, x.n_cols, arma::fill::zeros);
    for (arma::uword i = 0; i < x.n_rows; ++i) {  // the loop where `=` can stand for `+=`
      const arma::mat part = dy.row(i) % (dgamma_from_x ? x.row(i) : xhat.row(i));
      if (dgamma_assigned) dgamma = part;
      else dgamma += part;
    }
    if (dgamma_transposed) dgamma = dgamma.t();
    const arma::mat dbeta = dbeta_unsummed ? dy : arma::mat(arma::sum(dy, 0));
    return {dx, dgamma, dbeta};
  }
};

struct ZooEntry {
  const char* mistake;
  LayerNormAttempt attempt;
  std::string result, hint;  // the result column and a part of the hint it must get
};

// A row that lost points with this result and a hint containing `hint`.
bool named(const kit::GradeReport& r, const std::string& result, const std::string& hint) {
  for (const kit::GradeRow& row : r.rows) {
    const std::string text = row.note.empty() ? row.diagnosis.hint : row.note;
    if (row.points < row.max_points || row.max_points == 0) {
      if (row.result.rfind(result, 0) == 0 && text.find(hint) != std::string::npos) return true;
    }
  }
  return false;
}

LayerNormAttempt with(bool LayerNormAttempt::*flag) {
  LayerNormAttempt a;
  a.*flag = true;
  return a;
}

// The child's answer frame, as kit/child_main.cpp writes it.
std::string answer_frame(const std::vector<Mats>& grads, bool end) {
  std::string s = "autograd-answer 1\n";
  char buf[32];
  for (std::size_t k = 0; k < grads.size(); ++k) {
    s += "case " + std::to_string(k) + " " + std::to_string(grads[k].size()) + "\n";
    for (const arma::mat& m : grads[k]) {
      s += std::to_string(m.n_rows) + " " + std::to_string(m.n_cols) + "\n";
      for (double v : arma::vectorise(m.t()).eval()) {
        std::snprintf(buf, sizeof buf, "%.17g ", v);
        s += buf;
      }
      s += "\n";
    }
  }
  return s + (end ? "end\n" : "");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(specs)

BOOST_AUTO_TEST_CASE(every_exercise_folder_is_found_and_read) {
  const std::vector<std::string> names = kit::exercise_names(AUTOGRAD_SOURCE_DIR "/assignments");
  for (const char* n : {"batchnorm", "engine", "layernorm", "layernorm_jvp", "log_softmax_ce", "matmul_bias", "rmsnorm",
                        "softmax"}) {
    BOOST_TEST((std::find(names.begin(), names.end(), n) != names.end()), n);
  }
  for (const std::string& n : names) {
    const kit::Exercise ex = exercise(n);
    BOOST_TEST(!ex.spec.cases.empty());
    BOOST_TEST(kit::draw_cases(ex, 1).size() == ex.spec.cases.size() + (ex.spec.tape ? 1 : 0));  // + the tape case
  }
}

BOOST_AUTO_TEST_CASE(a_bad_spec_line_is_named) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ag_spec_" + std::to_string(::getpid())) / "broken";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "exercise.spec") << "title = t\nforward = softmax\ninput = x N D -2 2\nsends = y dy\ncase = a | N=0 D=3\n";
  BOOST_CHECK_EXCEPTION(kit::read_spec(dir.string()), ag::Error, [](const ag::Error& e) {
    return std::string(e.what()).find("exercise.spec:5: expected a dimension NAME=SIZE with SIZE in 1..64, got 'N=0'") !=
           std::string::npos;
  });
  std::filesystem::remove_all(dir.parent_path());
}

BOOST_AUTO_TEST_SUITE_END()

#ifdef HAVE_SOLUTIONS
BOOST_AUTO_TEST_SUITE(reference_solutions)

BOOST_AUTO_TEST_CASE(every_reference_solution_gets_full_marks_on_fresh_seeds) {
  const std::vector<std::pair<std::string, kit::Answerer>> solutions = {
      {"softmax", [](const Mats& s) { return Mats{softmax_backward_ref(s[0], s[1])}; }},
      {"layernorm", [](const Mats& s) {
         const LayerNormGrads g = layernorm_backward_ref(s[0], s[1], s[2], s[3](0));
         return Mats{g.dx, g.dgamma, g.dbeta};
       }},
      {"rmsnorm", [](const Mats& s) {
         const RMSNormGrads g = rmsnorm_backward_ref(s[0], s[1], s[2], s[3](0));
         return Mats{g.dx, g.dgamma};
       }},
      {"matmul_bias", [](const Mats& s) {
         const LinearGrads g = linear_backward_ref(s[0], s[1], s[2]);
         return Mats{g.dX, g.dW, g.db};
       }},
      {"batchnorm", [](const Mats& s) {
         const BatchNormGrads g = batchnorm_backward_ref(s[0], s[1], s[2], s[3](0));
         return Mats{g.dx, g.dgamma, g.dbeta};
       }},
      {"engine", [](const Mats& s) { return on_engine_graph(s, walk_backward_ref); }},
      {"log_softmax_ce", [](const Mats& s) {
         return Mats{log_softmax_ce_backward_ref(s[0], row_labels(s[0]), s[1](0))};
       }}};
  for (const auto& [name, answer] : solutions) {
    for (unsigned seed : {1u, 77u, 4242u}) {
      const kit::GradeReport r = kit::grade_in_process(exercise(name), answer, seed);
      BOOST_TEST(r.percent() == 100, table(r));
      BOOST_TEST(r.max_score() >= 5);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
#else
BOOST_AUTO_TEST_CASE(reference_solutions_skipped) {
  BOOST_TEST_MESSAGE("assignments/solutions/ is absent: the reference-solution tests are skipped");
  BOOST_TEST(true);
}
#endif

BOOST_AUTO_TEST_SUITE(layernorm_zoo)

BOOST_AUTO_TEST_CASE(the_correct_attempt_gets_full_marks) {
  const kit::GradeReport r = kit::grade_in_process(exercise("layernorm"), LayerNormAttempt{}, 5);
  BOOST_TEST(r.percent() == 100, table(r));
}

BOOST_AUTO_TEST_CASE(each_mistake_loses_marks_and_gets_its_own_hint) {
  const std::vector<ZooEntry> zoo = {
      {"no mean term", with(&LayerNormAttempt::no_mean), "missing mean term", "rows of dx should sum to zero"},
      {"no variance term", with(&LayerNormAttempt::no_variance), "missing variance term", "orthogonal to xhat"},
      {"variance term added", with(&LayerNormAttempt::variance_plus), "wrong sign, variance term", "wrong sign"},
      {"gamma forgotten in dx", with(&LayerNormAttempt::no_gamma), "gamma missing", "gamma is missing"},
      {"unbiased variance", with(&LayerNormAttempt::unbiased), "unbiased variance", "divided by D-1"},
      {"rstd forgotten", with(&LayerNormAttempt::no_rstd), "rstd missing", "rstd = 1 / sqrt(var + eps)"},
      {"dgamma from x", with(&LayerNormAttempt::dgamma_from_x), "dgamma from x", "normalised xhat"},
      {"= where += belongs", with(&LayerNormAttempt::dgamma_assigned), "`=` for `+=`", "`=` where `+=` belongs"},
      {"dbeta not summed", with(&LayerNormAttempt::dbeta_unsummed), "missing broadcast sum", "down the rows"},
      {"dgamma transposed", with(&LayerNormAttempt::dgamma_transposed), "transposed", "transpose"},
  };
  for (const ZooEntry& z : zoo) {
    for (unsigned seed : {3u, 91u, 20261201u}) {
      const kit::GradeReport r = kit::grade_in_process(exercise("layernorm"), z.attempt, seed);
      BOOST_TEST(r.percent() < 100, z.mistake << ":\n" << table(r));
      BOOST_TEST(named(r, z.result, z.hint), z.mistake << ": expected '" << z.result << "' with the hint '" << z.hint
                                                        << "' in\n" << table(r));
    }
  }
}

BOOST_AUTO_TEST_CASE(the_given_dbeta_earns_nothing_so_the_stub_scores_zero) {
  const kit::GradeReport r = kit::grade_in_process(
      exercise("layernorm"),
      [](const Mats& s) {
        return Mats{arma::zeros(arma::size(s[0])), arma::zeros(arma::size(s[1])), arma::sum(s[2], 0)};
      },
      8);
  BOOST_TEST(r.score() == 0, table(r));
  for (const kit::GradeRow& row : r.rows) {
    if (row.gradient == "dbeta") BOOST_TEST((row.max_points == 0 && row.diagnosis.correct()));
  }
  BOOST_TEST(table(r).find("given (no points)") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(rmsnorm_zoo)

BOOST_AUTO_TEST_CASE(layernorm_habits_in_rmsnorm_are_named) {
  // rrms * (dxhat - [mean(dxhat)] - [xhat * mean(dxhat * xhat)]), without or with the wrong terms.
  auto attempt = [](bool mean_term, bool second_term) {
    return [=](const Mats& s) {
      const arma::vec rrms = 1.0 / arma::sqrt(arma::mean(arma::square(s[0]), 1) + s[3](0));
      const arma::mat xhat = s[0].each_col() % rrms;
      arma::mat dxhat = s[2];
      dxhat.each_row() %= s[1];
      arma::mat dx = dxhat;
      if (mean_term) dx.each_col() -= arma::mean(dxhat, 1);
      if (second_term) dx -= xhat.each_col() % arma::mean(dxhat % xhat, 1);
      return Mats{dx.each_col() % rrms, arma::sum(s[2] % xhat, 0)};
    };
  };
  const kit::GradeReport extra = kit::grade_in_process(exercise("rmsnorm"), attempt(true, true), 4);
  BOOST_TEST(extra.percent() < 100);
  BOOST_TEST(named(extra, "LayerNorm's mean term", "RMSNorm subtracts no mean"), table(extra));
  const kit::GradeReport missing = kit::grade_in_process(exercise("rmsnorm"), attempt(false, false), 4);
  BOOST_TEST(missing.percent() < 100);
  BOOST_TEST(named(missing, "missing second term", "orthogonal to xhat"), table(missing));
  BOOST_TEST(kit::grade_in_process(exercise("rmsnorm"), attempt(false, true), 4).percent() == 100);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cross_entropy_zoo)

// dz = dloss * (softmax(z) - onehot(y)) / N, written with one switch per classic mistake.
struct CrossEntropyAttempt {
  bool sum_not_mean = false, sign_flipped = false, no_softmax = false, unshifted_exp = false;
  bool dloss_ignored = false, label_column_zero = false;
  Mats operator()(const Mats& sent) const {  // z, dy (1x1)
    const arma::mat& z = sent[0];
    const arma::uvec labels = row_labels(z);
    const arma::mat shifted = unshifted_exp ? z : arma::mat(z.each_col() - arma::max(z, 1));
    const arma::mat e = arma::exp(shifted);
    arma::mat dz = no_softmax ? arma::mat(arma::size(z), arma::fill::zeros) : arma::mat(e.each_col() / arma::sum(e, 1));
    for (arma::uword i = 0; i < z.n_rows; ++i) dz(i, label_column_zero ? 0 : labels(i)) -= 1.0;
    if (!sum_not_mean) dz /= double(z.n_rows);
    if (!dloss_ignored) dz *= sent[1](0);
    return {sign_flipped ? arma::mat(-dz) : dz};
  }
};

struct CrossEntropyMistake {
  const char* mistake;
  bool CrossEntropyAttempt::*flag;
  std::string result, hint;
};

BOOST_AUTO_TEST_CASE(the_correct_attempt_gets_full_marks) {
  const kit::GradeReport r = kit::grade_in_process(exercise("log_softmax_ce"), CrossEntropyAttempt{}, 5);
  BOOST_TEST(r.percent() == 100, table(r));
}

BOOST_AUTO_TEST_CASE(each_mistake_loses_marks_and_gets_its_hint) {
  const std::vector<CrossEntropyMistake> zoo = {
      // Named by the exercise's zoo (kit/zoo_hints.h), no longer by the generic diagnosis alone:
      {"1/N missing", &CrossEntropyAttempt::sum_not_mean, "sum, not mean", "divide by N, the number of rows of z"},
      {"sign flipped", &CrossEntropyAttempt::sign_flipped, "wrong sign", "yours = -expected"},
      {"softmax missing (dz = -onehot/N)", &CrossEntropyAttempt::no_softmax, "wrong", "no simple pattern"},
      {"exp without the max shift", &CrossEntropyAttempt::unshifted_exp, "overflow", "Subtract each row's largest z"},
      {"dloss ignored", &CrossEntropyAttempt::dloss_ignored, "dy left out", "without dy"},
      {"onehot at column 0", &CrossEntropyAttempt::label_column_zero, "partly correct", "Correct on"},
  };
  for (const CrossEntropyMistake& z : zoo) {
    CrossEntropyAttempt attempt;
    attempt.*z.flag = true;
    for (unsigned seed : {3u, 91u, 20261201u}) {
      const kit::GradeReport r = kit::grade_in_process(exercise("log_softmax_ce"), attempt, seed);
      BOOST_TEST(r.percent() < 100, z.mistake << ":\n" << table(r));
      BOOST_TEST(named(r, z.result, z.hint), z.mistake << ": expected '" << z.result << "' with the hint '" << z.hint
                                                        << "' in\n" << table(r));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(engine_zoo)

// The reverse walk written the way students write it, with one switch per classic mistake.
struct WalkAttempt {
  bool assigned = false, forwards = false, mul_swapped = false, tanh_of_input = false;
  void operator()(std::vector<Node>& nodes) const {
    const std::size_t count = nodes.size();
    for (std::size_t step = 0; step < count; ++step) {
      Node& n = nodes[forwards ? step : count - 1 - step];
      const arma::mat g = n.grad;
      auto into = [this](arma::mat& grad, const arma::mat& part) { grad = assigned ? part : arma::mat(grad + part); };
      if (n.op == OpKind::Add) {
        into(nodes[n.a].grad, g);
        into(nodes[n.b].grad, g);
      } else if (n.op == OpKind::Mul) {
        const arma::mat va = nodes[n.a].value, vb = nodes[n.b].value;
        into(nodes[n.a].grad, g % (mul_swapped ? va : vb));
        into(nodes[n.b].grad, g % (mul_swapped ? vb : va));
      } else if (n.op == OpKind::Tanh) {
        const arma::mat& t = tanh_of_input ? nodes[n.a].value : n.value;
        into(nodes[n.a].grad, g % (1 - arma::square(t)));
      }
    }
  }
};

BOOST_AUTO_TEST_CASE(the_correct_walk_gets_full_marks_and_each_mistake_loses_marks) {
  auto graded = [](const WalkAttempt& w, unsigned seed) {
    return kit::grade_in_process(exercise("engine"), [w](const Mats& s) { return on_engine_graph(s, w); }, seed);
  };
  BOOST_TEST(graded(WalkAttempt{}, 5).percent() == 100, table(graded(WalkAttempt{}, 5)));
  // Each mistake with the label and a part of the hint the engine's zoo (kit/zoo_hints.h) gives it.
  const std::vector<std::tuple<const char*, bool WalkAttempt::*, const char*, const char*>> zoo = {
      {"= where += belongs", &WalkAttempt::assigned, "`=` for `+=`", "both contributions"},
      {"walked forwards", &WalkAttempt::forwards, "zero", "all zeros"},
      {"Mul's inputs swapped", &WalkAttempt::mul_swapped, "product rule swapped", "its own value"},
      {"tanh' from the input", &WalkAttempt::tanh_of_input, "tanh derivative from c", "1 - c^2"}};
  for (const auto& [mistake, flag, label, hint] : zoo) {
    WalkAttempt w;
    w.*flag = true;
    for (unsigned seed : {3u, 91u}) {
      const kit::GradeReport r = graded(w, seed);
      BOOST_TEST(r.percent() < 100, mistake << ":\n" << table(r));
      BOOST_TEST(r.score() <= 2, mistake << ":\n" << table(r));  // at most the one-element case (da, db), where some coincide
      BOOST_TEST(named(r, label, hint), mistake << ": expected '" << label << "' in\n" << table(r));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(generic_diagnoses)

// Softmax and matmul mistakes are named by check/diagnose.h's kinds: a factor, a sign, a transpose, a missing sum.
BOOST_AUTO_TEST_CASE(softmax_and_matmul_mistakes_get_the_generic_hints) {
  auto softmax = [](double factor) {
    return [factor](const Mats& s) {
      const arma::vec dot = arma::sum(s[1] % s[0], 1);
      return Mats{factor * (s[0] % (s[1].each_col() - dot))};
    };
  };
  const kit::Exercise sm = exercise("softmax");
  for (const auto& [factor, result, hint] : {std::make_tuple(2.0, "constant factor 2", "yours = 2 x expected"),
                                             std::make_tuple(-1.0, "wrong sign", "wrong sign"),
                                             std::make_tuple(0.0, "zero", "all zeros")}) {
    const kit::GradeReport r = kit::grade_in_process(sm, softmax(factor), 6);
    BOOST_TEST(r.percent() < 100);
    BOOST_TEST(named(r, result, hint), table(r));
  }
  auto linear = [](bool transpose_dw, bool sum_db) {
    return [=](const Mats& s) {  // X, W, dY
      const arma::mat dW = transpose_dw ? arma::mat(s[2].t() * s[0]) : arma::mat(s[0].t() * s[2]);
      return Mats{s[2] * s[1].t(), dW, sum_db ? arma::mat(arma::sum(s[2], 0)) : s[2]};
    };
  };
  const kit::Exercise mb = exercise("matmul_bias");
  BOOST_TEST(kit::grade_in_process(mb, linear(false, true), 6).percent() == 100);
  const kit::GradeReport t = kit::grade_in_process(mb, linear(true, true), 6);
  int transposed = 0;
  for (const kit::GradeRow& row : t.rows) transposed += row.diagnosis.kind == ag::Mistake::Transposed;
  BOOST_TEST(transposed >= 3, table(t));  // the square case too, where the shape hides it
  const kit::GradeReport b = kit::grade_in_process(mb, linear(false, false), 6);
  BOOST_TEST(named(b, "missing broadcast sum", "summing yours down the rows"), table(b));
  const kit::GradeReport threw = kit::grade_in_process(sm, [](const Mats& s) -> Mats { return {s[0].col(99)}; }, 6);
  BOOST_TEST(threw.score() == 0);
  BOOST_TEST(named(threw, "threw", "your backward threw"), table(threw));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(answer_frames)

// The parent trusts no byte of the child's answer: each broken frame is named, and nothing past the break scores.
BOOST_AUTO_TEST_CASE(a_malformed_answer_is_refused_where_it_breaks) {
  const kit::Exercise ex = exercise("softmax");
  const std::vector<kit::DrawnCase> cases = kit::draw_cases(ex, 12);
  std::vector<Mats> right;
  for (const kit::DrawnCase& c : cases) {
    const arma::vec s = arma::sum(c.dy % c.y, 1);
    right.push_back({c.y % (c.dy.each_col() - s)});
  }
  const std::string good = answer_frame(right, true);
  const kit::ParsedAnswers ok = kit::parse_answers(good, cases.size(), 1);
  BOOST_TEST(ok.complete);
  BOOST_TEST(kit::score(ex, 12, cases, ok, "").percent() == 100);

  const std::vector<std::pair<std::string, std::string>> broken = {
      {"score: 13/13 (100%)\n" + good, "expected 'autograd-answer', got 'score:'"},
      {good + "score: 13/13 (100%)\n", "more output after the end mark"},
      {"", "no answer at all"},
      {"autograd-answer 1\ncase 1 1\n", "the cases are out of order"},
      {"autograd-answer 1\ncase 0 2\n", "1 gradients expected in case 0, got '2'"},
      {"autograd-answer 1\ncase 0 1\n3 5\n1 2 x\n", "expected a number of gradient 1, got 'x'"},
      {"autograd-answer 1\ncase 0 1\n5000 5000\n", "expected the rows of gradient 1 (0..4096), got '5000'"},
  };
  for (const auto& [text, why] : broken) {
    const kit::ParsedAnswers p = kit::parse_answers(text, cases.size(), 1);
    BOOST_TEST(!p.complete);
    BOOST_TEST(p.error.find(why) != std::string::npos, "'" << p.error << "' should say '" << why << "'");
    // Past the end mark every case was answered: those answers stand, but the run is not "graded" cleanly.
    const bool after_end = why == "more output after the end mark";
    BOOST_TEST((kit::score(ex, 12, cases, p, "").percent() < 100) != after_end);
  }
}

BOOST_AUTO_TEST_CASE(an_answer_that_stops_early_keeps_only_its_answered_cases) {
  const kit::Exercise ex = exercise("softmax");
  const std::vector<kit::DrawnCase> cases = kit::draw_cases(ex, 13);
  std::vector<Mats> first_two;
  for (std::size_t k = 0; k < 2; ++k) {
    const arma::vec s = arma::sum(cases[k].dy % cases[k].y, 1);
    first_two.push_back({cases[k].y % (cases[k].dy.each_col() - s)});
  }
  const kit::ParsedAnswers p = kit::parse_answers(answer_frame(first_two, false), cases.size(), 1);
  BOOST_TEST(!p.complete);
  BOOST_TEST(p.error.empty());
  const kit::GradeReport r = kit::score(ex, 13, cases, p, "it was killed by SIGSEGV (Segmentation fault)");
  BOOST_TEST(r.score() == 2);
  BOOST_TEST(r.max_score() == 5);
  BOOST_TEST(table(r).find("no answer: it was killed by SIGSEGV") != std::string::npos, table(r));
}

BOOST_AUTO_TEST_SUITE_END()
