#include "check/op_table.h"

#include "ops/layernorm.h"
#include "ops/ops.h"

namespace ag {

namespace {

using V = const std::vector<Var>&;

std::vector<OpCase> build() {
  const Domain pos = Domain::Positive, nz = Domain::AwayFromZero;
  return {
      {"add", "y = a + b", "da = dy; db = dy", {{3, 4}, {3, 4}}, [](Tape&, V x) { return x[0] + x[1]; }},
      {"add (row broadcast)", "y = a + b, b is 1xD", "db = sum of dy down each column",
       {{3, 4}, {1, 4}}, [](Tape&, V x) { return x[0] + x[1]; }},
      {"add (column broadcast)", "y = a + b, b is Nx1", "db = sum of dy across each row",
       {{3, 4}, {3, 1}}, [](Tape&, V x) { return x[0] + x[1]; }},
      {"add (scalar broadcast)", "y = a + b, b is 1x1", "db = sum of all dy",
       {{3, 4}, {1, 1}}, [](Tape&, V x) { return x[0] + x[1]; }},
      {"sub", "y = a - b", "da = dy; db = -dy", {{3, 4}, {3, 1}}, [](Tape&, V x) { return x[0] - x[1]; }},
      {"mul", "y = a * b", "da = dy * b; db = dy * a", {{3, 4}, {3, 4}}, [](Tape&, V x) { return x[0] * x[1]; }},
      {"mul (row broadcast)", "y = a * b, b is 1xD", "db = sum over rows of dy * a",
       {{3, 4}, {1, 4}}, [](Tape&, V x) { return x[0] * x[1]; }},
      {"div", "y = a / b", "da = dy / b; db = -dy * a / b^2", {{3, 4}, {3, 4, nz}},
       [](Tape&, V x) { return x[0] / x[1]; }},
      {"div (column broadcast)", "y = a / b, b is Nx1", "db = sum across rows of -dy * a / b^2",
       {{3, 4}, {3, 1, nz}}, [](Tape&, V x) { return x[0] / x[1]; }},
      {"neg", "y = -a", "da = -dy", {{3, 4}}, [](Tape&, V x) { return -x[0]; }},
      {"add_scalar", "y = a + c", "da = dy", {{3, 4}}, [](Tape&, V x) { return x[0] + 2.5; }},
      {"mul_scalar", "y = c * a", "da = c * dy", {{3, 4}}, [](Tape&, V x) { return 2.5 * x[0]; }},
      {"pow_scalar", "y = a^p", "da = dy * p * a^(p-1)", {{3, 4, pos}},
       [](Tape&, V x) { return pow_scalar(x[0], 1.5); }},
      {"exp", "y = exp(a)", "da = dy * y", {{3, 4}}, [](Tape&, V x) { return exp(x[0]); }},
      {"log", "y = log(a)", "da = dy / a", {{3, 4, pos}}, [](Tape&, V x) { return log(x[0]); }},
      {"sqrt", "y = sqrt(a)", "da = dy / (2 y)", {{3, 4, pos}}, [](Tape&, V x) { return sqrt(x[0]); }},
      {"square", "y = a^2", "da = 2 a dy", {{3, 4}}, [](Tape&, V x) { return square(x[0]); }},
      {"tanh", "y = tanh(a)", "da = dy * (1 - y^2)", {{3, 4}}, [](Tape&, V x) { return tanh(x[0]); }},
      {"sigmoid", "y = 1 / (1 + exp(-a))", "da = dy * y * (1 - y)", {{3, 4}},
       [](Tape&, V x) { return sigmoid(x[0]); }},
      {"relu", "y = max(a, 0)", "da = dy where a > 0, else 0", {{3, 4, nz}},
       [](Tape&, V x) { return relu(x[0]); }},
      {"matmul", "Y = A B", "dA = dY B^T; dB = A^T dY", {{3, 4}, {4, 2}},
       [](Tape&, V x) { return matmul(x[0], x[1]); }},
      {"transpose", "Y = A^T", "dA = dY^T", {{3, 4}}, [](Tape&, V x) { return transpose(x[0]); }},
      {"sum", "y = sum of all a", "da = dy everywhere", {{3, 4}}, [](Tape&, V x) { return sum(x[0]); }},
      {"sum(dim=0)", "y_j = sum_i a_ij  (1xD)", "da_ij = dy_j", {{3, 4}},
       [](Tape&, V x) { return sum(x[0], 0); }},
      {"sum(dim=1)", "y_i = sum_j a_ij  (Nx1)", "da_ij = dy_i", {{3, 4}},
       [](Tape&, V x) { return sum(x[0], 1); }},
      {"mean", "y = sum of all a / n", "da = dy / n", {{3, 4}}, [](Tape&, V x) { return mean(x[0]); }},
      {"mean(dim=0)", "y_j = mean_i a_ij", "da_ij = dy_j / N", {{3, 4}},
       [](Tape&, V x) { return mean(x[0], 0); }},
      {"mean(dim=1)", "y_i = mean_j a_ij", "da_ij = dy_i / D", {{3, 4}},
       [](Tape&, V x) { return mean(x[0], -1); }},
      {"var(dim=0)", "y_j = mean_i (a_ij - m_j)^2", "da_ij = dy_j 2 (a_ij - m_j) / N", {{3, 4}},
       [](Tape&, V x) { return var(x[0], 0); }},
      {"var(dim=1)", "y_i = mean_j (a_ij - m_i)^2", "da_ij = dy_i 2 (a_ij - m_i) / D", {{3, 4}},
       [](Tape&, V x) { return var(x[0], -1); }},
      {"var(dim=1, unbiased)", "y_i = sum_j (a_ij - m_i)^2 / (D-1)", "da_ij = dy_i 2 (a_ij - m_i) / (D-1)",
       {{3, 4}}, [](Tape&, V x) { return var(x[0], -1, true); }},
      {"max(dim=0)", "y_j = max_i a_ij", "da = dy at the arg-max, 0 elsewhere", {{3, 4}},
       [](Tape&, V x) { return max(x[0], 0); }},
      {"max(dim=1)", "y_i = max_j a_ij", "da = dy at the arg-max, 0 elsewhere", {{3, 4}},
       [](Tape&, V x) { return max(x[0], 1); }},
      {"logsumexp(dim=1)", "y_i = m_i + log sum_j exp(a_ij - m_i)", "da_ij = dy_i softmax(a)_ij", {{3, 4}},
       [](Tape&, V x) { return logsumexp(x[0], 1); }},
      {"logsumexp(dim=0)", "y_j = m_j + log sum_i exp(a_ij - m_j)", "da_ij = dy_j softmax(a)_ij", {{3, 4}},
       [](Tape&, V x) { return logsumexp(x[0], 0); }},
      {"layernorm_composed", "y = (x - mean) / sqrt(var + eps) * g + b, per row",
       "derived by the tape from mean, sub, square, add_scalar, sqrt, div, mul, add", {{3, 5}, {1, 5}, {1, 5}},
       [](Tape&, V x) { return layernorm_composed(x[0], x[1], x[2]); }},
      {"layernorm_fused", "y = (x - mean) * rstd * g + b, per row (one node)",
       "dx = rstd (dnorm - mean(dnorm) - norm mean(dnorm norm)), dnorm = dy g; dg = sum dy norm; db = sum dy",
       {{3, 5}, {1, 5}, {1, 5}}, [](Tape&, V x) { return layernorm_fused(x[0], x[1], x[2]); }},
      {"rmsnorm_composed", "y = x / sqrt(mean(x^2) + eps) * g, per row",
       "derived by the tape from square, mean, add_scalar, sqrt, div, mul", {{3, 5}, {1, 5}},
       [](Tape&, V x) { return rmsnorm_composed(x[0], x[1]); }},
      {"rmsnorm_fused", "y = x * rstd * g, per row (one node)",
       "dx = rstd (dnorm - norm mean(dnorm norm)), dnorm = dy g; dg = sum dy norm", {{3, 5}, {1, 5}},
       [](Tape&, V x) { return rmsnorm_fused(x[0], x[1]); }},
      {"batchnorm_composed", "y = (x - mean) / sqrt(var + eps) * g + b, per column (training mode)",
       "derived by the tape from the same primitives along dim 0", {{5, 3}, {1, 3}, {1, 3}},
       [](Tape&, V x) { return batchnorm_composed(x[0], x[1], x[2]); }},
  };
}

}  // namespace

const std::vector<OpCase>& op_table() {
  static const std::vector<OpCase> table = build();
  return table;
}

std::vector<arma::mat> make_inputs(const OpCase& op, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<arma::mat> inputs;
  for (const InputSpec& s : op.inputs) {
    arma::mat m(s.rows, s.cols);
    for (double& v : m) {
      const double r = u(rng);
      switch (s.domain) {
        case Domain::Any: v = -2.0 + 4.0 * r; break;
        case Domain::Positive: v = 0.5 + 1.5 * r; break;
        case Domain::AwayFromZero: v = (u(rng) < 0.5 ? -1.0 : 1.0) * (0.5 + 1.5 * r); break;
      }
    }
    inputs.push_back(std::move(m));
  }
  return inputs;
}

std::string shapes_str(const std::vector<InputSpec>& inputs) {
  std::string s;
  for (const InputSpec& in : inputs) {
    if (!s.empty()) s += ", ";
    s += shape_str(in.rows, in.cols);
  }
  return s;
}

}  // namespace ag
