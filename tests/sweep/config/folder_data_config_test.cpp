/*
 * folder_data_config_test.cpp — the data keys of `dataset: folder` (channels, image_size, resize,
 * on_bad_file, cache_dir, validation_path): read, written back the same, refused with their
 * file:line:col, checked against the folder before anything runs, and the model's input and
 * classes worked out from the class folders and the first image.
 */
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config_test_util.h"
#include "sweep/config/train_config_writer.h"
#include "sweep/config/yaml_tree.h"
#include "sweep_process_util.h"
#include "tests/test_dir.h"
#include "trainer/data/data_shape.h"

namespace sweep::config::testing {
namespace {

namespace fs = std::filesystem;

class TempDir : public sweep::testing::TestDir {
 public:
  TempDir() : TestDir("sweep_folder_config") {}
  // A 2 x 3 grey PGM at `name` (folders made as needed).
  void image(const std::string& name) const {
    write(name, "P5 3 2 255\n" + std::string(6, '\x20'));
  }
  std::string path(const std::string& name) const { return (TestDir::path() / name).string(); }
};

const char* kModel = "model: {preset: mlp, hidden: [8]}\ntraining: {epochs: 1, batch_size: 2}\n";

TEST(FolderDataConfig, ReadsTheFolderKeysAndTheShapeFromTheFolder) {
  const TempDir dir;
  dir.image("train/dog/1.pgm");
  dir.image("train/cat/1.pgm");
  dir.image("train/emu/1.pgm");
  const SweepConfig c = load_text("data: {dataset: folder, path: " + dir.path("train") +
                                  ", validation: holdout, channels: 3, image_size: [8, 6], "
                                  "resize: pad, on_bad_file: skip, cache_dir: /tmp/c}\n" +
                                  kModel);
  const trainer::DataSpec& d = c.base.data;
  EXPECT_EQ(d.dataset, trainer::DatasetKind::folder);
  EXPECT_EQ(d.folder.channels, 3);
  EXPECT_EQ(d.folder.height, 8);
  EXPECT_EQ(d.folder.width, 6);
  EXPECT_EQ(d.folder.resize, trainer::ResizeMode::pad);
  EXPECT_EQ(d.folder.on_bad_file, trainer::OnBadFile::skip);
  EXPECT_EQ(d.folder.cache_dir, "/tmp/c");
  EXPECT_EQ(trainer::data_shape(d).image, (trainer::Shape{3, 8, 6}));
  EXPECT_EQ(trainer::data_shape(d).classes, 3);
  // Without channels and image_size: the first image's own.
  const SweepConfig plain = load_text("data: {dataset: folder, path: " + dir.path("train") +
                                      ", validation: holdout}\n" + kModel);
  EXPECT_EQ(trainer::data_shape(plain.base.data).image, (trainer::Shape{1, 2, 3}));
}

TEST(FolderDataConfig, WritesEveryKeyBackTheSame) {
  const TempDir dir;
  dir.image("train/a/1.pgm");
  dir.image("train/b/1.pgm");
  dir.image("val/a/1.pgm");
  dir.image("val/b/1.pgm");
  trainer::TrainConfig written = load_text("data: {dataset: folder, path: " + dir.path("train") +
                                           ", validation_path: " + dir.path("val") + "}\n" + kModel)
                                     .base;
  written.data.folder = {1, 4, 5, trainer::ResizeMode::crop, trainer::OnBadFile::skip, "/x/c"};
  const std::string text = emit_yaml(to_yaml(written));
  const trainer::TrainConfig read = load_text(text).base;
  EXPECT_EQ(read.data, written.data) << text;
  written.data.folder = {};
  EXPECT_EQ(load_text(emit_yaml(to_yaml(written))).base.data, written.data);
}

TEST(FolderDataConfig, RefusesWithTheKeysPlace) {
  const TempDir dir;
  dir.image("train/a/1.pgm");
  dir.image("train/b/1.pgm");
  dir.image("one/a/1.pgm");
  const std::string train = dir.path("train");
  EXPECT_EQ(problems("data: {dataset: folder}\n"),
            (std::vector<std::string>{"t.yaml:1:17: key 'data.dataset': dataset: folder needs "
                                      "data.path (a folder holding one folder of images per "
                                      "class)"}));
  EXPECT_EQ(problems("data: {dataset: folder, path: /nonexistent/imgs, validation: holdout}\n"),
            (std::vector<std::string>{"t.yaml:1:31: key 'data.path': data.path /nonexistent/imgs: "
                                      "no such folder (expected a folder holding one folder of "
                                      "images per class)"}));
  EXPECT_EQ(
      problems("data: {dataset: folder, path: " + dir.path("one") + ", validation: holdout}\n"),
      (std::vector<std::string>{"t.yaml:1:31: key 'data.path': data.path " + dir.path("one") +
                                ": only one class folder (a); a classifier needs at least "
                                "two"}));
  EXPECT_EQ(problems("data: {dataset: folder, path: " + train + "}\n" + kModel),
            (std::vector<std::string>{
                "t.yaml:1:17: key 'data.dataset': dataset: folder validates on "
                "data.validation_path (a second folder with the same class folders), and it is "
                "not set; set it, or set validation: holdout or none"}));
  dir.image("val/a/1.pgm");
  dir.image("val/c/1.pgm");
  EXPECT_EQ(problems("data: {dataset: folder, path: " + train +
                     ", validation_path: " + dir.path("val") + "}\n" + kModel),
            (std::vector<std::string>{"t.yaml:1:31: key 'data.path': data.validation_path " +
                                      dir.path("val") +
                                      ": no class folder b (expected the same class folders as "
                                      "data.path)"}));
  const std::string head = "data: {dataset: folder, path: " + train + ", validation: holdout, ";
  const auto first = [&](const std::string& keys) {
    const std::vector<std::string> p = problems(head + keys + "}\n" + kModel);
    return p.empty() ? std::string("(loaded)") : p[0];
  };
  EXPECT_NE(first("channels: 2").find("key 'data.channels': must be 1 (grey) or 3 (RGB)"),
            std::string::npos);
  EXPECT_NE(first("image_size: [8]").find("key 'data.image_size': expected [height, width]"),
            std::string::npos);
  EXPECT_NE(first("image_size: [8, 20000]").find("key 'data.image_size"), std::string::npos);
  EXPECT_NE(first("resize: squash").find("key 'data.resize': unknown resize mode 'squash'"),
            std::string::npos)
      << first("resize: squash");
  EXPECT_NE(first("on_bad_file: ignore").find("key 'data.on_bad_file'"), std::string::npos);
  EXPECT_NE(problems("data: {dataset: fashion-mnist, channels: 3}\n" + std::string(kModel))[0].find(
                "key 'data.channels': data.channels applies to dataset: folder only"),
            std::string::npos);
}

TEST(FolderDataConfig, DryRunPrintsTheClassesInLabelOrder) {
  const TempDir dir;
  dir.image("train/dog/1.pgm");
  dir.image("train/Cat/1.pgm");
  dir.image("train/ant/1.pgm");
  const std::string config = dir.path("c.yaml");
  std::ofstream(config) << "data: {dataset: folder, path: " << dir.path("train")
                        << ", validation: holdout}\n"
                        << kModel;
  const std::string log = dir.path("out.txt");
  EXPECT_EQ(
      sweep::testing::wait_exit(sweep::testing::spawn_sweep({"run", config, "--dry-run"}, log)), 0);
  const std::string out = sweep::testing::slurp(log);
  EXPECT_NE(out.find("data: folder " + dir.path("train") +
                     ", 3 classes: 0 Cat, 1 ant, 2 dog; images 1x2x3 (CxHxW)"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace sweep::config::testing
