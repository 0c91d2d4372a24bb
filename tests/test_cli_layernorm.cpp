// `autograd layernorm` and `autograd graph` run as a user runs them: the
// numbers in the output, exit status 2 and one line on stderr for bad input.
#define BOOST_TEST_MODULE cli_layernorm
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/cli_run.h"

namespace fs = std::filesystem;

namespace {

using cli_test::has;
using cli_test::run;
using cli_test::Run;
using cli_test::slurp;

std::size_t lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(seed003_walkthrough_and_backward) {
  const Run r = run("layernorm --input \"3,1,5,7\"");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.err.empty());
  for (const char* part : {"row 1: x = [3, 1, 5, 7]", "= 4\n", "= 5\n", "= [-1, -3, 1, 3]",
                           "= 2.236", "= [-0.4472, -1.342, 0.4472, 1.342]", "row 1: mean 0, std 1",
                           "composed vs fused", "fused vs numeric", "layernorm_fused", "8 nodes", "1 node",
                           "bytes held for backward: composed 136, fused 80", "the true dx is exactly zero"}) {
    BOOST_TEST(has(r.out, part), "missing '" << part << "' in:\n" << r.out);
  }
  // The walk-through in the seeds' order, mean then variance, one line per node.
  BOOST_TEST(r.out.find("  mean  ") < r.out.find("  variance  "));
  BOOST_TEST(r.out.find("  variance  ") < r.out.find("  x - mean  "));
  // The composed tape lists the seeds' eight primitives, in order, after the three leaves.
  std::size_t at = r.out.find("the tape, composed");
  BOOST_REQUIRE(at != std::string::npos);
  for (const char* line : {"3    mean(dim=1)           0 ", "4    var(dim=1)            0 ", "5    sub                   0,3 ",
                           "6    add_scalar c=1e-05    4 ", "7    sqrt                  6 ", "8    div                   5,7 ",
                           "9    mul                   8,1 ", "10   add                   9,2 ", "11 nodes, 136 bytes"}) {
    const std::size_t next = r.out.find(line, at);
    BOOST_TEST(next != std::string::npos, "missing or out of order: '" << line << "' in:\n" << r.out);
    if (next != std::string::npos) at = next;
  }
  BOOST_TEST(!has(r.out, "square"));  // the variance is one var node, not square and mean
}

BOOST_AUTO_TEST_CASE(gamma_beta_precision_and_csv) {
  const fs::path csv = fs::temp_directory_path() / ("ag_cli_ln_out_" + std::to_string(std::random_device()()) + ".csv");
  const Run r = run("layernorm --input \"3,1,5,7\" --gamma 2 --beta 1 --precision 6 --grad-output \"1,0,0,0\""
                    " --output-file '" + csv.string() + "'");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(has(r.out, "[0.105574, -1.68328, 1.89443, 3.68328]"), r.out);
  BOOST_TEST(!has(r.out, "random"));  // dy was given: no footnote
  const std::string text = slurp(csv);
  fs::remove(csv);
  BOOST_TEST(has(text, "quantity,path,row,column,value\n"));
  BOOST_TEST(has(text, "y,fused,1,4,3.6832"));
  BOOST_TEST(has(text, "dbeta,numeric,1,1,1"));
}

BOOST_AUTO_TEST_CASE(rms_mode) {
  const Run r = run("layernorm --rms --input \"3,1,5,7\"");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(has(r.out, "mean(x^2)"));
  BOOST_TEST(has(r.out, "= 21\n"));  // (9 + 1 + 25 + 49) / 4
  BOOST_TEST(has(r.out, "rmsnorm_fused"));
}

BOOST_AUTO_TEST_CASE(bad_input_exits_2_with_one_line) {
  const fs::path empty = fs::temp_directory_path() / ("ag_cli_ln_empty_" + std::to_string(std::random_device()()) + ".csv");
  std::ofstream(empty).close();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--input \"3,1,5,7; 1,2\"", "row 2 has 2 values, expected 4"},
      {"--input \"3,abc,5\"", "'abc' is not a number"},
      {"--input \"3,1,5\" --eps 0", "--eps"},
      {"--input \"3,1,5\" --eps -1e-5", "--eps"},
      {"--input \"3,1,5\" --gamma \"1,2\"", "--gamma has 2 values"},
      {"--input \"3,1,5\" --beta \"1,2,3,4\"", "--beta has 4 values"},
      {"--input \"7\"", "at least 2 values per row"},
      {"--input-file '" + empty.string() + "'", "empty file"},
      {"--input-file /nonexistent/no.csv", "cannot open"},
      {"--input \"3,1,5\" --grad-output \"1,2\"", "output gradient is 1x2"},
      {"--input \"3,1,5\" --precision -1", "--precision"},
      {"--input \"3,1,5\" --output-file /nonexistent/dir/o.csv", "cannot write"},
      {"", "--input"},
  };
  for (const auto& [args, message] : cases) {
    const Run r = run("layernorm " + args);
    BOOST_TEST(r.status == 2, args << " -> exit " << r.status);
    BOOST_TEST(lines(r.err) == 1u, args << " -> stderr:\n" << r.err);
    BOOST_TEST(has(r.err, message), args << " -> stderr: " << r.err);
  }
  fs::remove(empty);
}

BOOST_AUTO_TEST_CASE(graph_writes_dot) {
  const Run composed = run("graph --what layernorm-composed");
  BOOST_TEST(composed.status == 0, composed.err);
  BOOST_TEST(has(composed.out, "digraph tape"));
  BOOST_TEST(has(composed.out, "mean(dim=1)"));
  BOOST_TEST(has(composed.out, "#4 var(dim=1)\\n2x1\\nsaves: #0 (2x4)"), composed.out);
  BOOST_TEST(has(composed.out, "11 nodes, 240 bytes held for backward"), composed.out);  // 8 (3ND + N + D), N=2, D=4
  const Run fused = run("graph --what layernorm-fused --input \"1,2,3\"");
  BOOST_TEST(has(fused.out, "#3 layernorm_fused eps=1e-05\\n1x3"), fused.out);
  BOOST_TEST(has(fused.out, "4 nodes"));
  BOOST_TEST(run("graph --what nonsense").status == 2);
  BOOST_TEST(run("graph --out /nonexistent/dir/g.dot").status == 2);
  BOOST_TEST(run("graph --input \"1,x\"").status == 2);
}

// Ordinary inputs far from scale 1 pass the second-order check: its finite
// differences step relative to each input's scale, not by an absolute 1e-5.
BOOST_AUTO_TEST_CASE(second_order_passes_at_any_ordinary_scale) {
  for (const char* input : {"100,200,300", "0.001,0.002,0.004", "1e4,-3e4,2e4; 5e3,1e4,-2e4", "1e-6,3e-6,-2e-6"}) {
    for (const char* rms : {"", " --rms"}) {
      const Run r = run(std::string("layernorm --order 2 --input \"") + input + "\"" + rms);
      BOOST_TEST(r.status == 0, input << rms << " -> exit " << r.status << ": " << r.err);
      BOOST_TEST(r.err.empty(), input << rms << " -> " << r.err);
      BOOST_TEST(has(r.out, "second order"), r.out);
    }
  }
}

// L ~ 1e20 (or 1e100, the documented limit): a difference of L in beta cannot
// resolve dbeta ~ 1, so the comparison with the numeric path allows for the
// loss's own rounding, and says so; the correct backward is not reported broken.
BOOST_AUTO_TEST_CASE(a_huge_gamma_does_not_report_a_correct_backward) {
  for (const char* gamma : {"1e20", "1e100", "-1e100"}) {
    for (const char* order : {"1", "2"}) {
      const Run r = run(std::string("layernorm --input 1,2,3 --gamma ") + gamma + " --order " + order);
      BOOST_TEST(r.status == 0, gamma << " --order " << order << " -> exit " << r.status << ": " << r.err);
      BOOST_TEST(r.err.empty(), gamma << " --order " << order << " -> " << r.err);
      BOOST_TEST(has(r.out, "(numeric dbeta resolves only to "), r.out);  // and says so
    }
  }
}
