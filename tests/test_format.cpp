#define BOOST_TEST_MODULE format
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "autograd/error.h"
#include "autograd/format.h"
#include "data/csv.h"

// The one formatting header (autograd/format.h) and the one error hierarchy (autograd/error.h).

BOOST_AUTO_TEST_CASE(format_number_prints_as_a_stream_does) {
  BOOST_TEST(ag::format_number(0.1) == "0.1");
  BOOST_TEST(ag::format_number(1e-5) == "1e-05");
  BOOST_TEST(ag::format_number(1.0 / 3.0) == "0.333333");
  BOOST_TEST(ag::format_number(1.0 / 3.0, 3) == "0.333");
  BOOST_TEST(ag::format_number(-std::numeric_limits<double>::infinity()) == "-inf");
}

BOOST_AUTO_TEST_CASE(exact_number_reads_back_as_the_same_double) {
  for (double v : {0.1, 1.0 / 3.0, -2.5e-300, 6.02214076e23, 0.0}) {
    BOOST_TEST(std::strtod(ag::exact_number(v).c_str(), nullptr) == v);
  }
  BOOST_TEST(ag::exact_number(0.1) == "0.10000000000000001");
  BOOST_TEST(ag::exact_number(std::nan("")) == "nan");
  BOOST_TEST(ag::exact_number(-std::nan("")) == "nan");
}

BOOST_AUTO_TEST_CASE(one_line_joins_the_lines_of_a_message) {
  BOOST_TEST(ag::one_line("a\nb\n") == "a b");
  BOOST_TEST(ag::one_line("report:\n  x\n  y \n\n") == "report:   x   y");
  BOOST_TEST(ag::one_line("one line") == "one line");
  BOOST_TEST(ag::one_line(" \n ").empty());
}

// Before: no such function; text from a file reached the terminal raw.
BOOST_AUTO_TEST_CASE(printable_escapes_controls_and_invalid_utf8_and_keeps_text) {
  BOOST_TEST(ag::printable("plain, text: 1.5e-3 (ok)") == "plain, text: 1.5e-3 (ok)");
  BOOST_TEST(ag::printable("\x1b]0;title\x07\x1b[2J") == "\\x1b]0;title\\x07\\x1b[2J");  // retitle, clear
  BOOST_TEST(ag::printable(std::string("a\0b\r\n\t\x7f", 7)) == "a\\x00b\\x0d\\x0a\\x09\\x7f");
  BOOST_TEST(ag::printable("\xc2\x9b" "2J \xc2\x85") == "\\xc2\\x9b2J \\xc2\\x85");  // C1: CSI, NEL
  BOOST_TEST(ag::printable("caf\xc3\xa9 \xce\xbb \xe2\x88\x82 \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xce\xbb \xe2\x88\x82 \xf0\x9f\x98\x80");
  BOOST_TEST(ag::printable("\xc2\xa0") == "\xc2\xa0");  // U+00A0, the first after the C1 block
  // Invalid UTF-8: a lone continuation byte, a cut sequence, an overlong '/', a surrogate, 0xff.
  BOOST_TEST(ag::printable("\x80") == "\\x80");
  BOOST_TEST(ag::printable("\xe2\x88") == "\\xe2\\x88");
  BOOST_TEST(ag::printable("\xc0\xaf") == "\\xc0\\xaf");
  BOOST_TEST(ag::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");
  BOOST_TEST(ag::printable("\xf4\x90\x80\x80\xff") == "\\xf4\\x90\\x80\\x80\\xff");
}

// What the command line's exit statuses rest on: a DataError (status 2) is
// an ag::Error, so "catch ag::Error" catches every error the library throws.
BOOST_AUTO_TEST_CASE(a_data_error_is_an_ag_error) {
  bool caught = false;
  try {
    ag::parse_matrix("1,x", "--input");
  } catch (const ag::Error& e) {
    caught = dynamic_cast<const ag::DataError*>(&e) != nullptr;
  }
  BOOST_TEST(caught);
}
