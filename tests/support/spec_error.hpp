// The message of the SpecError a sweep-model call throws (a test failure when it throws none):
// shared by the preset, override, axis, plan and variant tests.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "profiling/sweep/sweep_spec.hpp"

namespace attn::test {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no SpecError thrown";
  return {};
}

}  // namespace attn::test
