/*
 * channels_last_ops.cpp — the channels-last group's questions asked of any backend: which storage
 * it keeps, which convolutions read and write channels-last, its group for a stored tensor.
 */
#include "trainer/backend/channels_last_ops.h"

#include "common/check.h"
#include "trainer/backend/backend.h"

namespace sweep::trainer {

Storage kept_storage(const Backend& b) {
  const ChannelsLastOps* ops = b.channels_last_ops();
  return ops ? ops->nhwc_storage() : Storage::fp32_nchw;
}

bool conv_reads_nhwc(const Backend& b, const ConvGeom& g) {
  const ChannelsLastOps* ops = b.channels_last_ops();
  return ops && ops->conv_reads_nhwc(g);
}

bool conv_writes_nhwc(const Backend& b, const ConvGeom& g) {
  const ChannelsLastOps* ops = b.channels_last_ops();
  return ops && ops->conv_writes_nhwc(g);
}

ChannelsLastOps& channels_last(Backend& b) {
  ChannelsLastOps* ops = b.channels_last_ops();
  if (!ops) throw Error("internal: a channels-last tensor on " + b.name() + ", which keeps none");
  return *ops;
}

}  // namespace sweep::trainer
