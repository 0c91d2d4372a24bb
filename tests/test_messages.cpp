// The engine's text for messages and programs (autograd/text.h): the one JSON
// string escaper, the edit distance and the "did you mean" built on it.
#define BOOST_TEST_MODULE messages
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "autograd/text.h"

BOOST_AUTO_TEST_CASE(json_string_escapes_quotes_backslashes_and_every_control) {
  BOOST_TEST(ag::json_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  BOOST_TEST(ag::json_string("line\nnext\ttab") == "\"line\\nnext\\ttab\"");
  BOOST_TEST(ag::json_string(std::string("nul\0bell\a del\x7f", 14)) == "\"nul\\u0000bell\\u0007 del\\u007f\"");
  BOOST_TEST(ag::json_string("x̂ γ") == "\"x̂ γ\"");  // UTF-8 passes as it is
}

BOOST_AUTO_TEST_CASE(edit_distance_counts_insertions_deletions_and_substitutions) {
  BOOST_TEST(ag::edit_distance("", "") == 0u);
  BOOST_TEST(ag::edit_distance("", "abc") == 3u);
  BOOST_TEST(ag::edit_distance("gama", "gamma") == 1u);
  BOOST_TEST(ag::edit_distance("kitten", "sitting") == 3u);
  BOOST_TEST(ag::edit_distance("tanh", "tahn") == 2u);  // a swap is two edits
}

BOOST_AUTO_TEST_CASE(join_puts_the_separator_between_parts_only) {
  BOOST_TEST(ag::join({}, ", ") == "");
  BOOST_TEST(ag::join({"a"}, ", ") == "a");
  BOOST_TEST(ag::join({"a", "", "c"}, ", ") == "a, , c");
}

BOOST_AUTO_TEST_CASE(did_you_mean_names_the_nearest_within_the_edits_or_nothing) {
  const std::vector<std::string> fields = {"x", "gamma", "beta", "eps"};
  BOOST_TEST(ag::did_you_mean("gama", fields) == " (did you mean gamma?)");
  BOOST_TEST(ag::did_you_mean("bta", fields) == " (did you mean beta?)");
  BOOST_TEST(ag::did_you_mean("epsilon", fields) == "");  // 4 edits from eps: no guess
  BOOST_TEST(ag::did_you_mean("epsilon", fields, 4) == " (did you mean eps?)");
  BOOST_TEST(ag::did_you_mean("anything", {}) == "");
  // Ties go to the first listed.
  BOOST_TEST(ag::did_you_mean("ab", {"aa", "bb"}, 1) == " (did you mean aa?)");
}
