// The tape explorer (page/explorer/): programs recorded from their text give
// the values and gradients (forward mode and H v too) of the same computation
// written directly in C++; every bad program gets its one line; the exercises
// score the right formula full marks and name the usual wrong ones.
#define BOOST_TEST_MODULE explorer
#include <boost/test/unit_test.hpp>

#include <functional>
#include <set>

#include "ops/functional.h"
#include "ops/ops.h"
#include "page/explorer/exercise.h"
#include "page/explorer/explore.h"
#include "page/explorer/lang.h"

namespace {

using ag::Var;
using V = const std::vector<Var>&;

struct Program {
  std::string text;
  std::vector<std::string> leaves;  // the direct function's inputs, in order
  ag::TapeFunction direct;          // the same computation, written with ag's ops
  std::string direction = "";       // a leaf: also compare forward mode and H v
};

Var c(ag::Tape& t, arma::mat m) { return t.constant(std::move(m)); }
Var c(ag::Tape& t, double v) { return t.constant(v); }
arma::mat row(std::initializer_list<double> v) { return arma::rowvec(v); }

std::vector<Program> programs() {
  return {
      {"x = [3, 1, 5, 7]; g = 2; y = layernorm(x) * g + 1; L = sum(y * [1, 2, 3, 4])", {"x", "g"},
       [](ag::Tape& t, V v) {
         Var y = ag::layernorm_composed(v[0], c(t, row({1, 1, 1, 1})), c(t, row({0, 0, 0, 0})), 1e-5);
         return ag::sum(ag::mul(ag::add(ag::mul(y, v[1]), c(t, 1)), c(t, row({1, 2, 3, 4}))));
       }, "x"},
      {"w = [-3, 1]; x = [2, 0]; b = 6.8813735870195432; n = sum(w * x) + b; o = tanh(n)", {"w", "x", "b"},
       [](ag::Tape&, V v) { return ag::tanh(ag::add(ag::sum(ag::mul(v[0], v[1])), v[2])); }, "w"},
      {"z = [[1, 2, 0.5]]; L = -sum(log_softmax(z, dim=1) * [0, 1, 0])", {"z"},
       [](ag::Tape& t, V v) { return ag::neg(ag::sum(ag::mul(ag::log_softmax(v[0], 1), c(t, row({0, 1, 0}))))); }, "z"},
      {"q = [1, 0, 2]\nK = [[1, 2, 0], [0, 1, 1], [2, 0, 1], [1, 1, 1]]\ns = q @ transpose(K) / 1.7320508075688772\n"
       "p = softmax(s, dim=1); V = [[1, 0], [0, 1], [1, 1], [2, -1]]; L = sum(p @ V * [1, -1])", {"q", "K", "V"},
       [](ag::Tape& t, V v) {
         Var s = ag::div(ag::matmul(v[0], ag::transpose(v[1])), c(t, 1.7320508075688772));
         return ag::sum(ag::mul(ag::matmul(ag::softmax(s, 1), v[2]), c(t, row({1, -1}))));
       }, "q"},
      {"A = [[1, 2, 3], [4, 5, 6]]; b = [0.5, -1, 2]; L = sum(square(A + b))", {"A", "b"},
       [](ag::Tape&, V v) { return ag::sum(ag::square(ag::add(v[0], v[1]))); }, "b"},
      {"A = [[1, 2, 3], [4, 5, 6]]; k = [[1], [2]]; L = mean(A * k)", {"A", "k"},
       [](ag::Tape&, V v) { return ag::mean(ag::mul(v[0], v[1])); }},
      {"A = [[1, 2], [3, 4], [5, 6]]; B = [[1, 0, 2], [0, 1, 1]]; L = sum(square(A @ B))", {"A", "B"},
       [](ag::Tape&, V v) { return ag::sum(ag::square(ag::matmul(v[0], v[1]))); }, "A"},
      {"x = [0.5, 1, 2]; L = sum(log(exp(x) + 1))", {"x"},
       [](ag::Tape& t, V v) { return ag::sum(ag::log(ag::add(ag::exp(v[0]), c(t, 1)))); }, "x"},
      {"x = [1.5, 2, 0.5]; L = sum(x ^ 3 - sqrt(x))", {"x"},
       [](ag::Tape&, V v) { return ag::sum(ag::sub(ag::pow_scalar(v[0], 3), ag::sqrt(v[0]))); }, "x"},
      {"x = [-1, 0.5, 2]; L = sum(sigmoid(x) * relu(x))", {"x"},
       [](ag::Tape&, V v) { return ag::sum(ag::mul(ag::sigmoid(v[0]), ag::relu(v[0]))); }},
      {"a = [1, 2, 3]; b = [2, 4, -1]; L = sum(a / b)", {"a", "b"},
       [](ag::Tape&, V v) { return ag::sum(ag::div(v[0], v[1])); }, "b"},
      {"x = [[1, 2, 4], [3, 0, 1]]; L = sum(var(x, dim=1))", {"x"},
       [](ag::Tape&, V v) { return ag::sum(ag::var(v[0], 1)); }, "x"},
      {"x = [[1, 2, 4], [3, 0, 1]]; L = sum(var_unbiased(x, dim=0) * [1, 2, 3])", {"x"},
       [](ag::Tape& t, V v) { return ag::sum(ag::mul(ag::var(v[0], 0, true), c(t, row({1, 2, 3})))); }},
      {"x = [[1, 5, 2], [7, 0, 3]]; L = sum(max(x, dim=1)) + sum(logsumexp(x, dim=0))", {"x"},
       [](ag::Tape&, V v) { return ag::add(ag::sum(ag::max(v[0], 1)), ag::sum(ag::logsumexp(v[0], 0))); }},
      {"x = [[1, 2, 4], [3, 0, 1]]; g = [1, 2, 0.5]; b = [0, 1, 0]\n"
       "L = sum(layernorm_fused(x, g, b, eps=0.1) * [[1, 2, 3], [4, 5, 6]])", {"x", "g", "b"},
       [](ag::Tape& t, V v) {
         return ag::sum(ag::mul(ag::layernorm_fused(v[0], v[1], v[2], 0.1), c(t, arma::mat{{1, 2, 3}, {4, 5, 6}})));
       }, "g"},
      {"x = [[1, 2, 4], [3, 0, 1]]; g = [1, 2, 0.5]; L = sum(rmsnorm(x, g) ^ 2 * [1, 2, 3])", {"x", "g"},
       [](ag::Tape& t, V v) {
         return ag::sum(ag::mul(ag::pow_scalar(ag::rmsnorm_composed(v[0], v[1], 1e-5), 2), c(t, row({1, 2, 3}))));
       }},
      {"x = [[1, 2], [3, 5], [0, 1]]; L = sum(batchnorm(x) * [[1, 2], [3, 4], [5, 6]])", {"x"},
       [](ag::Tape& t, V v) {
         Var y = ag::batchnorm_composed(v[0], c(t, row({1, 1})), c(t, row({0, 0})), 1e-5);
         return ag::sum(ag::mul(y, c(t, arma::mat{{1, 2}, {3, 4}, {5, 6}})));
       }},
      {"x = [-1, 0.3, 2]; L = sum(gelu(x) + gelu_fused(x) * 2)", {"x"},
       [](ag::Tape& t, V v) { return ag::sum(ag::add(ag::gelu(v[0]), ag::mul(ag::gelu_fused(v[0]), c(t, 2)))); }, "x"},
      {"a = [[1, 2]]; b = [[3]]; L = sum(hcat(a, b) * [1, 2, 3]) + sum(vcat(a, a) * [[1, 2], [3, 4]])", {"a", "b"},
       [](ag::Tape& t, V v) {
         return ag::add(ag::sum(ag::mul(ag::hcat({v[0], v[1]}), c(t, row({1, 2, 3})))),
                        ag::sum(ag::mul(ag::vcat({v[0], v[0]}), c(t, arma::mat{{1, 2}, {3, 4}}))));
       }},
      {"x = [[1, 2], [3, 4], [5, 6]]; L = sum(rows(x, first=1, count=2) ^ 2) + sum(cols(x, first=1, count=1))", {"x"},
       [](ag::Tape&, V v) { return ag::add(ag::sum(ag::pow_scalar(ag::rows(v[0], 1, 2), 2)), ag::sum(ag::cols(v[0], 1, 1))); }},
      {"x = [1, 2]; L = sum(mul_scalar(add_scalar(x, c=1), c=3) * x)", {"x"},
       [](ag::Tape&, V v) { return ag::sum(ag::mul(ag::mul_scalar(ag::add_scalar(v[0], 1), 3), v[0])); }, "x"},
      {"x = [[1, 2, 3], [4, 5, 6]]; L = sum(sum(transpose(x), dim=0) ^ 2) + mean(mean(x, dim=0))", {"x"},
       [](ag::Tape&, V v) {
         return ag::add(ag::sum(ag::pow_scalar(ag::sum(ag::transpose(v[0]), 0), 2)), ag::mean(ag::mean(v[0], 0)));
       }, "x"},
      {"x = [1, 2]; y = x * x + x; L = sum(y) - 2 * sum(-x)", {"x"},
       [](ag::Tape& t, V v) {
         return ag::sub(ag::sum(ag::add(ag::mul(v[0], v[0]), v[0])), ag::mul(c(t, 2), ag::sum(ag::neg(v[0]))));
       }, "x"},
      {"x = [[0.2, -0.4, 1], [2, 1, -1]]; L = sum(softmax(x, dim=0) * [[1, 2, 3], [4, 5, 6]])", {"x"},
       [](ag::Tape& t, V v) { return ag::sum(ag::mul(ag::softmax(v[0], 0), c(t, arma::mat{{1, 2, 3}, {4, 5, 6}}))); }, "x"},
  };
}

void check_close(const arma::mat& got, const arma::mat& want, const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    BOOST_REQUIRE_EQUAL(ag::shape_str(got), ag::shape_str(want));
    BOOST_TEST(arma::abs(got - want).max() <= 1e-12 * std::max(1.0, arma::abs(want).max()));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(programs_match_the_tape_written_directly) {
  BOOST_REQUIRE_GE(programs().size(), 20u);
  for (const Program& p : programs()) {
    BOOST_TEST_CONTEXT(p.text) {
      const explorer::Exploration e = explorer::explore_program(p.text, p.direction);
      std::vector<arma::mat> inputs;
      for (const std::string& name : p.leaves) {
        BOOST_REQUIRE(e.labelled(name) != nullptr);
        BOOST_TEST(e.labelled(name)->kind == "leaf");
        inputs.push_back(e.labelled(name)->value);
      }
      const arma::mat one(1, 1, arma::fill::ones);
      const ag::VjpResult r = ag::vjp(p.direct, inputs, one);
      check_close(e.nodes[e.output].value, r.output, "value");
      for (std::size_t k = 0; k < p.leaves.size(); ++k) check_close(e.labelled(p.leaves[k])->grad, r.cotangents[k], "d" + p.leaves[k]);
      if (p.direction.empty()) continue;
      std::vector<arma::mat> v;  // the direction leaf moves along 1, 2, 3, ... row by row; the others stay
      for (std::size_t k = 0; k < p.leaves.size(); ++k) {
        arma::mat d(arma::size(inputs[k]), arma::fill::zeros);
        for (arma::uword i = 0; i < d.n_rows && p.leaves[k] == p.direction; ++i) {
          for (arma::uword j = 0; j < d.n_cols; ++j) d(i, j) = double(1 + i * d.n_cols + j);
        }
        v.push_back(d);
      }
      check_close(e.nodes[e.output].tangent, ag::jvp(p.direct, inputs, v).tangent, "tangent");
      const std::vector<arma::mat> hv = ag::hvp(p.direct, inputs, v);
      for (std::size_t k = 0; k < p.leaves.size(); ++k) check_close(e.labelled(p.leaves[k])->hvp, hv[k], "Hv " + p.leaves[k]);
    }
  }
}

// Each step adds the node's own VJP; the last total of each node is its gradient.
BOOST_AUTO_TEST_CASE(backward_walk_adds_up_to_every_gradient) {
  for (const Program& p : programs()) {
    const explorer::Exploration e = explorer::explore_program(p.text);
    std::map<std::size_t, arma::mat> last;
    for (const explorer::BackwardStep& s : e.backward) {
      for (const explorer::BackwardPart& part : s.parts) last[part.input] = part.total;
    }
    BOOST_TEST_CONTEXT(p.text) {
      for (const explorer::NodeReport& n : e.nodes) {
        if (n.kind == "leaf") check_close(last.at(n.id), n.grad, "total of node " + std::to_string(n.id));
      }
      BOOST_TEST(e.backward.front().node == e.output);
    }
  }
}

BOOST_AUTO_TEST_CASE(literals_leaves_and_constants) {
  const explorer::Exploration e = explorer::explore_program("x = [[1, -2], [3e-1, .5]]; k = -4; L = sum(x * k * [7, 8])");
  check_close(e.labelled("x")->value, arma::mat{{1, -2}, {0.3, 0.5}}, "x");
  BOOST_TEST(e.labelled("k")->kind == "leaf");
  BOOST_TEST(e.labelled("k")->value(0, 0) == -4);
  int constants = 0;
  for (const explorer::NodeReport& n : e.nodes) constants += n.kind == "constant";
  BOOST_TEST(constants == 1);
  check_close(e.labelled("k")->grad, arma::mat(1, 1, arma::fill::value(7 - 16 + 0.3 * 7 + 0.5 * 8)), "dk");
  // A non-scalar output: backward from ones, said in the note.
  const explorer::Exploration v = explorer::explore_program("x = [1, 2]; y = x * 3");
  check_close(v.labelled("x")->grad, arma::mat{{3, 3}}, "dx");
  BOOST_TEST(v.note.find("not 1x1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_programs_get_one_line_each) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
      {"x = [1, 2]; L = layrnorm(x)", {"at column 17", "unknown op 'layrnorm'", "did you mean layernorm?"}},
      {"x = [1, 2]; L = sum(tanhh(x))", {"unknown op 'tanhh'", "did you mean tanh?"}},
      {"a = [1, 2, 3]; b = [1, 2]; L = sum(a + b)", {"at column 38", "1x3", "1x2"}},
      {"A = [[1, 2]]; B = [[1, 2]]; L = sum(A @ B)", {"matmul", "1x2"}},
      {"x = [1, 2; L = sum(x)", {"at column 10", "syntax error", "found ';'"}},
      {"x = [1, 2]; L = sum(x", {"syntax error", "expected ')'", "the end"}},
      {"x = 0x10", {"at column 6", "syntax error"}},
      {"x = 1 $ 2", {"at column 7", "unexpected character '$'"}},
      {"x = [[1, 2], [3]]", {"row 2 has 1"}},
      {"x = [1, 2]; L = sum(y)", {"unknown name 'y'"}},
      {"x = [1, 2]; L = sum(x, x)", {"sum takes 1 input, not 2"}},
      {"x = [1, 2]; L = add_scalar(x)", {"add_scalar needs c=NUMBER"}},
      {"x = [1, 2]; L = softmax(x)", {"softmax needs dim=0"}},
      {"x = [1, 2]; L = mean(x, dim=2)", {"dim is 0"}},
      {"x = [1, 2]; L = mean(x, dims=1)", {"no argument 'dims'"}},
      {"x = [1, 2]; L = mse(x)", {"'mse' cannot be called here"}},
      {"sum = [1, 2]", {"name of an op"}},
      {"", {"the program is empty"}},
      {"x = [1, 2]; L = sum(x, direction", {"syntax error"}},
  };
  for (const auto& [text, parts] : bad) {
    const std::string json = explorer::explore("program=" + text);
    BOOST_TEST_CONTEXT(text << " -> " << json) {
      BOOST_TEST(json.find("\"error\":\"\"") == std::string::npos);
      BOOST_TEST(json.find('\n') == std::string::npos);
      for (const std::string& part : parts) BOOST_TEST(json.find(part) != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_link_is_decoded_and_its_fields_checked) {
  const std::string ok = explorer::explore("program=x%20%3D%20%5B3%2C%201%5D%3B%20L%20%3D%20sum(x%20*%20x%20%2B%201)");
  BOOST_TEST(ok.find("\"error\":\"\"") == 0u + 1);
  BOOST_TEST(explorer::explore("programm=x%20%3D%201").find("did you mean program?") != std::string::npos);
  BOOST_TEST(explorer::explore("program=x=[1,2];L=sum(x*x)&direction=L").find("the direction is a leaf") != std::string::npos);
}

namespace {

const char* kRight = "g = dy * gamma; dx = rstd * (g - mean(g, dim=1) - xhat * mean(g * xhat, dim=1))";

}  // namespace

BOOST_AUTO_TEST_CASE(the_right_layernorm_dx_scores_full_marks) {
  for (unsigned seed : {1u, 2u, 2026u}) {
    const explorer::ExerciseReport r = explorer::check_exercise("layernorm_dx", kRight, seed);
    BOOST_TEST(r.max_score() >= 4);
    BOOST_TEST(r.score() == r.max_score());
  }
  BOOST_TEST(explorer::check_exercise("rmsnorm_dx", "g = dy * gamma; dx = rstd * (g - xhat * mean(g * xhat, dim=1))").score() == 4);
  BOOST_TEST(explorer::check_exercise("softmax_dx", "dx = y * (dy - sum(dy * y, dim=1))").score() == 4);
  BOOST_TEST(explorer::check_exercise("matmul_dA", "dA = dY @ transpose(B)").score() == 4);
}

BOOST_AUTO_TEST_CASE(wrong_layernorm_dx_get_their_named_hints) {
  const std::vector<std::pair<std::string, std::string>> wrong = {
      {"g = dy * gamma; dx = rstd * (g - xhat * mean(g * xhat, dim=1))", "missing mean term"},
      {"g = dy * gamma; dx = rstd * (g - mean(g, dim=1))", "missing variance term"},
      {"g = dy; dx = rstd * (g - mean(g, dim=1) - xhat * mean(g * xhat, dim=1))", "gamma missing"},
      {"g = dy * gamma; dx = g - mean(g, dim=1) - xhat * mean(g * xhat, dim=1)", "rstd missing"},
      {"g = dy * gamma; dx = rstd * (g - mean(g, dim=1) + xhat * mean(g * xhat, dim=1))", "wrong sign, variance term"},
      {"g = dy * gamma; dx = -rstd * (g - mean(g, dim=1) - xhat * mean(g * xhat, dim=1))", "wrong sign"},
      {"g = dy * gamma; dx = 2 * rstd * (g - mean(g, dim=1) - xhat * mean(g * xhat, dim=1))", "constant factor"},
      {"dx = 0 * x", "zero"},
      {"r = 1 / sqrt(var_unbiased(x, dim=1) + eps); h = (x - mu) * r; g = dy * gamma\n"
       "dx = r * (g - mean(g, dim=1) - h * mean(g * h, dim=1))", "unbiased variance"},
  };
  std::set<std::string> hints;
  for (const auto& [answer, result] : wrong) {
    const explorer::ExerciseReport r = explorer::check_exercise("layernorm_dx", answer);
    BOOST_TEST_CONTEXT(answer) {
      BOOST_TEST(r.score() < r.max_score());
      bool named = false;
      for (const explorer::ExerciseRow& row : r.rows) {
        if (row.points == 0) {
          named = named || row.result == result;
          hints.insert(row.hint);
        }
      }
      BOOST_TEST(named, "no row says '" << result << "': " << r.json());
    }
  }
  BOOST_TEST(hints.size() >= wrong.size());
}

// A central difference is as close as finite differences come, and still fails: the check is exact.
BOOST_AUTO_TEST_CASE(a_central_difference_does_not_pass) {
  for (const explorer::ExerciseCase& c : explorer::exercise_cases("layernorm_dx", 7)) {
    const arma::mat x = c.given.at("x"), gamma = c.given.at("gamma"), beta = c.given.at("beta"), dy = c.given.at("dy");
    const auto f = [&](const arma::mat& xs) {
      ag::Tape t;
      return arma::accu(dy % ag::layernorm_composed(t.constant(xs), t.constant(gamma), t.constant(beta), 1e-5).value());
    };
    arma::mat fd(arma::size(x));
    const double h = 1e-6;
    for (arma::uword k = 0; k < x.n_elem; ++k) {
      arma::mat up = x, down = x;
      up(k) += h;
      down(k) -= h;
      fd(k) = (f(up) - f(down)) / (2 * h);
    }
    BOOST_REQUIRE(arma::abs(fd - c.exact).max() < 1e-6 * arma::abs(c.exact).max());  // it is close ...
    const explorer::ExerciseRow row = explorer::check_gradient("layernorm_dx", c, fd);
    BOOST_TEST(row.points == 0);  // ... and not exact
    BOOST_TEST(row.result == "close, not exact");
  }
}

BOOST_AUTO_TEST_CASE(exercise_answers_cannot_rebind_or_skip_the_gradient) {
  BOOST_CHECK_THROW(explorer::check_exercise("layernorm_dx", "dy = 1; dx = dy"), explorer::ProgramError);
  BOOST_CHECK_THROW(explorer::check_exercise("layernorm_dx", "g = dy * gamma"), explorer::ProgramError);
  BOOST_CHECK_THROW(explorer::check_exercise("layernorm_dx", "dx = grad(x)"), explorer::ProgramError);
  BOOST_TEST(explorer::explore("exercise=layernorm_dx&answer=" + std::string(kRight)).find("\"score\":4") != std::string::npos);
  BOOST_TEST(explorer::explore("exercise=layrnorm_dx").find("did you mean layernorm_dx?") != std::string::npos);
}

// A typed direction: forward mode moves the leaf along it (a linear program's
// tangent is the map applied to v; H v along it), and a wrong one is one line.
BOOST_AUTO_TEST_CASE(a_typed_direction_is_the_one_forward_mode_moves_along) {
  const explorer::Exploration e = explorer::explore_program("x = [1, 2, 3]; y = x * 3; L = sum(y * y)", "x", "1, 0, -2");
  check_close(e.v, arma::mat{{1, 0, -2}}, "v");
  check_close(e.labelled("y")->tangent, arma::mat{{3, 0, -6}}, "y's tangent: 3 v");
  check_close(e.labelled("x")->hvp, arma::mat{{18, 0, -36}}, "H v: the Hessian of sum(9 x^2) is 18 I");
  const explorer::Exploration d = explorer::explore_program("x = [1, 2, 3]; y = x * 3; L = sum(y * y)", "x");
  check_close(d.v, arma::mat{{1, 2, 3}}, "the default v: 1, 2, 3 row by row");
  const std::string shape = explorer::explore("program=x%3D%5B1%2C2%5D%3BL%3Dsum(x*x)&direction=x&v=1,2,3");
  BOOST_TEST(shape.find("v: 1x3 numbers for x, which is 1x2") != std::string::npos, shape);
  const std::string alone = explorer::explore("program=x%3D%5B1%2C2%5D%3BL%3Dsum(x*x)&v=1,2");
  BOOST_TEST(alone.find("need a direction") != std::string::npos, alone);
  const std::string bad = explorer::explore("program=x%3D%5B1%2C2%5D%3BL%3Dsum(x*x)&direction=x&v=1,0x10");
  BOOST_TEST(bad.find("is not a number") != std::string::npos, bad);
}
