// Every message survives encode → decode field for field; a damaged one is refused, never read
// out of bounds; frames keep their messages' order.
#include "cluster/messages.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/check.h"

namespace sweep::cluster {
namespace {

using scheduler::Device;

TEST(Messages, RunRoundTripsEveryField) {
  cluster::Run run;
  run.spec.id = 42;
  run.spec.number = 7;
  run.spec.name = "lr=0.1";
  run.spec.params = {{"training.learning_rate", 0.1}, {"model", {{"width", 32}}}};
  run.spec.timeout_s = 12.5;
  run.spec.gpus = 2;
  run.spec.placement = {Device::cuda(1), Device::cuda(3)};
  run.kind = "sweep.trainer";
  run.payload = {{"number", 7}, {"resume", true}};
  run.files = {{"checkpoint.bin", std::string("\0\1\2binary", 9)}, {"sub/x.txt", "x"}};
  const Message back = decode(encode(run));
  const cluster::Run& r = std::get<cluster::Run>(back);
  EXPECT_EQ(r.spec.id, 42);
  EXPECT_EQ(r.spec.number, 7);
  EXPECT_EQ(r.spec.name, "lr=0.1");
  EXPECT_EQ(r.spec.params, run.spec.params);
  EXPECT_EQ(r.spec.timeout_s, 12.5);
  EXPECT_EQ(r.spec.gpus, 2);
  EXPECT_EQ(r.spec.placement, run.spec.placement);
  EXPECT_EQ(r.kind, "sweep.trainer");
  EXPECT_EQ(r.payload, run.payload);
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[0].bytes, run.files[0].bytes);
  EXPECT_EQ(r.files[1].name, "sub/x.txt");
}

TEST(Messages, MetricKeepsNonFiniteValuesAndEveryField) {
  Metric m{3, {"val_loss", std::nan(""), 64, 2, 1700000000.25, 1.5}};
  const Metric back = std::get<Metric>(decode(encode(m)));
  EXPECT_EQ(back.trial_id, 3);
  EXPECT_EQ(back.point.name, "val_loss");
  EXPECT_TRUE(std::isnan(back.point.value));
  EXPECT_EQ(back.point.step, 64);
  EXPECT_EQ(back.point.epoch, 2);
  EXPECT_EQ(back.point.wall_time, 1700000000.25);
  EXPECT_EQ(back.point.epoch_position, 1.5);
}

TEST(Messages, TheSmallMessagesRoundTrip) {
  Hello h{"node07", 1, 4, 8, true, 1234};
  const Hello hb = std::get<Hello>(decode(encode(h)));
  EXPECT_EQ(hb.hostname, "node07");
  EXPECT_EQ(hb.local_rank, 1);
  EXPECT_EQ(hb.local_size, 4);
  EXPECT_EQ(hb.cuda_devices, 8);
  EXPECT_TRUE(hb.cuda_built);
  EXPECT_EQ(hb.pid, 1234);

  Open o{{Device::cpu(), Device::cuda(2)}, 3, 2};
  const Open ob = std::get<Open>(decode(encode(o)));
  EXPECT_EQ(ob.devices, o.devices);
  EXPECT_EQ(ob.cpu_slots, 3);
  EXPECT_EQ(ob.trials_per_gpu, 2);

  const Stop sb = std::get<Stop>(decode(encode(Stop{5, scheduler::StopKind::interrupt, "Ctrl-C"})));
  EXPECT_EQ(sb.kind, scheduler::StopKind::interrupt);
  EXPECT_EQ(sb.reason, "Ctrl-C");

  Finished f{9, {TrialState::stopped_early, "asha rung 1", {{"epochs_completed", 1}}}};
  const Finished fb = std::get<Finished>(decode(encode(f)));
  EXPECT_EQ(fb.outcome.state, TrialState::stopped_early);
  EXPECT_EQ(fb.outcome.message, "asha rung 1");
  EXPECT_EQ(fb.outcome.summary, f.outcome.summary);

  EXPECT_TRUE(std::holds_alternative<Heartbeat>(decode(encode(Heartbeat{}))));
  EXPECT_TRUE(std::holds_alternative<Shutdown>(decode(encode(Shutdown{}))));
  EXPECT_EQ(std::get<Log>(decode(encode(Log{1, "epoch 1"}))).line, "epoch 1");
  EXPECT_EQ(std::get<Progress>(decode(encode(Progress{1, 0.5, "epoch 1/2"}))).text, "epoch 1/2");
  EXPECT_EQ(std::get<File>(decode(encode(File{1, {"a", "bytes"}}))).file.bytes, "bytes");
}

TEST(Messages, EveryTruncationOfAMessageIsRefused) {
  cluster::Run run;
  run.spec.id = 1;
  run.spec.params = {{"a", 1}};
  run.kind = "k";
  run.payload = {{"p", 2}};
  run.files = {{"f", "xyz"}};
  const std::string bytes = encode(run);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut)
    EXPECT_THROW(decode(std::string_view(bytes).substr(0, cut)), Error) << "cut at " << cut;
  EXPECT_THROW(decode(bytes + "x"), Error);  // bytes after its end
}

TEST(Messages, AnUnknownTypeOrWordIsRefusedByName) {
  EXPECT_THROW(decode(std::string(1, char(99))), Error);
  std::string stop = encode(Stop{1, scheduler::StopKind::cancel, ""});
  const auto at = stop.find("cancel");
  ASSERT_NE(at, std::string::npos);
  stop.replace(at, 6, "cancal");
  try {
    decode(stop);
    FAIL() << "a damaged stop kind was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cancal"), std::string::npos) << e.what();
  }
}

TEST(Messages, AFrameKeepsItsMessagesInOrder) {
  std::string frame;
  for (int i = 0; i < 5; ++i) append_to_frame(frame, encode(Log{i, "line " + std::to_string(i)}));
  std::vector<std::int64_t> ids;
  for_each_in_frame(frame,
                    [&](std::string_view m) { ids.push_back(std::get<Log>(decode(m)).trial_id); });
  EXPECT_EQ(ids, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_THROW(for_each_in_frame(std::string_view(frame).substr(0, frame.size() - 1),
                                 [](std::string_view) {}),
               Error);
}

}  // namespace
}  // namespace sweep::cluster
