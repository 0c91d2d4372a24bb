#include "bench/cases.h"

namespace bench {

std::string case_id(const std::string& name, const std::string& shape) { return name + "/" + shape; }

std::vector<Case> all_cases(bool quick) {
  std::vector<Case> cases = bandwidth_cases(quick);
  for (Case& c : norm_cases(quick)) cases.push_back(std::move(c));
  cases.push_back(overhead_case());
  cases.push_back(digits_epoch_case());
  cases.push_back(gpt_step_case(false));
  cases.push_back(gpt_step_case(true));
  for (Case& c : forward_cases()) cases.push_back(std::move(c));
  return cases;
}

}  // namespace bench
