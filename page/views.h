// The page's views, each filling its part of the Report from the engine:
// forward steps (LayerNorm, RMSNorm, BatchNorm train and eval) and the
// backward of row 1 (tape, fused against composed, finite differences,
// Jacobian, saved bytes). A view that cannot run on these inputs leaves a
// message under its name in report.errors instead of numbers.
#pragma once

#include "page/report.h"
#include "page/request.h"

namespace page {

void forward_views(const Request& request, Report& report);
void backward_views(const Request& request, Report& report);

// The page's whole answer for one URL hash, as JSON (what the page and the
// native expected-values program print); with `store`, its numbers go there
// as doubles (Report::json).
std::string compute(const std::string& hash, std::vector<double>* store = nullptr);

// The page's second part (page/model.cpp): the trained GPT reading a word,
// for a hash such as "sample=1&word=em".
std::string compute_model(const std::string& hash);

}  // namespace page
