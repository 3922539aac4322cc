/*
 * regression_data.h — the regression set the training tests run on: the synthetic one with
 * data.task regression (float features, y = 2 + w . x + noise), 1,024 training and 256 test rows
 * of 8 features, on the CPU and the GPU alike.
 */
#pragma once

#include "trainer/train_config.h"

namespace sweep::trainer::test {

inline DataSpec synthetic_regression_data() {
  DataSpec d;
  d.dataset = DatasetKind::synthetic;
  d.task = Task::regression;
  d.synthetic.train_size = 1024;
  d.synthetic.test_size = 256;
  d.synthetic.channels = 8;
  d.synthetic.height = 1;
  d.synthetic.width = 1;
  return d;
}

}  // namespace sweep::trainer::test
