// Boost.Test's implementation and main(), header-only, in one translation
// unit; each test's own file defines BOOST_TEST_MODULE and its cases as usual.
#include <boost/test/included/unit_test.hpp>
