/*
 * batch_source.cpp — uploads and the GatherDesc for each step.
 *
 * `never` and `once` upload their single order once; `every-epoch` uploads at begin_epoch, the
 * only host-to-device copy of an epoch.
 */
#include "trainer/data/batch_source.h"

#include <algorithm>

#include "common/check.h"

namespace sweep::trainer {

GatherFactors gather_factors(const Dataset& data, const ChannelStats& stats) {
  if (stats.scale != input_scale(data))
    throw Error(data.source + ": normalisation statistics taken at scale " +
                std::to_string(stats.scale) + " for data of scale " +
                std::to_string(input_scale(data)));
  GatherFactors f;
  for (int c = 0; c < data.c; ++c) {
    const float mean = stats.mean_of(c), stdev = stats.stdev_of(c);
    f.center.push_back(data.is_float() ? mean : 0.f);
    f.scale.push_back(data.is_float() ? 1.f / stdev : 1.f / (255.f * stdev));
    f.shift.push_back(data.is_float() ? 0.f : -mean / stdev);
  }
  return f;
}

BatchSource::BatchSource(Backend& backend, const Dataset& data, const ChannelStats& norm, int batch,
                         ShuffleMode shuffle, std::uint64_t seed, const AugmentSpec& augment,
                         bool for_training, const DeviceDataset* uploaded)
    : backend_(backend),
      size_(data.size()),
      batch_(batch),
      shuffle_(shuffle),
      seed_(seed),
      for_training_(for_training) {
  if (batch < 1)
    throw Error("training.batch_size must be at least 1, not " + std::to_string(batch));
  if (data.c < 1) throw Error(data.source + ": samples have no channels");
  if (augment.translate < 0 || augment.crop_padding < 0)
    throw Error("data.augment: translate and crop_padding must not be negative");
  if (!uploaded) uploaded = &own_.emplace(backend, data);
  order_ = DeviceBuffer(backend, std::size_t(size_) * sizeof(std::int32_t));
  desc_.c = data.c;
  desc_.h = data.h;
  desc_.w = data.w;
  desc_.images = data.is_float() ? nullptr : uploaded->images();
  desc_.features = data.is_float() ? uploaded->features() : nullptr;
  desc_.labels = data.is_regression() ? nullptr : uploaded->labels();
  desc_.targets = data.is_regression() ? uploaded->targets() : nullptr;
  GatherFactors f = gather_factors(data, norm);
  std::vector<float> all = f.center;
  all.insert(all.end(), f.scale.begin(), f.scale.end());
  all.insert(all.end(), f.shift.begin(), f.shift.end());
  factors_ = DeviceBuffer(backend, all.size() * sizeof(float));
  backend.copy_to_device(factors_.as<void>(), all.data(), factors_.bytes());
  desc_.center = factors_.f();
  desc_.scale = factors_.f() + data.c;
  desc_.shift = factors_.f() + 2 * data.c;
  desc_.flip = augment.flip;
  desc_.max_shift = std::max(augment.translate, augment.crop_padding);
  desc_.seed = seed;
  if (shuffle_ == ShuffleMode::never) begin_epoch(0);
}

void BatchSource::begin_epoch(int epoch) {
  // never / once: the same order every epoch, uploaded the first time (whichever epoch a resumed
  // run starts at).
  if (shuffle_ != ShuffleMode::every_epoch && order_uploaded_) return;
  const std::vector<std::int32_t> order = epoch_order(size_, shuffle_, seed_, epoch);
  if (!order.empty())
    backend_.copy_to_device(order_.as<void>(), order.data(), order.size() * sizeof(std::int32_t));
  order_uploaded_ = true;
}

std::int64_t BatchSource::batches_per_epoch() const {
  const std::int64_t full = size_ / batch_;
  const std::int64_t rest = size_ % batch_;
  if (!for_training_) return full + (rest > 0 ? 1 : 0);
  return full + (rest > 1 || (full == 0 && rest == 1) ? 1 : 0);
}

int BatchSource::batch_size_at(std::int64_t batch_index) const {
  const std::int64_t start = batch_index * batch_;
  return static_cast<int>(std::min<std::int64_t>(batch_, size_ - start));
}

int BatchSource::gather(std::int64_t batch_index, std::uint64_t step, bool augment, float* x,
                        void* y) {
  return gather_part(batch_index, 0, batch_size_at(batch_index), step, augment, x, y);
}

int BatchSource::gather_part(std::int64_t batch_index, int begin, int count, std::uint64_t step,
                             bool augment, float* x, void* y) {
  if (begin < 0 || count < 0 || begin + count > batch_size_at(batch_index))
    throw Error("gather: rows " + std::to_string(begin) + "+" + std::to_string(count) +
                " outside batch " + std::to_string(batch_index));
  GatherDesc d = desc_;
  d.batch = count;
  d.first_sample = begin;
  d.indices = order_.as<std::int32_t>() + batch_index * batch_ + begin;
  d.step = step;
  if (!augment) {
    d.flip = false;
    d.max_shift = 0;
  }
  backend_.gather_batch(d, x, y);
  return d.batch;
}

}  // namespace sweep::trainer
