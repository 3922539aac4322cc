/*
 * numpy_data.cpp — x and y arrays into a Dataset: shapes checked against each other, NHWC
 * transposed to NCHW, labels checked and counted.
 */
#include "trainer/data/numpy_data.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <optional>
#include <utility>

#include "common/check.h"
#include "trainer/data/npy_reader.h"
#include "trainer/data/npz_reader.h"

namespace sweep::trainer {

namespace {

// The arrays of an .npz file or of a directory of .npy files, by name ("x_train").
class ArraySource {
 public:
  explicit ArraySource(const std::string& path) : path_(path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return;
    if (!std::filesystem::exists(path, ec))
      throw Error(path + ": no such .npz file or directory of .npy files");
    zip_.emplace(path);
  }
  bool has(const std::string& name) const {
    std::error_code ec;
    return zip_ ? zip_->find(name + ".npy") != nullptr
                : std::filesystem::is_regular_file(file(name), ec);
  }
  // "DIR/x_train.npy" or "FILE.npz:x_train.npy", for messages.
  std::string where(const std::string& name) const {
    return zip_ ? path_ + ":" + name + ".npy" : file(name);
  }
  NpyArray array(const std::string& name) const {
    return zip_ ? read_npz_array(*zip_, entry(name)) : read_npy(file(name));
  }
  NpyHeader header(const std::string& name) const {
    return zip_ ? read_npz_header(*zip_, entry(name)) : read_npy_header(file(name));
  }

 private:
  std::string file(const std::string& name) const { return path_ + "/" + name + ".npy"; }
  const ZipEntry& entry(const std::string& name) const {
    const ZipEntry* e = zip_->find(name + ".npy");
    if (!e) {
      std::string names;
      for (const ZipEntry& m : zip_->entries()) names += (names.empty() ? "" : ", ") + m.name;
      throw Error(path_ + ": no " + name + ".npy in the archive (it holds " +
                  (names.empty() ? std::string("nothing") : names) +
                  "; np.savez(FILE, x_train=..., y_train=..., x_test=..., y_test=...) names them)");
    }
    return *e;
  }

  std::string path_;
  std::optional<ZipArchive> zip_;
};

struct SampleShape {
  std::int64_t n = 0;
  int c = 1, h = 1, w = 1;
};

SampleShape sample_shape(const NpyHeader& x, Layout layout, const std::string& where) {
  const auto& s = x.shape;
  SampleShape out;
  std::int64_t c = 1, h = 1, w = 1;
  if (s.size() == 2) {
    c = s[1];
  } else if (s.size() == 3) {
    h = s[1], w = s[2];
  } else if (s.size() == 4) {
    c = layout == Layout::nchw ? s[1] : s[3];
    h = layout == Layout::nchw ? s[2] : s[1];
    w = layout == Layout::nchw ? s[3] : s[2];
  } else {
    throw Error(where + ": shape " + x.shape_text() +
                " is not read (x is (N, C, H, W) or (N, H, W, C) by data.layout, (N, H, W), or "
                "(N, F) features)");
  }
  if (s[0] == 0) throw Error(where + ": shape " + x.shape_text() + " has no rows");
  if (c == 0 || h == 0 || w == 0)
    throw Error(where + ": shape " + x.shape_text() + " has an empty sample");
  if (c * h * w > INT_MAX)
    throw Error(where + ": shape " + x.shape_text() + " has samples too large to train");
  out.n = s[0];
  out.c = int(c), out.h = int(h), out.w = int(w);
  return out;
}

std::int64_t label_rows(const NpyHeader& y, const std::string& where) {
  if (y.shape.size() == 1 || (y.shape.size() == 2 && y.shape[1] == 1)) return y.shape[0];
  throw Error(where + ": shape " + y.shape_text() + " is not read (y is (N,) or (N, 1))");
}

// NHWC values into NCHW order.
template <class T>
std::vector<T> to_nchw(const std::vector<T>& v, const SampleShape& s) {
  std::vector<T> out(v.size());
  const std::size_t hw = std::size_t(s.h) * s.w, chw = hw * s.c;
  for (std::int64_t i = 0; i < s.n; ++i)
    for (std::size_t p = 0; p < hw; ++p)
      for (int c = 0; c < s.c; ++c)
        out[std::size_t(i) * chw + std::size_t(c) * hw + p] =
            v[std::size_t(i) * chw + p * std::size_t(s.c) + std::size_t(c)];
  return out;
}

// The split's class labels, each checked to be in 0..255.
std::vector<std::int64_t> class_labels(const ArraySource& src, const std::string& name) {
  const std::string where = src.where(name);
  const NpyArray y = src.array(name);
  label_rows(y.header, where);
  if (dtype_is_float(y.header.dtype))
    throw Error(where + ": " + std::string(dtype_name(y.header.dtype)) +
                " labels, but data.task is classification, which needs integer class labels "
                "0..K-1 (or set data.task: regression for float targets)");
  std::vector<std::int64_t> labels = npy_integers(y, where);
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || labels[i] > 255)
      throw Error(where + ": row " + std::to_string(i) + " has label " + std::to_string(labels[i]) +
                  " (class labels are 0..255)");
  return labels;
}

std::int64_t largest(const std::vector<std::int64_t>& v) {
  return v.empty() ? -1 : *std::max_element(v.begin(), v.end());
}

// The class count: the largest label of both splits (where both exist) + 1. `labels`: the
// split `split`'s, already read; the other split's are read here.
int class_count(const ArraySource& src, const std::string& split,
                const std::vector<std::int64_t>& labels) {
  std::int64_t top = largest(labels);
  const std::string other = split == "train" ? "y_test" : "y_train";
  if (src.has(other)) top = std::max(top, largest(class_labels(src, other)));
  return int(top + 1);
}

void check_x_dtype(const ArraySource& src, const std::string& name, NpyDtype t) {
  if (t != NpyDtype::u1 && !dtype_is_float(t))
    throw Error(src.where(name) + ": dtype " + std::string(dtype_name(t)) +
                " is not read for x (uint8 images, or float32 / float64 features)");
}

// x's dtype, and y's shape and rows against x's, from their headers.
void check_split_headers(const ArraySource& src, const std::string& split, const NpyHeader& x,
                         const SampleShape& s) {
  const std::string xn = "x_" + split, yn = "y_" + split;
  check_x_dtype(src, xn, x.dtype);
  const std::int64_t rows = label_rows(src.header(yn), src.where(yn));
  if (rows != s.n)
    throw Error(src.where(xn) + " has " + std::to_string(s.n) + " rows, " + src.where(yn) + " " +
                std::to_string(rows) + ": x and y need one row each per sample");
}

// The test split's samples have the training split's shape and kind (images or features).
void check_same_samples(const ArraySource& src, const NpyHeader& train, const SampleShape& a,
                        const NpyHeader& test, const SampleShape& b) {
  const auto text = [](const SampleShape& s) {
    return std::to_string(s.c) + " x " + std::to_string(s.h) + " x " + std::to_string(s.w);
  };
  if (a.c != b.c || a.h != b.h || a.w != b.w)
    throw Error(src.where("x_test") + ": samples of " + text(b) + " (C x H x W), " +
                src.where("x_train") + "'s are " + text(a));
  if ((train.dtype == NpyDtype::u1) != (test.dtype == NpyDtype::u1))
    throw Error(src.where("x_test") + ": dtype " + std::string(dtype_name(test.dtype)) + ", " +
                src.where("x_train") + "'s is " + std::string(dtype_name(train.dtype)) +
                " (both uint8 images, or both float features)");
}

}  // namespace

Dataset read_numpy_split(const std::string& path, const std::string& split,
                         const NumpyOptions& options) {
  const ArraySource src(path);
  const std::string xn = "x_" + split, yn = "y_" + split;
  for (const std::string& name : {xn, yn})
    if (!src.has(name)) throw Error(src.where(name) + ": missing (data.dataset: numpy)");
  // The headers first: a mismatch is refused before x's data is read.
  const SampleShape s = sample_shape(src.header(xn), options.layout, src.where(xn));
  check_split_headers(src, split, src.header(xn), s);
  Dataset d;
  d.source = src.where(xn);
  NpyArray x = src.array(xn);
  d.c = s.c, d.h = s.h, d.w = s.w;
  const NpyDtype xt = x.header.dtype;
  if (xt == NpyDtype::u1) {
    d.images = std::move(x.data);
    if (options.layout == Layout::nhwc && x.header.shape.size() == 4)
      d.images = to_nchw(d.images, s);
  } else {  // float32 or float64: check_split_headers refused the rest
    d.features = npy_floats(x, src.where(xn));
    if (options.layout == Layout::nhwc && x.header.shape.size() == 4)
      d.features = to_nchw(d.features, s);
    if (xt == NpyDtype::f8) d.source += " (float64, converted to float32)";
  }
  if (options.task == Task::regression) {
    d.targets = npy_floats(src.array(yn), src.where(yn));
    d.classes = 0;
  } else {
    const std::vector<std::int64_t> labels = class_labels(src, yn);
    d.labels.assign(labels.begin(), labels.end());
    d.classes = class_count(src, split, labels);
  }
  return d;
}

NumpyShape numpy_shape(const std::string& path, const NumpyOptions& options) {
  const ArraySource src(path);
  for (const char* name : {"x_train", "y_train"})
    if (!src.has(name)) throw Error(src.where(name) + ": missing (data.dataset: numpy)");
  // Every header checked as the reader checks it (x's shape and dtype, y's rows), and the test
  // split's samples against the training split's, so that a config check finds what a trial's
  // load would refuse.
  const NpyHeader x = src.header("x_train");
  const SampleShape s = sample_shape(x, options.layout, src.where("x_train"));
  check_split_headers(src, "train", x, s);
  if (src.has("x_test") && src.has("y_test")) {
    const NpyHeader xt = src.header("x_test");
    check_split_headers(src, "test", xt, sample_shape(xt, options.layout, src.where("x_test")));
    check_same_samples(src, x, s, xt, sample_shape(xt, options.layout, src.where("x_test")));
  }
  NumpyShape out{s.c, s.h, s.w, 0};
  if (options.task == Task::classification)
    out.classes = class_count(src, "train", class_labels(src, "y_train"));
  return out;
}

std::string numpy_missing_arrays(const std::string& path, bool need_test) {
  const ArraySource src(path);
  std::string missing;
  std::vector<std::string> names = {"x_train", "y_train"};
  if (need_test) names.insert(names.end(), {"x_test", "y_test"});
  for (const std::string& name : names)
    if (!src.has(name)) missing += (missing.empty() ? "" : ", ") + name + ".npy";
  return missing;
}

}  // namespace sweep::trainer
