// The trainer's vocabulary and layer table: every value has a name, every name reads back as its
// value, aliases read as the value they stand for, and every layer kind has one row whose
// arguments are unique and whose defaults are valid values of their own kind.
#include "trainer/vocabulary.h"

#include <gtest/gtest.h>

#include <set>

#include "trainer/layer_table.h"

namespace sweep::trainer {
namespace {

template <class E>
void expect_round_trip(std::initializer_list<E> values) {
  std::set<std::string_view> names;
  for (E value : values) {
    const std::string_view name = name_of(value);
    ASSERT_FALSE(name.empty()) << "a value without a name";
    EXPECT_TRUE(names.insert(name).second) << name << " names two values";
    EXPECT_EQ(parse_word<E>(name), value) << name;
  }
  for (const std::string& word : word_list<E>()) EXPECT_TRUE(parse_word<E>(word)) << word;
  EXPECT_FALSE(parse_word<E>("no-such-word"));
}

TEST(Vocabulary, EveryValueHasANameThatReadsBack) {
  expect_round_trip({DatasetKind::fashion_mnist, DatasetKind::mnist, DatasetKind::cifar10,
                     DatasetKind::synthetic, DatasetKind::folder});
  expect_round_trip({Validation::test, Validation::holdout, Validation::none});
  expect_round_trip({ShuffleMode::every_epoch, ShuffleMode::once, ShuffleMode::never});
  expect_round_trip({Preset::lenet, Preset::convnet, Preset::mlp, Preset::resnet});
  expect_round_trip({OptimizerKind::sgdm, OptimizerKind::adam, OptimizerKind::rmsprop});
  expect_round_trip({ScheduleType::fixed, ScheduleType::piecewise, ScheduleType::multistep,
                     ScheduleType::inv, ScheduleType::exp, ScheduleType::poly,
                     ScheduleType::cosine});
  expect_round_trip(
      {MonitorMetric::val_loss, MonitorMetric::val_accuracy, MonitorMetric::train_loss});
  expect_round_trip({OutputNetwork::best, OutputNetwork::last});
  expect_round_trip({Precision::fp32, Precision::tf32, Precision::bf16});
  expect_round_trip({Activation::relu, Activation::none});
  expect_round_trip({ResizeMode::stretch, ResizeMode::crop, ResizeMode::pad});
  expect_round_trip({OnBadFile::error, OnBadFile::skip});
}

TEST(Vocabulary, AliasesReadAsTheirValueAndNeverAsAName) {
  EXPECT_EQ(parse_word<DatasetKind>("cifar-10"), DatasetKind::cifar10);
  EXPECT_EQ(name_of(DatasetKind::cifar10), "cifar10");
  EXPECT_EQ(parse_word<OptimizerKind>("sgd"), OptimizerKind::sgdm);
  EXPECT_EQ(name_of(OptimizerKind::sgdm), "sgdm");
  EXPECT_EQ(name_of(Preset::none), "");  // no word: it is what model.layers means
  EXPECT_EQ(words_text<Precision>(), "fp32, tf32, bf16");
}

TEST(LayerTable, EveryKindHasOneRowWithConsistentArguments) {
  std::set<std::string_view> names;
  for (LayerKind kind : {LayerKind::conv, LayerKind::batchnorm, LayerKind::relu, LayerKind::maxpool,
                         LayerKind::avgpool, LayerKind::gap, LayerKind::dense, LayerKind::dropout,
                         LayerKind::flatten, LayerKind::residual}) {
    const LayerDef& def = layer_def(kind);
    EXPECT_EQ(def.kind, kind);
    EXPECT_TRUE(names.insert(def.name).second) << def.name;
    EXPECT_EQ(find_layer(def.name), &def);
    EXPECT_FALSE(def.what.empty()) << def.name;
    std::set<std::string_view> args;
    for (const LayerArg& arg : def.args) {
      EXPECT_TRUE(args.insert(arg.name).second) << def.name << "." << arg.name;
      if (!arg.fallback_arg.empty()) {
        EXPECT_NE(find_arg(def, arg.fallback_arg), nullptr) << def.name << "." << arg.name;
      } else if (arg.kind == ArgKind::activation) {
        EXPECT_TRUE(parse_word<Activation>(arg.fallback_word)) << def.name << "." << arg.name;
      } else if (!arg.required) {
        EXPECT_FALSE(check_arg_value(arg, arg.fallback)) << def.name << "." << arg.name;
      }
    }
    if (!def.shorthand.empty()) {
      EXPECT_NE(find_arg(def, def.shorthand), nullptr) << def.name;
    }
  }
  EXPECT_EQ(layer_table().size(), names.size());
  EXPECT_EQ(find_layer("rleu"), nullptr);
}

TEST(LayerTable, ValuesAreCheckedByKind) {
  const LayerDef& conv = layer_def(LayerKind::conv);
  EXPECT_EQ(check_arg_value(*find_arg(conv, "filters"), 0), "must be >= 1, got 0");
  EXPECT_EQ(check_arg_value(*find_arg(conv, "filters"), 2.5), "must be >= 1, got 2.5");
  EXPECT_FALSE(check_arg_value(*find_arg(conv, "filters"), 16));
  const LayerDef& bn = layer_def(LayerKind::batchnorm);
  EXPECT_EQ(check_arg_value(*find_arg(bn, "eps"), 0), "must be > 0, got 0");
  EXPECT_FALSE(check_arg_value(*find_arg(bn, "momentum"), 1));
  EXPECT_EQ(check_arg_value(*find_arg(layer_def(LayerKind::dropout), "rate"), 1),
            "must be in [0, 1), got 1");
  // A residual block's arguments are a word and a list, never a number.
  const LayerDef& residual = layer_def(LayerKind::residual);
  EXPECT_EQ(residual.shorthand, "layers");
  EXPECT_TRUE(find_arg(residual, "layers")->required);
  EXPECT_EQ(find_arg(residual, "activation")->fallback_word, "relu");
  EXPECT_EQ(check_arg_value(*find_arg(residual, "activation"), 0),
            "must be one of relu, none, got 0");
}

}  // namespace
}  // namespace sweep::trainer
