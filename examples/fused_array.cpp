/*
 * fused_array.cpp — sweep as a C++ library: four LeNets that differ only in learning rate and
 * seed trained as one fused array (trainer/array/train_array.h) on one device, each reporting as
 * it ends. On a GPU the four run side by side; each gets the numbers it would get alone.
 *
 *   build/examples/fused_array            # synthetic data on the CPU, a few seconds
 *   build/examples/fused_array cuda       # on GPU 0
 */
#include <cstdio>
#include <string>
#include <vector>

#include "trainer/array/fusion.h"
#include "trainer/array/train_array.h"

using namespace sweep;

int main(int argc, char** argv) {
  trainer::TrainConfig base;
  base.data.dataset = trainer::DatasetKind::synthetic;
  base.data.synthetic.train_size = 2048;
  base.data.synthetic.test_size = 512;
  base.model.preset = trainer::Preset::lenet;
  base.training.epochs = 2;
  if (argc > 1 && std::string(argv[1]) == "cuda") base.device.kind = trainer::DeviceKind::cuda;

  struct Quiet : trainer::TrainCallback {};
  std::vector<Quiet> callbacks(4);
  std::vector<trainer::ArrayMember> members(4);
  const double rates[] = {0.003, 0.01, 0.03, 0.1};
  for (int i = 0; i < 4; ++i) {
    members[i].config = base;
    members[i].config.training.learning_rate = rates[i];
    members[i].config.training.seed = 1 + i;
    members[i].callback = &callbacks[i];
    // What may differ within one array is fusion.h's to say: "" means these two fuse.
    if (!trainer::fusion_split(base, members[i].config).empty()) return 1;
  }
  const trainer::ArrayReport report =
      trainer::train_array(members, [&](std::size_t i, trainer::MemberEnd end) {
        if (end.error) {
          std::printf("member %zu failed\n", i);
          return;
        }
        std::printf("lr %.3f seed %d: %s, val_accuracy %.4f\n", rates[i], int(1 + i),
                    trainer::to_string(end.result.state), end.result.final_val_accuracy);
      });
  std::printf("%zu members trained at once\n", report.most_active);
  return 0;
}
