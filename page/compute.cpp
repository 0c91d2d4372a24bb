#include <exception>
#include <string>
#include <vector>

#include "page/views.h"

namespace page {

std::string compute(const std::string& hash, std::vector<double>* store) {
  Report report;
  try {
    const Request request = parse_request(hash);
    forward_views(request, report);
    backward_views(request, report);
    bool equal_row = false;
    for (arma::uword i = 0; i < request.x.n_rows; ++i)
      equal_row = equal_row || (request.x.n_cols > 1 && arma::all(request.x.row(i) == request.x(i, 0)));
    if (equal_row) {
      report.labels["note"] = "a row whose features are all equal: the variance is 0, x - mean is 0, so x̂ = 0 (eps keeps "
                              "the division finite) and y = beta";
    }
  } catch (const std::exception& e) {
    report = Report();
    report.error = e.what();
  }
  return report.json(store);
}

}  // namespace page
