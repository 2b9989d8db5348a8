#pragma once
// JSON text for the reports the driver and the benchmark tools write: numbers as JSON allows
// them (it has no NaN or infinity: a solve that diverged writes null where its residual was
// not finite) and strings escaped.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace relax::json {

//! `v` as a JSON number, as few digits as read back to the same double (15, else 17), or `null`
//! where it is not finite.
inline std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", v);
  if (std::strtod(text, nullptr) != v) std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

//! `s` as a JSON string, quotes included: `"` and `\` escaped, control characters as \u00XX.
inline std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace relax::json
