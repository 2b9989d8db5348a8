#pragma once
//! \file
//! Exceptions for bad input. They name the argument, the value received and what was expected,
//! so a user can tell from the message alone which call to fix.

#include <sstream>
#include <stdexcept>
#include <string>

namespace relax {

//! Thrown when an argument is out of its valid range. `argument()` names the offending argument.
class invalid_argument : public std::invalid_argument {
 public:
  //! \param argument name of the argument as the user wrote it (a parameter or a CLI option)
  //! \param value    the value received, as text
  //! \param expected what a valid value looks like
  invalid_argument(std::string argument, std::string value, std::string expected)
      : std::invalid_argument("relax: invalid " + argument + " = " + value + ": expected " +
                              expected),
        argument_(std::move(argument)),
        value_(std::move(value)),
        expected_(std::move(expected)) {}

  //! The name of the argument that was rejected.
  const std::string& argument() const noexcept { return argument_; }
  //! The rejected value, as text.
  const std::string& value() const noexcept { return value_; }
  //! What a valid value looks like.
  const std::string& expected() const noexcept { return expected_; }

 private:
  std::string argument_;
  std::string value_;
  std::string expected_;
};

//! Thrown when something the call needs is not available here (no GPU, no cooperative launch).
class unavailable_error : public std::runtime_error {
 public:
  explicit unavailable_error(const std::string& what) : std::runtime_error("relax: " + what) {}
};

//! A kernel that runs a loop on the device stopped without finishing it (a grid barrier that
//! did not complete within its time limit); the message names the kernel and what to check.
class device_loop_error : public std::runtime_error {
 public:
  explicit device_loop_error(const std::string& what) : std::runtime_error("relax: " + what) {}
};

namespace detail {

template <class T>
std::string to_text(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

//! Throws `relax::invalid_argument` unless `ok`.
template <class T>
void require(bool ok, const char* argument, const T& value, const char* expected) {
  if (!ok) throw invalid_argument(argument, to_text(value), expected);
}

}  // namespace detail
}  // namespace relax
