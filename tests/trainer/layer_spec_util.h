// layer_spec_util.h — a model.layers entry written in one line, for the training-loop tests.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "trainer/layer_table.h"
#include "trainer/train_config.h"

namespace sweep::trainer::test {

inline LayerSpec layer(const std::string& type, std::map<std::string, double> num = {}) {
  LayerSpec l;
  l.type = find_layer(type)->kind;
  l.num = std::move(num);
  return l;
}

}  // namespace sweep::trainer::test
