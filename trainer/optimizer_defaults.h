/*
 * optimizer_defaults.h — the optimizer's hyperparameter defaults (PyTorch's torch.optim), once.
 *
 * Two structs start from them: TrainingSpec (trainer/train_config.h, whose defaults the key table
 * trainer/config_keys.h lists for the reader, the writer and the docs) and a backend's
 * OptimizerStep (trainer/backend/backend.h, one launch's values), which cannot include
 * train_config.h. OptimizerStep's float fields hold them rounded to float, which for each is its
 * float literal (0.01 → 0.01f), so both structs start from the same numbers.
 */
#pragma once

namespace sweep::trainer::optimizer_defaults {

inline constexpr double learning_rate = 0.01;
inline constexpr double momentum = 0.9;
inline constexpr double beta1 = 0.9;
inline constexpr double beta2 = 0.999;
inline constexpr double epsilon = 1e-8;
inline constexpr double rms_decay = 0.99;  // RMSprop's alpha
inline constexpr double weight_decay = 0.0;

}  // namespace sweep::trainer::optimizer_defaults
