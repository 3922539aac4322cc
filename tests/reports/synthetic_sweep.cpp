/*
 * synthetic_sweep.cpp — see synthetic_sweep.h.
 *
 * The non-obvious decision: noise comes from a local SplitMix64, not <random>'s distributions,
 * whose output differs between standard libraries; the data (and so the tests' expectations)
 * are the same everywhere.
 */
#include "tests/reports/synthetic_sweep.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/json.h"

namespace sweep::reports::testing {
namespace {

class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  double uniform() {  // [0, 1)
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  double noise(double scale) { return (uniform() - 0.5) * 2 * scale; }

 private:
  std::uint64_t state_;
};

}  // namespace

ReportData make_synthetic_sweep(const SyntheticSweepOptions& o) {
  ReportData data;
  data.name = o.name;
  data.metric_name = "val_accuracy";
  data.goal = Goal::maximize;
  data.sweep_state = "completed";
  data.devices = "cpu x2";
  data.dataset = o.dataset;
  data.config_path = "configs/" + o.name + ".yaml";
  data.config_yaml =
      "name: " + o.name + "\ndata: {dataset: " + o.dataset +
      "}\nmodel: {preset: lenet}\ntraining: {optimizer: sgdm, epochs: " + std::to_string(o.epochs) +
      "}\nsweep:\n  method: grid\n  metric: {name: val_accuracy, goal: maximize}\n";
  data.created_at = 1'700'000'000;
  data.started_at = data.created_at + 2;
  SplitMix rng(o.seed);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::int64_t number = 0;
  double clock = *data.started_at;
  const bool sweep_momentum = o.momenta.size() > 1;
  for (const double momentum : o.momenta) {
    for (const int bs : o.batch_sizes) {
      for (const double lr : o.learning_rates) {
        TrialData t;
        t.id = 1000 + number;
        t.number = number;
        t.params = {{"training.learning_rate", lr}, {"training.batch_size", bs}};
        if (sweep_momentum)
          t.params["training.momentum"] = momentum;
        else
          t.params["training.optimizer"] = "sgdm";
        t.device = "cpu:" + std::to_string(number % 2);
        t.state = TrialState::completed;

        // Accuracy ceiling peaks at lr 0.01 (log distance), bs 64, momentum 0.9.
        const double lr_off = std::log10(lr / 0.01);
        const double bs_off = std::log2(bs / 64.0);
        const double ceiling = 0.915 - 0.05 * lr_off * lr_off - 0.012 * bs_off * bs_off -
                               0.2 * std::abs(momentum - 0.9);
        const double speed = 1.4 * std::clamp(lr / 0.01, 0.05, 3.0) * std::sqrt(64.0 / bs);

        int epochs = o.epochs;
        bool diverges = false;
        if (o.with_misfits) {
          if (lr == o.learning_rates.back() && bs == o.batch_sizes.front() &&
              momentum == o.momenta.back())
            diverges = true;
          else if (lr == o.learning_rates.front() && bs == o.batch_sizes.back() &&
                   momentum == o.momenta.front())
            epochs = std::max(1, o.epochs * 4 / 10);  // hopeless and slow: stopped early
        }
        const int diverge_epoch = std::max(1, o.epochs / 3);

        auto& acc = t.series["val_accuracy"];
        auto& vloss = t.series["val_loss"];
        auto& tloss = t.series["train_loss"];
        const int per_epoch = std::max(1, o.loss_points_per_epoch);
        std::int64_t step = 0;
        for (int e = 1; e <= epochs; ++e) {
          for (int k = 1; k <= per_epoch; ++k) {
            ++step;
            const double ep = (e - 1) + static_cast<double>(k) / per_epoch;
            double loss =
                0.25 + 2.0 * std::exp(-speed * ep) + (0.92 - ceiling) * 2 + rng.noise(0.04);
            if (diverges && ep > diverge_epoch - 0.5) {
              loss = ep >= diverge_epoch ? nan : loss * std::exp(12 * (ep - diverge_epoch + 0.5));
            }
            tloss.push_back({step * 100, ep, loss});
            if (diverges && ep >= diverge_epoch) break;
          }
          if (diverges && e >= diverge_epoch) {
            acc.push_back({e, static_cast<double>(e), 0.1});
            vloss.push_back({e, static_cast<double>(e), nan});
            epochs = e;
            break;
          }
          const double a =
              ceiling * (1 - std::exp(-speed * e)) + 0.1 * std::exp(-speed * e) + rng.noise(0.006);
          acc.push_back({e, static_cast<double>(e), a});
          vloss.push_back(
              {e, static_cast<double>(e), 0.3 + 2.0 * std::exp(-speed * e) + (0.92 - ceiling) * 3});
        }
        const double seconds = epochs * (3.0 + 200.0 / bs) * (1 + rng.noise(0.1));
        t.started_at = clock;
        t.finished_at = clock + seconds;
        clock += seconds / 2;
        t.summary = {{"images_per_second", 60000.0 * epochs / seconds},
                     {"epochs_completed", epochs}};

        if (diverges) {
          t.state = TrialState::diverged;
          t.stop_reason = "train_loss became NaN";
        } else if (epochs < o.epochs) {
          t.state = TrialState::stopped_early;
          t.stop_reason = "asha: below the median at epoch " + std::to_string(epochs);
        }
        if (o.with_confusion && t.state == TrialState::completed) {
          // Rows: true class; the diagonal carries the accuracy, shirts and T-shirts mix up.
          const double final_acc = acc.back().value;
          sweep::Json matrix = sweep::Json::array();
          for (int r = 0; r < 10; ++r) {
            sweep::Json row = sweep::Json::array();
            const double hit = std::clamp(final_acc + (r == 6   ? -0.25
                                                       : r == 0 ? -0.08
                                                                : 0.03),
                                          0.0, 1.0);
            for (int c = 0; c < 10; ++c) {
              double share = r == c ? hit : (1 - hit) / 9;
              if (r == 6 && c == 0) share += 0.1;
              row.push_back(static_cast<std::int64_t>(std::lround(1000 * share)));
            }
            matrix.push_back(row);
          }
          t.summary["confusion"] = matrix;
        }
        data.trials.push_back(std::move(t));
        ++number;
      }
    }
  }
  if (o.with_misfits && data.trials.size() >= 4) {
    TrialData& failed = data.trials[data.trials.size() / 2 + 1];
    if (failed.state == TrialState::completed) {
      failed.state = TrialState::failed;
      failed.error = "out of memory on cpu:1: asked for 1073741824 bytes, 52428800 bytes free";
      failed.series["val_accuracy"].resize(
          std::min<std::size_t>(2, failed.series["val_accuracy"].size()));
      failed.series["val_loss"].resize(std::min<std::size_t>(2, failed.series["val_loss"].size()));
      failed.series["train_loss"].resize(
          std::min<std::size_t>(2 * static_cast<std::size_t>(std::max(1, o.loss_points_per_epoch)),
                                failed.series["train_loss"].size()));
      failed.summary.erase("confusion");
      failed.summary["epochs_completed"] = 2;
    }
  }
  data.finished_at = clock;
  return data;
}

}  // namespace sweep::reports::testing
