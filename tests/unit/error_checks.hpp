// Checks on shoal::Error messages, shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "shoal/core/error.hpp"

namespace shoal::test {

/// The message of the shoal::Error that `fn` throws; fails the test if it throws nothing.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected shoal::Error";
  return {};
}

/// `haystack` contains `needle`, with both in the failure message.
inline ::testing::AssertionResult Has(const std::string& haystack, std::string_view needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "message: " << haystack << "\nlacks:   " << needle;
}

}  // namespace shoal::test
