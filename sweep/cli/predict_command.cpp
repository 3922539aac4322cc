/*
 * predict_command.cpp — `sweep predict NAME --input PATH [--trial N] [--format csv|json]
 * [-o FILE]`: a trial's trained network (the best trial by default) on new inputs, one line each.
 *
 * PATH is read by what it is:
 *   - a directory: the image files directly in it (.png .jpg .jpeg .pgm .ppm .pnm, any case; not
 *     its subfolders), in sorted order, each named by its path;
 *   - NAME.npy: (N, C, H, W) or (N, C*H*W) values (one sample alone may drop N), uint8 pixels for
 *     an image model, any numeric dtype for a model of float values; rows named by number
 * (0-based);
 *   - NAME.csv: the columns the model was trained on, picked by name (any other column, the
 *     label's among them, is not read); rows named by number (0-based);
 *   - anything else: one image file.
 * Images are decoded as the training folder's were (the model file's channels, size and resize);
 * a model trained on other images (idx, CIFAR-10) decodes to its input's channels and size,
 * stretching. The network runs on the first GPU when there is one, else on the CPU, through
 * trainer::Predictor: the validation pass's gather and inference forward.
 *
 * Output: csv (input,class,probability; input,value for regression) or json (a list of objects
 * with the same keys); probability is the softmax of the network's outputs for the class it
 * picks (the first of equal maxima).
 */
#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "common/check.h"
#include "common/json.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/csv_table.h"
#include "sweep/cli/output_file.h"
#include "sweep/cli/trial_model.h"
#include "trainer/backend/backend.h"
#include "trainer/data/csv_reader.h"
#include "trainer/data/image_decode.h"
#include "trainer/data/npy_reader.h"
#include "trainer/loop/predictor.h"
#include "trainer/model_file.h"

namespace sweep::cli {

namespace {

namespace fs = std::filesystem;
using trainer::Dataset;
using trainer::ModelFile;

struct PredictArgs {
  std::string name, out_dir = "runs", db_path, input, output = "-", format = "csv";
  std::int64_t trial = -1;
  bool force = false, time = false;
};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_image_name(const fs::path& p) {
  const std::string ext = lower(p.extension().string());
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".pgm" || ext == ".ppm" ||
         ext == ".pnm";
}

Dataset empty_like(const ModelFile& m, const std::string& source) {
  Dataset d;
  d.source = source;
  d.c = m.input.c;
  d.h = m.input.h;
  d.w = m.input.w;
  return d;
}

Dataset read_images(const ModelFile& m, const std::vector<std::string>& files,
                    const std::string& source) {
  trainer::ImageDecodeSettings s;
  s.channels = m.input.c;
  s.height = m.input.h;
  s.width = m.input.w;
  if (m.input.decode) {
    const auto mode = trainer::parse_word<trainer::ResizeMode>(m.input.decode->resize);
    if (!mode)
      throw Error(source + ": the model's resize '" + m.input.decode->resize +
                  "' is not one this build knows");
    s.resize = *mode;
  }
  if (m.input.is_float)
    throw Error(source +
                ": the model was trained on float values, not images: give an .npy or "
                "a CSV");
  if (m.input.c != 1 && m.input.c != 3)
    throw Error(source + ": the model takes " + std::to_string(m.input.c) +
                " channels; images decode to 1 or 3");
  Dataset d = empty_like(m, source);
  d.images.reserve(files.size() * std::size_t(d.image_bytes()));
  for (const std::string& f : files) {
    const trainer::DecodedImage im = trainer::decode_image_file(f, s);
    if (im.c != d.c || im.h != d.h || im.w != d.w)
      throw Error(f + ": decoded to " + std::to_string(im.c) + "x" + std::to_string(im.h) + "x" +
                  std::to_string(im.w) + ", the model takes " + std::to_string(d.c) + "x" +
                  std::to_string(d.h) + "x" + std::to_string(d.w));
    d.images.insert(d.images.end(), im.pixels.begin(), im.pixels.end());
  }
  return d;
}

Dataset read_npy_inputs(const ModelFile& m, const std::string& path) {
  const trainer::NpyArray a = trainer::read_npy(path);
  const std::int64_t per = std::int64_t(m.input.c) * m.input.h * m.input.w;
  const auto& shape = a.header.shape;
  std::int64_t trailing = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) trailing *= shape[i];
  const bool batch_of_samples = shape.size() >= 2 && trailing == per;
  const bool one_sample = std::int64_t(a.header.count()) == per && shape.size() != 2;
  if (!batch_of_samples && !one_sample)
    throw Error(path + ": shape " + a.header.shape_text() + ", expected (N, " +
                std::to_string(m.input.c) + ", " + std::to_string(m.input.h) + ", " +
                std::to_string(m.input.w) + ") or (N, " + std::to_string(per) +
                ") for this model (channels first)");
  Dataset d = empty_like(m, path);
  if (m.input.is_float) {
    d.features = trainer::npy_floats(a, path);
  } else {
    if (a.header.dtype != trainer::NpyDtype::u1)
      throw Error(path + ": dtype " + std::string(trainer::dtype_name(a.header.dtype)) +
                  ", the model takes uint8 pixels (0..255)");
    d.images = a.data;
  }
  return d;
}

Dataset read_csv_inputs(const ModelFile& m, const std::string& path) {
  if (m.input.columns.empty())
    throw Error(path +
                ": the model was not trained on a CSV (it holds no column names): give "
                "images or an .npy");
  Dataset read = trainer::read_csv_features(path, m.input.columns);
  Dataset d = empty_like(m, path);
  d.features = std::move(read.features);
  return d;
}

// The inputs at `path` and each one's name.
Dataset read_inputs(const ModelFile& m, const std::string& path, std::vector<std::string>& names) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_regular_file() && is_image_name(e.path())) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty())
      throw Error(path + ": no image files (.png .jpg .jpeg .pgm .ppm .pnm) directly in it");
    names = files;
    return read_images(m, files, path);
  }
  if (!fs::exists(path, ec)) throw Error(path + ": no such file or directory");
  const std::string ext = lower(fs::path(path).extension().string());
  Dataset d = ext == ".npy"   ? read_npy_inputs(m, path)
              : ext == ".csv" ? read_csv_inputs(m, path)
                              : read_images(m, {path}, path);
  const std::int64_t n = std::int64_t((d.is_float() ? d.features.size() : d.images.size()) /
                                      std::size_t(std::max<std::int64_t>(1, d.image_bytes())));
  if (ext == ".npy" || ext == ".csv")
    for (std::int64_t i = 0; i < n; ++i) names.push_back(std::to_string(i));
  else
    names = {path};
  return d;
}

std::string number_text(double v) {
  std::ostringstream s;
  s.precision(7);
  s << v;
  return s.str();
}

}  // namespace

void add_predict_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* cmd =
      app.add_subcommand("predict", "Run a trial's trained network on images, an .npy or a CSV");
  cmd->add_option("NAME", args->name, "The sweep's name, or its directory (runs/NAME)")->required();
  cmd->add_option("--input", args->input,
                  "An image, a folder of images (the files directly in it), an .npy or a CSV")
      ->required()
      ->type_name("PATH");
  cmd->add_option("--trial", args->trial, "The trial's number (default: the best trial)")
      ->type_name("N");
  cmd->add_option("--out", args->out_dir, "Directory of runs (default: runs)")->type_name("DIR");
  cmd->add_option("--db", args->db_path, "SQLite database (default: OUT/NAME/sweep.db)")
      ->type_name("PATH");
  cmd->add_option("--format", args->format, "csv (default) or json")
      ->check(CLI::IsMember({"csv", "json"}));
  cmd->add_option("-o,--output", args->output, "File to write (default, or -: standard output)")
      ->type_name("FILE")
      ->check(CLI::Validator(output_path_problem, "FILE"));
  cmd->add_flag("--force", args->force, "Write -o FILE even when it is an SQLite database");
  cmd->add_flag("--time", args->time,
                "Say on standard error how long reading the inputs and running the network took");
  cmd->footer(
      "Examples:\n  sweep predict quickstart --input shoe.png\n"
      "  sweep predict pets --input photos/ --format json -o predictions.json");
  cmd->callback([args, &exit_code] {
    const std::optional<std::int64_t> trial =
        args->trial >= 0 ? std::optional<std::int64_t>(args->trial) : std::nullopt;
    const TrialModel found = find_trial_model(args->name, args->out_dir, args->db_path, trial);
    refuse_database_output(args->output, found.db_path, args->force);
    const ModelFile model = trainer::read_model_file(found.path);
    using Clock = std::chrono::steady_clock;
    const auto seconds_since = [](Clock::time_point t) {
      return std::chrono::duration<double>(Clock::now() - t).count();
    };
    const Clock::time_point reading = Clock::now();
    std::vector<std::string> names;
    const Dataset inputs = read_inputs(model, args->input, names);
    const double read_seconds = seconds_since(reading);
    trainer::DeviceSpec device;
    if (trainer::cuda_device_count() > 0) device.kind = trainer::DeviceKind::cuda;
    auto backend = trainer::make_backend(device);
    // A GPU runs a batch of a LeNet in less time than a step's launches and host copy take: its
    // batches are large. The CPU's stay at the validation pass's size, whose activations fit its
    // caches.
    const bool gpu = device.kind == trainer::DeviceKind::cuda;
    const int batch =
        int(std::clamp<std::int64_t>(std::int64_t(names.size()), 1, gpu ? 4096 : 256));
    trainer::Predictor predictor(*backend, model, found.path, batch);
    const Clock::time_point running = Clock::now();
    const std::vector<float> out = predictor.outputs(inputs);
    const double run_seconds = seconds_since(running);
    if (args->time)
      std::cerr << "predict: " << names.size() << " inputs read in " << number_text(read_seconds)
                << " s; the network on "
                << (device.kind == trainer::DeviceKind::cuda ? "GPU 0" : "the CPU") << " in "
                << number_text(run_seconds) << " s ("
                << number_text(double(names.size()) / std::max(run_seconds, 1e-9))
                << " inputs/s)\n";
    const int k = model.outputs;
    std::string text;
    Json rows = Json::array();
    if (args->format == "csv")
      text = model.regression ? "input,value\n" : "input,class,probability\n";
    for (std::size_t i = 0; i < names.size(); ++i) {
      const float* row = out.data() + i * std::size_t(k);
      if (model.regression) {
        if (args->format == "csv")
          text += csv_cell(names[i], false, {}) + "," + number_text(row[0]) + "\n";
        else
          rows.push_back({{"input", names[i]}, {"value", row[0]}});
        continue;
      }
      const int best = int(std::max_element(row, row + k) - row);
      const std::string cls =
          model.class_names.empty() ? std::to_string(best) : model.class_names[std::size_t(best)];
      if (args->format == "csv")
        text += csv_cell(names[i], false, {}) + "," + csv_cell(cls, false, {}) + "," +
                number_text(row[best]) + "\n";
      else
        rows.push_back({{"input", names[i]}, {"class", cls}, {"probability", row[best]}});
    }
    if (args->format == "json") text = json_text(rows, 2) + "\n";
    if (write_output(args->output, text))
      std::cerr << "wrote " << args->output << " (" << names.size() << " predictions, trial "
                << found.trial << " of " << found.sweep << ")\n";
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
