/*
 * folder_reader_test.cpp — `dataset: folder` (trainer/data/folder_reader.h) on small class folders
 * the test writes: class order and labels, channels and sizes, what is ignored, every refusal
 * naming the folder or file, on_bad_file: skip, load_data's validation_path, and a few training
 * steps on a folder of PNG and JPEG files with the CPU backend.
 */
#include "trainer/data/folder_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/check.h"
#include "image_files.h"
#include "trainer/data/data_shape.h"
#include "trainer/data/load_data.h"
#include "trainer/train.h"

namespace sweep::trainer {
namespace {

using namespace test_images;

FolderSpec spec_in(const TempDir& dir) {
  FolderSpec spec;
  spec.cache_dir = (dir.path() / "cache").string();
  return spec;
}

std::string root_of(const TempDir& dir) { return (dir.path() / "set").string(); }

std::string error_of(const std::string& root, const FolderSpec& spec,
                     const std::vector<std::string>* classes = nullptr) {
  try {
    read_image_folder(root, "data.path", spec, classes);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FolderReader, ClassesAreSortedFolderNamesAndFilesSortedWithin) {
  TempDir dir;
  write_bytes(dir.file("set/dog/b.pgm"), pnm_bytes(2, 2, 1, {1, 1, 1, 1}));
  write_bytes(dir.file("set/dog/a.pgm"), pnm_bytes(2, 2, 1, {2, 2, 2, 2}));
  write_bytes(dir.file("set/ant/x.pgm"), pnm_bytes(2, 2, 1, {3, 3, 3, 3}));
  write_bytes(dir.file("set/cat/deep/er/z.pgm"), pnm_bytes(2, 2, 1, {4, 4, 4, 4}));
  write_bytes(dir.file("set/Zebra/q.pgm"), pnm_bytes(2, 2, 1, {5, 5, 5, 5}));  // 'Z' < 'a'
  const Dataset d = read_image_folder(root_of(dir), "data.path", spec_in(dir));
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"Zebra", "ant", "cat", "dog"}));
  EXPECT_EQ(d.classes, 4);
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{0, 1, 2, 3, 3}));
  EXPECT_EQ(d.c, 1);
  EXPECT_EQ(d.h, 2);
  EXPECT_EQ(d.w, 2);
  std::vector<std::uint8_t> firsts;
  for (int i = 0; i < 5; ++i) firsts.push_back(d.images[i * 4]);
  EXPECT_EQ(firsts, (std::vector<std::uint8_t>{5, 3, 4, 2, 1}));
}

TEST(FolderReader, HiddenAndNonImageFilesAreLeftOutAndCounted) {
  TempDir dir;
  write_bytes(dir.file("set/a/1.pgm"), pnm_bytes(1, 1, 1, {1}));
  write_bytes(dir.file("set/a/README.txt"), {'h', 'i'});
  write_bytes(dir.file("set/a/.DS_Store"), {0, 1});
  write_bytes(dir.file("set/a/.hidden/2.pgm"), pnm_bytes(1, 1, 1, {2}));
  write_bytes(dir.file("set/b/3.PGM"), pnm_bytes(1, 1, 1, {3}));  // extensions in any case
  write_bytes(dir.file("set/.git/4.pgm"), pnm_bytes(1, 1, 1, {4}));
  write_bytes(dir.file("set/notes.txt"), {'x'});
  const FolderListing listing = list_image_folder(root_of(dir), "data.path");
  EXPECT_EQ(listing.class_names, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(listing.files.size(), 2u);
  EXPECT_EQ(listing.files[0].relative, "a/1.pgm");
  EXPECT_EQ(listing.files[1].relative, "b/3.PGM");
  EXPECT_EQ(listing.ignored, 1);  // README.txt (hidden files are not counted)
}

TEST(FolderReader, TheFormatIsToldByItsBytesNotItsName) {
  TempDir dir;
  write_png(dir.file("set/a/really_a_png.jpg"), 2, 2, 1, {9, 8, 7, 6});
  write_jpeg(dir.file("set/b/really_a_jpeg.png"), 2, 2, 1, {9, 9, 9, 9});
  const Dataset d = read_image_folder(root_of(dir), "data.path", spec_in(dir));
  EXPECT_EQ(std::vector<std::uint8_t>(d.images.begin(), d.images.begin() + 4),
            (std::vector<std::uint8_t>{9, 8, 7, 6}));
}

TEST(FolderReader, ChannelsAreColourWhenAnyFileIsAndConvertedWhenAsked) {
  TempDir dir;
  write_bytes(dir.file("set/a/grey.pgm"), pnm_bytes(1, 1, 1, {40}));
  write_bytes(dir.file("set/b/colour.ppm"), pnm_bytes(1, 1, 3, {200, 100, 50}));
  const Dataset colour = read_image_folder(root_of(dir), "data.path", spec_in(dir));
  EXPECT_EQ(colour.c, 3);
  EXPECT_EQ(colour.images, (std::vector<std::uint8_t>{40, 40, 40, 200, 100, 50}));
  FolderSpec grey = spec_in(dir);
  grey.channels = 1;
  const Dataset g = read_image_folder(root_of(dir), "data.path", grey);
  EXPECT_EQ(g.c, 1);
  EXPECT_EQ(g.images, (std::vector<std::uint8_t>{40, 124}));  // BT.601 luma of (200, 100, 50)
}

TEST(FolderReader, DifferentSizesNeedImageSizeAndItResizes) {
  TempDir dir;
  write_bytes(dir.file("set/a/small.pgm"), pnm_bytes(2, 2, 1, {0, 0, 0, 0}));
  write_bytes(dir.file("set/b/wide.pgm"), pnm_bytes(2, 4, 1, {0, 10, 20, 30, 40, 50, 60, 70}));
  const std::string message = error_of(root_of(dir), spec_in(dir));
  EXPECT_NE(message.find("images of different sizes: a/small.pgm is 2x2, b/wide.pgm is 2x4"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("data.image_size"), std::string::npos);
  FolderSpec sized = spec_in(dir);
  sized.height = 2;
  sized.width = 2;
  sized.resize = ResizeMode::crop;
  const Dataset d = read_image_folder(root_of(dir), "data.path", sized);
  EXPECT_EQ(d.h, 2);
  EXPECT_EQ(d.w, 2);
  EXPECT_EQ(std::vector<std::uint8_t>(d.images.begin() + 4, d.images.end()),
            (std::vector<std::uint8_t>{10, 20, 50, 60}));
}

TEST(FolderReader, RefusalsNameTheFolderOrFile) {
  TempDir dir;
  const std::string root = root_of(dir);
  EXPECT_NE(error_of(root, spec_in(dir)).find("data.path " + root + ": no such folder"),
            std::string::npos);
  write_bytes(dir.file("set/loose.pgm"), pnm_bytes(1, 1, 1, {1}));
  EXPECT_NE(error_of(root, spec_in(dir)).find(root + ": no class folders"), std::string::npos);
  write_bytes(dir.file("set/only/1.pgm"), pnm_bytes(1, 1, 1, {1}));
  EXPECT_NE(error_of(root, spec_in(dir)).find(root + ": only one class folder (only)"),
            std::string::npos);
  std::filesystem::create_directories(dir.path() / "set" / "empty");
  write_bytes(dir.file("set/empty/notes.txt"), {'x'});
  EXPECT_NE(error_of(root, spec_in(dir)).find("the class folder empty holds no images"),
            std::string::npos)
      << error_of(root, spec_in(dir));
}

TEST(FolderReader, ABadFileStopsTheLoadNamingItOrIsSkipped) {
  TempDir dir;
  write_bytes(dir.file("set/a/1.pgm"), pnm_bytes(1, 1, 1, {1}));
  write_bytes(dir.file("set/a/2.pgm"), pnm_bytes(1, 1, 1, {2}));
  write_bytes(dir.file("set/b/3.pgm"), pnm_bytes(1, 1, 1, {3}));
  auto cut = pnm_bytes(2, 2, 1, {4, 4, 4, 4});
  cut.pop_back();
  write_bytes(dir.file("set/b/bad.pgm"), cut);
  const std::string message = error_of(root_of(dir), spec_in(dir));
  EXPECT_NE(message.find("set/b/bad.pgm: the file ends early"), std::string::npos) << message;
  EXPECT_NE(message.find("on_bad_file: skip"), std::string::npos) << message;

  FolderSpec skip = spec_in(dir);
  skip.on_bad_file = OnBadFile::skip;
  const Dataset d = read_image_folder(root_of(dir), "data.path", skip);
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{0, 0, 1}));
  EXPECT_EQ(d.images, (std::vector<std::uint8_t>{1, 2, 3}));
}

TEST(FolderReader, ValidationFolderMustHaveTheSameClasses) {
  TempDir dir;
  write_bytes(dir.file("set/a/1.pgm"), pnm_bytes(1, 1, 1, {1}));
  write_bytes(dir.file("set/c/1.pgm"), pnm_bytes(1, 1, 1, {1}));
  const std::vector<std::string> classes = {"a", "b"};
  const std::string message = error_of(root_of(dir), spec_in(dir), &classes);
  EXPECT_NE(message.find(root_of(dir) + ": no class folder b"), std::string::npos) << message;
  const std::vector<std::string> same = {"a", "c", "d"};
  EXPECT_NE(error_of(root_of(dir), spec_in(dir), &same).find("no class folder d"),
            std::string::npos);
  const std::vector<std::string> only_a = {"a"};
  EXPECT_NE(error_of(root_of(dir), spec_in(dir), &only_a).find("the class folder c is not a class"),
            std::string::npos);
}

// Two classes of 8x8 colour images, red-ish squares vs blue-ish bars, half PNG and half JPEG.
void write_shapes(const TempDir& dir, const std::string& top, int per_class) {
  for (int i = 0; i < per_class; ++i) {
    std::vector<std::uint8_t> square(8 * 8 * 3, 0), bars(8 * 8 * 3, 0);
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x) {
        const std::size_t p = (std::size_t(y) * 8 + x) * 3;
        if (y >= 2 && y < 6 && x >= 2 && x < 6) square[p] = static_cast<std::uint8_t>(200 + i);
        if (x % 2 == 0) bars[p + 2] = static_cast<std::uint8_t>(200 + i);
      }
    const std::string n = std::to_string(i);
    if (i % 2 == 0) {
      write_png(dir.file(top + "/square/" + n + ".png"), 8, 8, 3, square);
      write_png(dir.file(top + "/bars/" + n + ".png"), 8, 8, 3, bars);
    } else {
      write_jpeg(dir.file(top + "/square/" + n + ".jpg"), 8, 8, 3, square);
      write_jpeg(dir.file(top + "/bars/" + n + ".jpg"), 8, 8, 3, bars);
    }
  }
}

TEST(FolderReader, LoadDataReadsValidationPathOrAHoldout) {
  TempDir dir;
  write_shapes(dir, "train", 10);
  write_shapes(dir, "val", 4);
  DataSpec spec;
  spec.dataset = DatasetKind::folder;
  spec.path = (dir.path() / "train").string();
  spec.folder.cache_dir = (dir.path() / "cache").string();
  spec.validation = Validation::test;
  EXPECT_THROW(load_data(spec, 1), Error);  // no validation_path
  spec.validation_path = (dir.path() / "val").string();
  const LoadedData both = load_data(spec, 1);
  EXPECT_EQ(both.train.size(), 20);
  EXPECT_EQ(both.validation.size(), 8);
  EXPECT_EQ(both.validation.class_names, both.train.class_names);
  EXPECT_EQ(both.train.class_names, (std::vector<std::string>{"bars", "square"}));
  spec.validation = Validation::holdout;
  spec.holdout_fraction = 0.25;
  const LoadedData held = load_data(spec, 1);
  EXPECT_EQ(held.train.size(), 15);
  EXPECT_EQ(held.validation.size(), 5);
  const DataShape shape = data_shape(spec);
  EXPECT_EQ(shape.image, (Shape{3, 8, 8}));
  EXPECT_EQ(shape.classes, 2);
}

TEST(FolderReader, AFolderOfPngAndJpegFilesTrains) {
  TempDir dir;
  write_shapes(dir, "train", 20);
  write_shapes(dir, "val", 6);
  TrainConfig c;
  c.data.dataset = DatasetKind::folder;
  c.data.path = (dir.path() / "train").string();
  c.data.validation_path = (dir.path() / "val").string();
  c.data.folder.cache_dir = (dir.path() / "cache").string();
  c.data.augment.flip = true;
  c.model.preset = Preset::mlp;
  c.model.hidden = {16};
  c.training.batch_size = 8;
  c.training.epochs = 3;
  c.training.learning_rate = 0.05;
  c.device = DeviceSpec{DeviceKind::cpu, 0, 0};
  TrainCallback none;
  const TrainResult r = train(c, none);
  EXPECT_EQ(r.state, RunState::completed) << r.message;
  EXPECT_EQ(r.classes, 2);
  EXPECT_GT(r.final_val_accuracy, 0.9) << "loss " << r.final_val_loss;
}

}  // namespace
}  // namespace sweep::trainer
