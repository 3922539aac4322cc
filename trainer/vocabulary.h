/*
 * vocabulary.h — every training option that takes one value of a list: its enum and its words.
 *
 * The trainer owns its vocabulary: TrainConfig holds these enums, and the YAML reader
 * (sweep/config) reads the words from the tables below, so a value is spelled in exactly one
 * place. Adding a value is adding an enumerator and its row; a test walks every table both ways
 * (tests/trainer/vocabulary_test.cpp), and the config round-trip test fails for a value the
 * writer cannot write back.
 *
 *   std::optional<OptimizerKind> o = parse_word<OptimizerKind>("adam");   // OptimizerKind::adam
 *   std::string_view text = name_of(Precision::bf16);              // "bf16"
 *   std::vector<std::string> all = word_list<ScheduleType>();      // fixed, piecewise, ...
 */
#pragma once

#include "common/words.h"

namespace sweep::trainer {

using sweep::name_of;
using sweep::parse_word;
using sweep::Word;
using sweep::word_list;
using sweep::Words;
using sweep::words_text;

enum class DatasetKind { fashion_mnist, mnist, cifar10, synthetic, folder, numpy, csv };
enum class Validation { test, holdout, none };
enum class ShuffleMode { every_epoch, once, never };
enum class Preset { lenet, convnet, mlp, resnet, none };  // none: the model is model.layers
enum class OptimizerKind { sgdm, adam, rmsprop };
enum class ScheduleType { fixed, piecewise, multistep, inv, exp, poly, cosine };
enum class MonitorMetric { val_loss, val_accuracy, train_loss };
enum class OutputNetwork { best, last };
enum class Precision { fp32, tf32, bf16 };
enum class Activation { relu, none };  // after a residual block's sum
// A folder data set's images brought to image_size (trainer/data/image_resize.h): stretch
// (bilinear to H x W), crop (shorter side fitted, centre cut), pad (longer side fitted, centred
// on zeros).
enum class ResizeMode { stretch, crop, pad };
enum class OnBadFile { error, skip };  // a folder data set's undecodable file: stop, or leave out
// A numpy data set's 4-D x: (N, C, H, W) or (N, H, W, C).
enum class Layout { nchw, nhwc };
// What the labels are: class labels 0..K-1 (cross-entropy) or float targets (mean squared error).
enum class Task { classification, regression };

// The tables (common/words.h), found by argument type: name_of(Precision::bf16) == "bf16".
Words<DatasetKind> words_of(DatasetKind);
Words<Validation> words_of(Validation);
Words<ShuffleMode> words_of(ShuffleMode);
Words<Preset> words_of(Preset);
Words<OptimizerKind> words_of(OptimizerKind);
Words<ScheduleType> words_of(ScheduleType);
Words<MonitorMetric> words_of(MonitorMetric);
Words<OutputNetwork> words_of(OutputNetwork);
Words<Precision> words_of(Precision);
Words<Activation> words_of(Activation);
Words<ResizeMode> words_of(ResizeMode);
Words<OnBadFile> words_of(OnBadFile);
Words<Layout> words_of(Layout);
Words<Task> words_of(Task);

}  // namespace sweep::trainer
