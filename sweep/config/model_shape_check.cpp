/*
 * model_shape_check.cpp — trainer::check_model on the config's model and data shape, its
 * LayerError mapped back onto the file (see model_shape_check.h for where a problem goes).
 */
#include "sweep/config/model_shape_check.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "trainer/data/data_shape.h"
#include "trainer/layers/layer.h"
#include "trainer/models.h"

namespace sweep::config {

namespace {

// Whether `key` lies inside `prefix` (model.layers.2.conv.kernel inside model.layers.2).
bool is_inside(const std::string& key, const std::string& prefix) {
  return key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0 &&
         key[prefix.size()] == '.';
}

// The data keys that decide the shape of the model's input.
bool sets_image_shape(const std::string& key) {
  return key == "data" || key == "data.dataset" || key == "data.synthetic" ||
         key == "data.synthetic.channels" || key == "data.synthetic.height" ||
         key == "data.synthetic.width";
}

// Whether `key` itself, or a key above it, was given outside the file's text (then its place
// already says so).
bool is_overridden(const ConfigTree& tree, const std::string& key) {
  std::string prefix = key;
  while (!tree.origins.count(prefix)) {
    const auto dot = prefix.rfind('.');
    if (dot == std::string::npos) return false;
    prefix.resize(dot);
  }
  return true;
}

// The value given outside the file's text that a problem at `subject` most likely comes from:
// one inside `subject`, else another key of the model, else the data's image shape.
const std::pair<const std::string, Location>* value_behind(const ConfigTree& tree,
                                                           const std::string& subject) {
  const std::pair<const std::string, Location>* inside = nullptr;
  const std::pair<const std::string, Location>* model = nullptr;
  const std::pair<const std::string, Location>* data = nullptr;
  for (const auto& origin : tree.origins) {
    const std::string& key = origin.first;
    if (!inside && is_inside(key, subject))
      inside = &origin;
    else if (!model && is_inside(key, "model"))
      model = &origin;
    else if (!data && sets_image_shape(key))
      data = &origin;
  }
  return inside ? inside : model ? model : data;
}

// The entry of model.layers (or of a block inside it) that `path` (LayerError::path) names:
// its key and place, or model.layers itself for a layer the file does not list (the final
// dense the trainer appends).
std::pair<std::string, Location> layer_entry(const ModelPlaces& places,
                                             const std::vector<std::size_t>& path) {
  std::pair<std::string, Location> entry{"model.layers", places.layers};
  const std::vector<LayerPlace>* level = &places.entries;
  for (const std::size_t index : path) {
    if (index >= level->size()) break;
    const LayerPlace& place = (*level)[index];
    entry = {place.key, place.where};
    level = &place.layers;
  }
  return entry;
}

std::string image_text(const trainer::DataSpec& data, trainer::Shape image) {
  return std::to_string(image.c) + "x" + std::to_string(image.h) + "x" + std::to_string(image.w) +
         " " + std::string(trainer::name_of(data.dataset)) + " images";
}

// The model that last fitted its images, on this thread: the trials of a sweep that varies
// neither the model nor the image shape are each compared with it (well under a microsecond)
// instead of built again.
struct Fitted {
  trainer::ModelSpec model;
  trainer::Shape image;
  int classes = 0;
};

bool fitted_last_time(const trainer::ModelSpec& model, const trainer::DataShape& data,
                      std::optional<Fitted>& last) {
  return last && last->image == data.image && last->classes == data.classes && last->model == model;
}

// The problem line: at the failing layer's entry (`layer_path`: LayerError::path, null for a
// problem of the whole model) or at model.preset / model.layers, unless a value given outside
// the file's text stands behind it.
void report(const ConfigTree& tree, const trainer::TrainConfig& config, const ModelPlaces& places,
            const std::vector<std::size_t>* layer_path, std::string text,
            Diagnostics& diagnostics) {
  const bool preset = config.model.layers.empty();
  std::string subject = preset ? "model.preset" : "model.layers";
  Location where = preset ? places.preset : places.layers;
  if (!preset && layer_path) std::tie(subject, where) = layer_entry(places, *layer_path);
  text += " (data: " + image_text(config.data, trainer::data_shape(config.data).image) + ")";
  // When the base config has the same problem (the same line), the trial's values are not its
  // cause: the trial's line is the base's.
  const bool base_has_it = diagnostics.has(where, subject, text);
  if (!base_has_it && !is_overridden(tree, subject))
    if (const auto* behind = value_behind(tree, subject)) {
      diagnostics.error(behind->second, behind->first, text);
      return;
    }
  diagnostics.error(where, subject, text);
}

}  // namespace

void check_model_shapes(const ConfigTree& tree, const trainer::TrainConfig& config,
                        const ModelPlaces& places, Diagnostics& diagnostics) {
  thread_local std::optional<Fitted> last;
  const trainer::DataShape data = trainer::data_shape(config.data);
  if (data.image.c == 0) return;  // a folder data set that cannot be read: its check says why
  if (fitted_last_time(config.model, data, last)) return;
  try {
    trainer::check_model(config.model, data.image, data.classes);
    last = Fitted{config.model, data.image, data.classes};
  } catch (const trainer::LayerError& e) {
    report(tree, config, places, &e.path(), e.what(), diagnostics);
  } catch (const Error& e) {
    report(tree, config, places, nullptr, e.what(), diagnostics);
  }
}

}  // namespace sweep::config
