/*
 * recorder.h — a TrainCallback that keeps every iteration and validation it sees, and stops the
 * run when `on_iter` says so: what the training-loop tests compare runs by.
 */
#pragma once

#include <functional>
#include <vector>

#include "trainer/train.h"

namespace sweep::trainer::test {

struct Recorder : TrainCallback {
  std::vector<IterationInfo> iterations;
  std::vector<ValidationInfo> validations;
  std::function<bool(const IterationInfo&)> on_iter = [](const IterationInfo&) { return true; };
  bool on_iteration(const IterationInfo& i) override {
    iterations.push_back(i);
    return on_iter(i);
  }
  bool on_validation(const ValidationInfo& v) override {
    validations.push_back(v);
    return true;
  }
};

}  // namespace sweep::trainer::test
