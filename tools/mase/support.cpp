// Helpers the subcommands share: loading models and tensor files, grouping --input options into
// runs, and the progress bar.
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/io/npy.hpp>
#include <mase/io/onnx.hpp>
#include <mase/pass/raise_granularity.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

#include <unistd.h>  // isatty

#include <fmt/format.h>

namespace mase_cli {

void raise_in_place(mase::graph& g) { mase::raise_granularity_of(g); }

void refuse_outputs_over_inputs(std::string_view command, const std::vector<fs::path>& outputs,
                                const std::vector<fs::path>& inputs, std::string_view option) {
  for (const fs::path& out : outputs)
    for (const fs::path& in : inputs) {
      std::error_code ec;
      if (fs::equivalent(out, in, ec))
        throw mase::error(fmt::format("the output {} would overwrite {}, which mase {} reads; choose another {}",
                                      out.string(), in.string(), command, option));
    }
}

std::vector<fs::path> assigned_files(const std::vector<std::string>& assignments, std::string_view option) {
  std::vector<fs::path> files;
  for (const std::string& text : assignments) files.emplace_back(split_assignment(text, option).second);
  return files;
}

loaded_model load_model(const fs::path& file, const std::vector<std::string>& input_shapes, bool raise,
                        const std::vector<std::string>& inputs, bool one_sample, std::string_view data_option) {
  mase::onnx::import_options options;
  options.input_shapes = parse_input_shapes(input_shapes);
  // The first file of each --input: a model exported with a symbolic batch takes it from there.
  mase::ordered_map<std::string> data_files;
  mase::ordered_map<mase::shape> file_shapes;  // as in the files (one_sample changes the leading one)
  for (const std::string& text : inputs) {
    auto [name, data_file] = split_assignment(text, data_option);
    if (data_files.contains(name)) continue;
    const mase::shape in_file = read_tensor_file(data_file).shape();
    mase::shape data_shape = in_file;
    if (one_sample && !data_shape.empty()) data_shape[0] = 1;
    if (const auto given = options.input_shapes.find(name); given != options.input_shapes.end()) {
      // --input-shape sizes the model; the file must still fit it.
      if (given->second != data_shape)
        throw mase::error(fmt::format("{} {}: the file has shape {}{}, and --input-shape gives {} the shape {}; drop "
                                      "--input-shape (the file sizes the model) or give data of that shape",
                                      data_option, text, mase::to_string(in_file),
                                      one_sample ? fmt::format(" (one sample: {})", mase::to_string(data_shape)) : "",
                                      name, mase::to_string(given->second)));
    } else {
      options.data_shapes.insert_or_assign(name, data_shape);
    }
    file_shapes.insert_or_assign(name, in_file);
    data_files.insert_or_assign(std::move(name), std::move(data_file));
  }
  const auto without_source = [&](std::string_view what) {
    if (const std::string source = file.string() + ": "; what.starts_with(source)) what.remove_prefix(source.size());
    return std::string(what);
  };
  mase::onnx::imported_model m;
  try {
    m = mase::onnx::load_model(file, options);
  } catch (const mase::onnx::input_data_mismatch& e) {
    std::string given, read_as;
    for (const std::string& name : e.inputs) {
      given += fmt::format("{}{}={}", given.empty() ? "" : ", ", name, data_files.at(name));
      if (one_sample && file_shapes.contains(name))
        read_as += fmt::format("; the design takes one sample at a time, so {}'s shape {} is read as {}",
                               data_files.at(name), mase::to_string(file_shapes.at(name)),
                               mase::to_string(options.data_shapes.at(name)));
    }
    throw mase::error(fmt::format("{} on {}: {}{}", file.string(), given, without_source(e.what()), read_as));
  } catch (const mase::onnx::unknown_input& e) {
    std::string names;
    for (const std::string& n : e.graph_inputs) names += fmt::format("{}{}", names.empty() ? "" : ", ", n);
    const std::string option = e.in_data_shapes ? std::string(data_option) : std::string("--input-shape");
    std::string text;
    for (const std::string& t : e.in_data_shapes ? inputs : input_shapes)
      if (t.starts_with(e.name + "=")) text = t;
    throw usage_error(fmt::format("{} {}: the model {} has no input \"{}\"; its inputs are: {}", option, text,
                                  file.string(), e.name, names.empty() ? "(none)" : names));
  } catch (const mase::onnx::unsized_input& e) {
    throw mase::error(fmt::format("{}: graph input \"{}\" has a symbolic dimension{}; give its shape with --input-shape "
                                  "{}=…{}",
                                  file.string(), e.input,
                                  e.dimension.empty() ? std::string() : fmt::format(" \"{}\"", e.dimension), e.input,
                                  data_option.empty() ? std::string()
                                                      : fmt::format(", or its data with {} {}=FILE", data_option, e.input)));
  }
  loaded_model out{.file = file, .graph = std::move(m.graph), .inputs = {}, .outputs = {}, .opset = m.opset,
                   .producer = std::move(m.producer)};
  for (mase::onnx::port& p : m.inputs) out.inputs.push_back({std::move(p.onnx_name), std::move(p.node)});
  for (mase::onnx::port& p : m.outputs) out.outputs.push_back({std::move(p.onnx_name), std::move(p.node)});
  if (raise) {
    raise_in_place(out.graph);
    // A rewrite may rename the node that carries an output (it takes its pattern's first name).
    const auto& reads = out.graph[*out.graph.output()].inputs;
    for (std::size_t i = 0; i < out.outputs.size() && i < reads.size(); ++i) out.outputs[i].node = out.graph[reads[i]].name;
  }
  return out;
}

mase::tensor read_tensor_file(const fs::path& file) {
  const std::string extension = file.extension().string();
  if (extension == ".pb") return mase::onnx::load_tensor(file);
  if (extension == ".npy") return mase::npy::load(file);
  throw mase::error(fmt::format("cannot load {}: unknown extension \"{}\"; give an ONNX TensorProto (.pb) or a "
                                "NumPy array (.npy)",
                                file.string(), extension));
}

std::string file_name_for(std::string_view onnx_name) {
  std::string name(onnx_name);
  for (char& c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                       c == '-' || c == '_';
    if (!plain) c = '_';
  }
  if (name.empty() || name == "." || name == "..") name.insert(0, 1, '_');  // (not "_" + name: GCC 12 -Wrestrict)
  return name;
}

fs::path tensor_file_path(const fs::path& dir, std::string_view stem, std::string_view format) {
  return dir / fmt::format("{}.{}", file_name_for(stem), format);
}

fs::path write_tensor_file(const fs::path& dir, std::string_view stem, std::string_view tensor_name,
                           const mase::tensor& t, std::string_view format) {
  const fs::path file = tensor_file_path(dir, stem, format);
  if (format == "npy") mase::npy::save(file, t);
  else mase::onnx::save_tensor(file, t, tensor_name);
  return file;
}

input_batches::input_batches(const loaded_model& model, const std::vector<std::string>& inputs, std::string_view option) {
  if (inputs.empty()) return;
  for (const std::string& text : inputs) {
    // (Not a structured binding: clang 14 cannot capture one in the lambda below.)
    const std::pair<std::string, std::string> assignment = split_assignment(text, option);
    const std::string& name = assignment.first;
    const std::string& file = assignment.second;
    const auto port = std::find_if(model.inputs.begin(), model.inputs.end(),
                                   [&](const model_port& p) { return p.onnx_name == name; });
    if (port == model.inputs.end()) {
      std::string names;
      for (const model_port& p : model.inputs) names += fmt::format("{}{}", names.empty() ? "" : ", ", p.onnx_name);
      throw usage_error(fmt::format("{} {}: the model {} has no input \"{}\"; its inputs are: {}", option, text,
                                    model.file.string(), name, names.empty() ? "(none)" : names));
    }
    auto entry = std::find_if(files_.begin(), files_.end(), [&](const input_files& e) { return e.node == port->node; });
    if (entry == files_.end()) entry = files_.insert(files_.end(), {port->node, port->onnx_name, {}});
    entry->files.emplace_back(file);
  }
  runs_ = files_.front().files.size();
  for (const model_port& p : model.inputs) {
    const auto entry = std::find_if(files_.begin(), files_.end(), [&](const input_files& e) { return e.node == p.node; });
    if (entry == files_.end())
      throw usage_error(fmt::format("the model's input \"{}\" has no {}; add {} {}=FILE", p.onnx_name, option, option,
                                    p.onnx_name));
    if (entry->files.size() != runs_)
      throw usage_error(fmt::format("{} gives the model's inputs different numbers of files ({} for \"{}\", {} for "
                                    "\"{}\"); give each input once per run",
                                    option, runs_, files_.front().onnx_name, entry->files.size(), p.onnx_name));
  }
}

mase::ordered_map<mase::tensor> input_batches::load(std::size_t k) const {
  mase::ordered_map<mase::tensor> batch;
  for (const input_files& e : files_) batch.insert_or_assign(e.node, read_tensor_file(e.files.at(k)));
  return batch;
}

std::string input_batches::describe(std::size_t k) const {
  std::string text;
  for (const input_files& e : files_)
    text += fmt::format("{}{}={}", text.empty() ? "" : ", ", e.onnx_name, e.files.at(k).string());
  return text;
}

progress_bar::progress_bar(std::string label, std::size_t total)
    : label_(std::move(label)), total_(total), enabled_(total > 0 && ::isatty(::fileno(stderr)) != 0) {
  update(0);
}

progress_bar::~progress_bar() { clear(); }

void progress_bar::update(std::size_t done, std::string_view status) {
  done_ = std::min(done, total_);
  status_ = status;
  if (!enabled_) return;
  constexpr std::size_t width = 30;
  const std::size_t filled = total_ == 0 ? width : done_ * width / total_;
  fmt::print(stderr, "\r{} [{}{}] {}/{}{}{}\x1b[K", label_, std::string(filled, '#'), std::string(width - filled, '.'),
             done_, total_, status_.empty() ? "" : " ", status_);
  std::fflush(stderr);
  drawn_ = true;
}

void progress_bar::clear() {
  if (!drawn_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace mase_cli
