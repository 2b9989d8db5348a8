// The reports' JSON text: numbers JSON can hold, null where a value is not finite, strings escaped.
#include <catch2/catch.hpp>

#include "json_text.hpp"

#include <cstdlib>
#include <limits>

TEST_CASE("json: numbers that read back to the same double, null where not finite", "[json]") {
  using relax::json::number;
  CHECK(number(10.0) == "10");
  CHECK(number(1e-5) == "1e-05");
  CHECK(number(0.028989) == "0.028989");
  CHECK(number(-2.5e300) == "-2.5e+300");
  CHECK(number(0.1234567) == "0.1234567");  // six digits (%g) wrote 0.123457
  CHECK(number(0.1) == "0.1");
  for (const double v : {1.0 / 3.0, 2.0 / 3.0, 1e-310, 123456789.0123456789, 0.1 + 0.2})
    CHECK(std::strtod(number(v).c_str(), nullptr) == v);
  CHECK(number(std::numeric_limits<double>::quiet_NaN()) == "null");
  CHECK(number(std::numeric_limits<double>::infinity()) == "null");
  CHECK(number(-std::numeric_limits<double>::infinity()) == "null");
}

TEST_CASE("json: strings quoted, quotes, backslashes and control characters escaped", "[json]") {
  using relax::json::quoted;
  CHECK(quoted("NVIDIA H200") == "\"NVIDIA H200\"");
  CHECK(quoted("") == "\"\"");
  CHECK(quoted("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(quoted("line\nnext\t") == "\"line\\u000anext\\u0009\"");
}
