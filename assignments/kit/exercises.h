// The four exercises, each graded from the student's backward alone: the
// forward (forwards.h), the cases and the checks live here, apart from the
// stubs and the reference solutions.
#pragma once

#include <functional>

#include "assignments/kit/grader.h"
#include "assignments/layernorm/layernorm.h"
#include "assignments/matmul_bias/matmul_bias.h"
#include "assignments/rmsnorm/rmsnorm.h"
#include "assignments/softmax/softmax.h"

namespace kit {

using SoftmaxBackward = std::function<arma::mat(const arma::mat& y, const arma::mat& dy)>;
using LayerNormBackward =
    std::function<LayerNormGrads(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps)>;
using RMSNormBackward =
    std::function<RMSNormGrads(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps)>;
using LinearBackward = std::function<LinearGrads(const arma::mat& X, const arma::mat& W, const arma::mat& dY)>;

GradeReport grade_softmax(const SoftmaxBackward& backward);
GradeReport grade_layernorm(const LayerNormBackward& backward);
GradeReport grade_rmsnorm(const RMSNormBackward& backward);
GradeReport grade_matmul_bias(const LinearBackward& backward);

}  // namespace kit
