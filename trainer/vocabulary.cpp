/*
 * vocabulary.cpp — the word tables. The first row of a value is its name, the rest aliases.
 */
#include "trainer/vocabulary.h"

#include <iterator>

namespace sweep::trainer {

namespace {

constexpr Word<DatasetKind> kDatasets[] = {{DatasetKind::fashion_mnist, "fashion-mnist"},
                                           {DatasetKind::mnist, "mnist"},
                                           {DatasetKind::cifar10, "cifar10"},
                                           {DatasetKind::cifar10, "cifar-10"},
                                           {DatasetKind::synthetic, "synthetic"},
                                           {DatasetKind::folder, "folder"},
                                           {DatasetKind::numpy, "numpy"},
                                           {DatasetKind::csv, "csv"}};
constexpr Word<Validation> kValidations[] = {
    {Validation::test, "test"}, {Validation::holdout, "holdout"}, {Validation::none, "none"}};
constexpr Word<ShuffleMode> kShuffles[] = {{ShuffleMode::every_epoch, "every-epoch"},
                                           {ShuffleMode::once, "once"},
                                           {ShuffleMode::never, "never"}};
constexpr Word<Preset> kPresets[] = {{Preset::lenet, "lenet"},
                                     {Preset::convnet, "convnet"},
                                     {Preset::mlp, "mlp"},
                                     {Preset::resnet, "resnet"}};
constexpr Word<OptimizerKind> kOptimizers[] = {{OptimizerKind::sgdm, "sgdm"},
                                               {OptimizerKind::sgdm, "sgd"},
                                               {OptimizerKind::adam, "adam"},
                                               {OptimizerKind::rmsprop, "rmsprop"}};
constexpr Word<ScheduleType> kSchedules[] = {{ScheduleType::fixed, "fixed"},
                                             {ScheduleType::piecewise, "piecewise"},
                                             {ScheduleType::multistep, "multistep"},
                                             {ScheduleType::inv, "inv"},
                                             {ScheduleType::exp, "exp"},
                                             {ScheduleType::poly, "poly"},
                                             {ScheduleType::cosine, "cosine"}};
constexpr Word<MonitorMetric> kMonitors[] = {{MonitorMetric::val_loss, "val_loss"},
                                             {MonitorMetric::val_accuracy, "val_accuracy"},
                                             {MonitorMetric::train_loss, "train_loss"}};
constexpr Word<OutputNetwork> kOutputs[] = {{OutputNetwork::best, "best"},
                                            {OutputNetwork::last, "last"}};
constexpr Word<Precision> kPrecisions[] = {
    {Precision::fp32, "fp32"}, {Precision::tf32, "tf32"}, {Precision::bf16, "bf16"}};
constexpr Word<Activation> kActivations[] = {{Activation::relu, "relu"},
                                             {Activation::none, "none"}};
constexpr Word<ResizeMode> kResizes[] = {
    {ResizeMode::stretch, "stretch"}, {ResizeMode::crop, "crop"}, {ResizeMode::pad, "pad"}};
constexpr Word<OnBadFile> kOnBadFiles[] = {{OnBadFile::error, "error"}, {OnBadFile::skip, "skip"}};
constexpr Word<Layout> kLayouts[] = {{Layout::nchw, "nchw"}, {Layout::nhwc, "nhwc"}};
constexpr Word<Task> kTasks[] = {{Task::classification, "classification"},
                                 {Task::regression, "regression"}};

}  // namespace

Words<DatasetKind> words_of(DatasetKind) { return {kDatasets, std::size(kDatasets)}; }
Words<Validation> words_of(Validation) { return {kValidations, std::size(kValidations)}; }
Words<ShuffleMode> words_of(ShuffleMode) { return {kShuffles, std::size(kShuffles)}; }
// Preset::none has no word: it is what an absent model.preset with model.layers means.
Words<Preset> words_of(Preset) { return {kPresets, std::size(kPresets)}; }
Words<OptimizerKind> words_of(OptimizerKind) { return {kOptimizers, std::size(kOptimizers)}; }
Words<ScheduleType> words_of(ScheduleType) { return {kSchedules, std::size(kSchedules)}; }
Words<MonitorMetric> words_of(MonitorMetric) { return {kMonitors, std::size(kMonitors)}; }
Words<OutputNetwork> words_of(OutputNetwork) { return {kOutputs, std::size(kOutputs)}; }
Words<Precision> words_of(Precision) { return {kPrecisions, std::size(kPrecisions)}; }
Words<Activation> words_of(Activation) { return {kActivations, std::size(kActivations)}; }
Words<ResizeMode> words_of(ResizeMode) { return {kResizes, std::size(kResizes)}; }
Words<OnBadFile> words_of(OnBadFile) { return {kOnBadFiles, std::size(kOnBadFiles)}; }
Words<Layout> words_of(Layout) { return {kLayouts, std::size(kLayouts)}; }
Words<Task> words_of(Task) { return {kTasks, std::size(kTasks)}; }

}  // namespace sweep::trainer
