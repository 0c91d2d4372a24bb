// The JVP exercise kind (kit/jvp_grader.h) on layernorm_jvp, graded in this
// process with trusted code: the reference solution gets full marks on fresh
// seeds, the stub earns nothing for the dbeta term it is given, every wrong
// JVP of the zoo loses the points of the term it gets wrong (and only those)
// and is named with its hint, a JVP by central differences of the forward
// fails the transpose identity, and the grader's exact J v agrees with
// differences. (`autograd grade` on the stub and the solution: CTest's
// assignment_layernorm_jvp_* tests, through the sandboxed child.)
#define BOOST_TEST_MODULE assignments_jvp
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "assignments/kit/grader.h"
#include "assignments/kit/jvp_grader.h"

#if __has_include("../assignments/solutions/layernorm_jvp.cpp")
#define HAVE_SOLUTION 1
#define layernorm_jvp layernorm_jvp_ref
#include "../assignments/solutions/layernorm_jvp.cpp"
#undef layernorm_jvp
#endif

namespace {

using Mats = std::vector<arma::mat>;

kit::Exercise exercise() { return kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", "layernorm_jvp"); }

std::string table(const kit::GradeReport& r) {
  std::ostringstream os;
  r.print(os);
  return os.str();
}

using Jvp = std::function<arma::mat(const arma::mat& x, const arma::mat& gamma, const arma::mat& dx,
                                    const arma::mat& dgamma, const arma::mat& dbeta, double eps)>;

// What the adapter does: x, gamma, beta, eps, then one tangent set (dx, dgamma, dbeta) per input.
kit::Answerer as_adapter(const Jvp& jvp) {
  return [jvp](const Mats& sent) {
    Mats tangents;
    for (std::size_t t = 4; t + 3 <= sent.size(); t += 3) {
      tangents.push_back(jvp(sent[0], sent[1], sent[t], sent[t + 1], sent[t + 2], sent[3](0)));
    }
    return tangents;
  };
}

// A LayerNorm JVP written the way students write it, with one switch per classic mistake.
struct JvpAttempt {
  bool no_mean = false, no_variance = false, fixed_stats = false, variance_twice = false, variance_half = false;
  bool variance_plus = false, std_for_rstd = false, no_rstd = false, no_gamma = false, ignore_norm = false;
  bool unbiased = false, eps_outside = false, eps_missing = false, dgamma_x = false, dgamma_centred = false;
  bool gamma_twice = false, no_dgamma = false, no_dbeta = false, dbeta_gamma = false;
  arma::mat operator()(const arma::mat& x, const arma::mat& gamma, const arma::mat& dx, const arma::mat& dgamma,
                       const arma::mat& dbeta, double eps) const {
    const double d = double(x.n_cols);
    const arma::mat centred = x.each_col() - arma::mean(x, 1);
    arma::vec var = arma::mean(arma::square(centred), 1);
    if (unbiased) var *= d / (d - 1);
    const arma::vec rstd = eps_outside ? arma::vec(1 / (arma::sqrt(var) + eps))
                                       : arma::vec(1 / arma::sqrt(var + (eps_missing ? 0 : eps)));
    const arma::mat xhat = centred.each_col() % rstd;
    arma::mat dxhat = dx;
    if (!no_mean && !fixed_stats) dxhat.each_col() -= arma::mean(dx, 1);
    const double factor = variance_twice ? 2 : variance_half ? 0.5 : variance_plus ? -1 : 1;
    if (!no_variance && !fixed_stats) dxhat -= factor * (xhat.each_col() % arma::mean(xhat % dx, 1));
    if (std_for_rstd) dxhat.each_col() /= rstd;
    else if (!no_rstd) dxhat.each_col() %= rstd;
    if (ignore_norm) dxhat = dx;
    arma::mat dy = dxhat;
    if (!no_gamma) dy.each_row() %= gamma;
    arma::mat gamma_term = dgamma_x ? x : dgamma_centred ? centred : xhat;
    gamma_term.each_row() %= dgamma;
    if (gamma_twice) gamma_term.each_row() %= gamma;
    if (!no_dgamma) dy += gamma_term;
    if (!no_dbeta) dy.each_row() += dbeta_gamma ? arma::mat(dbeta % gamma) : dbeta;
    return dy;
  }
};

JvpAttempt with(bool JvpAttempt::*flag) {
  JvpAttempt a;
  a.*flag = true;
  return a;
}

struct ZooEntry {
  const char* mistake;
  JvpAttempt attempt;
  std::set<std::string> wrong;  // the tangents whose rows must fail, and no others
  std::string result, hint;     // the result column and a part of the hint
};

// A failed row of tangent `gradient` with this result and a hint containing `hint`.
bool named(const kit::GradeReport& r, const std::string& result, const std::string& hint) {
  for (const kit::GradeRow& row : r.rows) {
    const std::string text = row.note.empty() ? row.diagnosis.hint : row.note;
    if (!row.diagnosis.correct() && row.result == result && text.find(hint) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(layernorm_jvp)

#ifdef HAVE_SOLUTION
BOOST_AUTO_TEST_CASE(the_reference_solution_gets_full_marks_on_fresh_seeds) {
  const Jvp solution = [](const arma::mat& x, const arma::mat& g, const arma::mat& dx, const arma::mat& dg,
                          const arma::mat& db, double eps) {
    return layernorm_jvp_ref(x, g, arma::zeros(arma::size(g)), dx, dg, db, eps);  // beta moves no tangent
  };
  for (unsigned seed = 1; seed <= 200; ++seed) {  // `autograd grade` draws a fresh seed every run
    const kit::GradeReport r = kit::grade_in_process(exercise(), as_adapter(solution), seed);
    BOOST_TEST(r.percent() == 100, table(r));
    BOOST_TEST(r.max_score() == 16);  // 4 cases x (dx, dgamma) x (transpose, differences); dbeta is given
    BOOST_TEST(r.rows.size() == 24u);
  }
}
#endif

BOOST_AUTO_TEST_CASE(the_correct_attempt_gets_full_marks_and_the_table_says_tangent) {
  const kit::GradeReport r = kit::grade_in_process(exercise(), as_adapter(JvpAttempt{}), 5);
  BOOST_TEST(r.percent() == 100, table(r));
  BOOST_TEST(table(r).find("tangent") != std::string::npos);
  BOOST_TEST(table(r).find("random 3x5, transpose") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_stub_scores_zero_and_its_dbeta_term_is_right_but_given) {
  const Jvp stub = [](const arma::mat& x, const arma::mat&, const arma::mat&, const arma::mat&, const arma::mat& db,
                      double) {
    arma::mat dy(arma::size(x), arma::fill::zeros);
    dy.each_row() += db;
    return dy;
  };
  const kit::GradeReport r = kit::grade_in_process(exercise(), as_adapter(stub), 8);
  BOOST_TEST(r.score() == 0, table(r));
  for (const kit::GradeRow& row : r.rows) {
    if (row.gradient == "dbeta") BOOST_TEST((row.max_points == 0 && row.diagnosis.correct()));
    if (row.gradient == "dgamma") BOOST_TEST(row.result == "dgamma term dropped");
  }
  BOOST_TEST(table(r).find("given (no points)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(each_wrong_jvp_of_the_zoo_loses_its_terms_points_with_its_own_hint) {
  using A = JvpAttempt;
  const std::set<std::string> dx = {"dx"}, dg = {"dgamma"}, db = {"dbeta"}, both = {"dx", "dgamma"};
  const std::vector<ZooEntry> zoo = {
      {"no mean term", with(&A::no_mean), dx, "missing mean term", "- mean(dx) is missing"},
      {"no variance term", with(&A::no_variance), dx, "missing variance term", "the tangent of rstd"},
      {"mean and rstd constant", with(&A::fixed_stats), dx, "mean and rstd held fixed", "as if the mean and rstd"},
      {"variance term x2", with(&A::variance_twice), dx, "variance term x2", "twice too large"},
      {"variance term x1/2", with(&A::variance_half), dx, "variance term x1/2", "half as large"},
      {"variance term added", with(&A::variance_plus), dx, "wrong sign, variance term", "wrong sign"},
      {"std for rstd", with(&A::std_for_rstd), dx, "std for rstd", "std = sqrt(var + eps)"},
      {"rstd forgotten", with(&A::no_rstd), dx, "rstd missing", "rstd = 1 / sqrt(var + eps)"},
      {"gamma forgotten", with(&A::no_gamma), dx, "gamma missing", "gamma is missing"},
      {"normalisation ignored", with(&A::ignore_norm), dx, "normalisation ignored", "gamma * x + beta"},
      {"unbiased variance", with(&A::unbiased), both, "unbiased variance", "divided by D-1"},
      {"eps outside the sqrt", with(&A::eps_outside), both, "eps outside the sqrt", "inside the root"},
      {"eps left out", with(&A::eps_missing), both, "eps missing", "without eps"},
      {"dgamma times x", with(&A::dgamma_x), dg, "dgamma times x", "normalised x"},
      {"dgamma times x - mean", with(&A::dgamma_centred), dg, "dgamma times x - mean", "without the factor rstd"},
      {"gamma twice", with(&A::gamma_twice), dg, "gamma twice", "multiplied by gamma too"},
      {"dgamma term dropped", with(&A::no_dgamma), dg, "dgamma term dropped", "dgamma * xhat is missing"},
      {"dbeta term dropped", with(&A::no_dbeta), db, "dbeta term dropped", "dbeta is missing"},
      {"dbeta times gamma", with(&A::dbeta_gamma), db, "dbeta times gamma", "added after the scale"},
  };
  for (const ZooEntry& z : zoo) {
    for (unsigned seed : {3u, 91u, 20261201u}) {
      const kit::GradeReport r = kit::grade_in_process(exercise(), as_adapter(z.attempt), seed);
      // dbeta is given (no points), so a dbeta mistake is named but costs nothing.
      if (z.wrong != db) BOOST_TEST(r.percent() < 100, z.mistake << ":\n" << table(r));
      BOOST_TEST(named(r, z.result, z.hint), z.mistake << ": expected '" << z.result << "' with the hint '" << z.hint
                                                        << "' in\n" << table(r));
      std::set<std::string> failed;
      for (const kit::GradeRow& row : r.rows) {
        if (!row.diagnosis.correct() && row.check.find("transpose") != std::string::npos) failed.insert(row.gradient);
      }
      BOOST_TEST((failed == z.wrong), z.mistake << ": the transpose rows of the wrong terms fail, and only those\n"
                                                << table(r));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_dx_term_that_is_no_known_mistake_is_checked_for_its_properties) {
  // The mean term subtracted on the first row only: the rows of dxhat no longer all sum to zero.
  const Jvp first_row_only = [](const arma::mat& x, const arma::mat& g, const arma::mat& dx, const arma::mat& dg,
                                const arma::mat& db, double eps) {
    arma::mat dy = JvpAttempt{}(x, g, dx, dg, db, eps);
    if (x.n_rows > 1) dy.rows(1, x.n_rows - 1) += 0.3 * arma::repmat(g, x.n_rows - 1, 1);
    return dy;
  };
  const kit::GradeReport r = kit::grade_in_process(exercise(), as_adapter(first_row_only), 4);
  BOOST_TEST(r.percent() < 100);
  BOOST_TEST(named(r, "rows do not sum to 0", "check the term - mean(dx)"), table(r));
}

BOOST_AUTO_TEST_CASE(a_tangent_returned_1_x_D_is_named_not_broadcast) {
  const Jvp unbroadcast = [](const arma::mat& x, const arma::mat& g, const arma::mat& dx, const arma::mat& dg,
                             const arma::mat& db, double eps) {
    return arma::accu(arma::abs(dx)) + arma::accu(arma::abs(db)) == 0 ? arma::mat(dg) : JvpAttempt{}(x, g, dx, dg, db, eps);
  };
  const kit::GradeReport r = kit::grade_in_process(exercise(), as_adapter(unbroadcast), 6);
  BOOST_TEST(r.percent() < 100);
  BOOST_TEST(named(r, "not broadcast", "added to every row"), table(r));
}

BOOST_AUTO_TEST_CASE(a_jvp_that_throws_scores_nothing_and_says_so) {
  const kit::GradeReport r = kit::grade_in_process(
      exercise(), [](const Mats&) -> Mats { throw std::runtime_error("not yet"); }, 2);
  BOOST_TEST(r.score() == 0);
  BOOST_TEST(table(r).find("your JVP threw: not yet") != std::string::npos, table(r));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(jvp_reference)

// Central differences of the forward along each tangent, at step h: what a student who does not derive would send.
kit::Answerer central_differences(const kit::Exercise& ex, double h) {
  return as_adapter([ex, h](const arma::mat& x, const arma::mat& g, const arma::mat& dx, const arma::mat& dg,
                            const arma::mat& db, double) {
    arma::mat beta(arma::size(g), arma::fill::zeros);  // y is affine in beta: its value changes no tangent
    const ag::Inputs plus = {x + h * dx, g + h * dg, beta + h * db}, minus = {x - h * dx, g - h * dg, beta - h * db};
    return arma::mat((ex.forward(plus) - ex.forward(minus)) / (2 * h));
  });
}

BOOST_AUTO_TEST_CASE(the_exact_jvp_agrees_with_differences_and_a_derived_jvp_meets_the_identity_to_rounding) {
  const kit::Exercise ex = exercise();
  double worst = 0;  // the derived JVP's transpose gap: rounding, far below the grader's 1e-13
  for (unsigned seed : {9u, 10u, 11u, 12u}) {
    for (const kit::DrawnCase& c : kit::draw_cases(ex, seed)) {
      const Mats derived = as_adapter(JvpAttempt{})(c.sent);
      for (std::size_t k = 0; k < c.inputs.size(); ++k) {
        const arma::mat exact = kit::exact_jvp(ex, c, k), fd = kit::difference_jvp(ex, c, k);
        BOOST_TEST(arma::abs(exact - fd).max() < 1e-8 * arma::abs(exact).max(), c.label << " input " << k);
        worst = std::max(worst, kit::transpose_gap(ex, c, k, derived[k], exact));
      }
    }
  }
  char line[100];
  std::snprintf(line, sizeof line, "layernorm_jvp: a derived JVP's worst transpose gap: %.1e", worst);
  BOOST_TEST_MESSAGE(line);
  BOOST_TEST(worst < 1e-15);
}

BOOST_AUTO_TEST_CASE(central_differences_fail_the_transpose_identity_on_dx_at_every_step) {
  const kit::Exercise ex = exercise();
  double best = 1;
  for (double h : {1e-2, 1e-3, 1e-4, 1e-5, 6e-6, 1e-6, 1e-7}) {
    const kit::GradeReport r = kit::grade_in_process(ex, central_differences(ex, h), 11);
    for (const kit::GradeRow& row : r.rows) {
      if (row.gradient == "dx" && row.check.find("transpose") != std::string::npos) {
        BOOST_TEST(row.points == 0, "h=" << h << " " << row.check);
        if (h <= 1e-4 && h >= 1e-6) BOOST_TEST(row.result == "only approximate", "h=" << h << " " << row.check);
      }
    }
    double worst = 0;  // the largest transpose gap of the dx terms, over the cases
    for (const kit::DrawnCase& c : kit::draw_cases(ex, 11)) {
      const arma::mat exact = kit::exact_jvp(ex, c, 0);
      worst = std::max(worst, kit::transpose_gap(ex, c, 0, central_differences(ex, h)(c.sent).at(0), exact));
    }
    best = std::min(best, worst);
  }
  char line[120];
  std::snprintf(line, sizeof line, "layernorm_jvp: best central differences' transpose gap (h 1e-2..1e-7): %.1e", best);
  BOOST_TEST_MESSAGE(line);
  BOOST_TEST(best > 10 * 1e-13);  // the grader's tolerance (kit/jvp_grader.cpp)
}

BOOST_AUTO_TEST_CASE(a_jvp_spec_with_a_tape_check_or_dy_is_refused) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ag_jvp_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "bad");
  std::ofstream(dir / "bad" / "exercise.spec") << "title = t\nkind = jvp\nforward = softmax\ninput = x N D -2 2\n"
                                                  "sends = x\ncase = a | N=2 D=3\n";
  BOOST_CHECK_EXCEPTION(kit::read_spec((dir / "bad").string()), ag::Error, [](const ag::Error& e) {
    return std::string(e.what()).find("a jvp exercise is sent tangents, not dy, and has no tape check") !=
           std::string::npos;
  });
  std::ofstream(dir / "bad" / "exercise.spec") << "title = t\nkind = forward\n";
  BOOST_CHECK_EXCEPTION(kit::read_spec((dir / "bad").string()), ag::Error, [](const ag::Error& e) {
    return std::string(e.what()).find("exercise.spec:2: expected kind = backward or jvp, got 'forward'") !=
           std::string::npos;
  });
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
