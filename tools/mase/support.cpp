// Helpers the subcommands share: loading models and tensor files, grouping --input options into
// runs, and the progress bar.
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/io/npy.hpp>
#include <mase/io/onnx.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/raise_granularity.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <system_error>
#include <variant>

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
                        const std::vector<std::string>& inputs, bool one_sample, std::string_view data_option,
                        std::int64_t symbolic_placeholder) {
  mase::onnx::import_options options;
  options.input_shapes = parse_input_shapes(input_shapes);
  options.symbolic_placeholder = symbolic_placeholder;
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
                   .producer = std::move(m.producer), .symbolic = {}};
  for (mase::onnx::port& p : m.inputs) out.inputs.push_back({std::move(p.onnx_name), std::move(p.node)});
  for (mase::onnx::port& p : m.outputs) out.outputs.push_back({std::move(p.onnx_name), std::move(p.node)});
  for (const mase::onnx::symbolic_dimension& d : m.symbolic_dimensions) {
    symbolic_dimension& s = out.symbolic.emplace_back(symbolic_dimension{.name = d.name, .size = d.size, .uses = {}});
    for (const auto& use : d.uses) s.uses.push_back(fmt::format("{}[{}]", use.input, use.axis));
  }
  if (raise) {
    raise_in_place(out.graph);
    // A rewrite may rename the node that carries an output (it takes its pattern's first name).
    const auto& reads = out.graph[*out.graph.output()].inputs;
    for (std::size_t i = 0; i < out.outputs.size() && i < reads.size(); ++i) out.outputs[i].node = out.graph[reads[i]].name;
  }
  return out;
}

namespace {

// The placeholder sizes of describe_model's two imports (the k-th symbol gets first + k and
// second + k): not 1, which broadcasts against anything, and unlike the sizes models use.
constexpr std::int64_t first_placeholder = 53;
constexpr std::int64_t second_placeholder = 59;

// init_metadata | add_common_metadata's shapes, or why they cannot be inferred.
std::optional<std::string> with_shapes(const mase::graph& g, mase::graph& out) {
  try {
    out = mase::graph(g | mase::init_metadata | mase::add_common_metadata);
    return std::nullopt;
  } catch (const mase::error& e) {
    out = g;
    return std::string(e.what());
  }
}

// The shape a node's metadata records in `slot` (a result, or a data_in_* arg).
const mase::shape* recorded_shape(const mase::node& n, std::string_view slot) {
  const std::string key(slot);
  if (const auto r = n.meta.common.results.find(key); r != n.meta.common.results.end()) return &r->second.shape;
  if (const auto a = n.meta.common.args.find(key); a != n.meta.common.args.end())
    if (const auto* t = std::get_if<mase::tensor_meta>(&a->second)) return &t->shape;
  return nullptr;
}

// One number, `a` in the first import and `b` in the second.
std::string dimension_text(std::int64_t a, std::int64_t b, const std::vector<symbolic_dimension>& first,
                           const std::vector<symbolic_dimension>& second) {
  if (a == b) return std::to_string(a);
  const std::size_t symbols = std::min(first.size(), second.size());
  for (std::size_t k = 0; k < symbols; ++k)
    if (a == first[k].size && b == second[k].size) return first[k].name.empty() ? "?" : first[k].name;
  // A multiple of one named symbol (a flattened [batch, 784] is 784*batch).
  for (std::size_t k = 0; k < symbols; ++k)
    if (!first[k].name.empty() && a % first[k].size == 0 && b % second[k].size == 0 &&
        a / first[k].size == b / second[k].size)
      return fmt::format("{}*{}", a / first[k].size, first[k].name);
  return "?";
}

// A text of the first import beside the same text of the second: each run of digits that differs
// is a dimension that depends on the symbols (dimension_text); texts that differ otherwise are "?".
std::string merged_text(std::string_view a, std::string_view b, const std::vector<symbolic_dimension>& first,
                        const std::vector<symbolic_dimension>& second) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto digits = [&](std::string_view text, std::size_t from) {
    std::size_t to = from;
    while (to < text.size() && digit(text[to])) ++to;
    return text.substr(from, to - from);
  };
  std::string out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      const std::string_view x = digits(a, i), y = digits(b, j);
      i += x.size();
      j += y.size();
      std::int64_t u = 0, v = 0;
      const bool numbers = std::from_chars(x.data(), x.data() + x.size(), u).ec == std::errc{} &&
                           std::from_chars(y.data(), y.data() + y.size(), v).ec == std::errc{};
      out += x == y ? std::string(x) : numbers ? dimension_text(u, v, first, second) : std::string("?");
    } else if (a[i] == b[j] && !digit(a[i])) {
      out += a[i];
      ++i;
      ++j;
    } else {
      return "?";
    }
  }
  return i == a.size() && j == b.size() ? out : std::string("?");
}

}  // namespace

described_model describe_model(const fs::path& file, const std::vector<std::string>& input_shapes, bool raise) {
  described_model d{.model = load_model(file, input_shapes, raise, {}, false, "", first_placeholder),
                    .graph = {}, .shape_problem = std::nullopt, .respell = {}, .other = {}, .merge = {}};
  d.shape_problem = with_shapes(d.model.graph, d.graph);
  if (d.model.symbolic.empty()) return d;
  // The same model with other placeholders: what differs follows the symbols.
  const loaded_model other = load_model(file, input_shapes, raise, {}, false, "", second_placeholder);
  auto other_graph = std::make_shared<mase::graph>();
  if (d.shape_problem) {
    *other_graph = other.graph;
  } else if (auto problem = with_shapes(other.graph, *other_graph)) {
    // Shapes that hold for one size only are not the model's.
    d.shape_problem = fmt::format("with other sizes for {}: {}", describe_symbolic(d.model.symbolic), *problem);
    d.graph = d.model.graph;
  }
  d.other = std::move(other_graph);
  d.merge = [first = d.model.symbolic, second = other.symbolic](std::string_view a, std::string_view b) {
    return merged_text(a, b, first, second);
  };
  d.respell = [others = d.other, merge = d.merge](const mase::node& n, std::string_view part,
                                                  std::string text) -> std::string {
    const auto id = others->find(n.name);
    if (!id) return "?";
    const mase::node& m = (*others)[*id];
    if (part == "op") return merge(text, mase::to_string(m.op));
    if (part == "attributes") return merge(text, mase::attributes_to_string(m.op));
    const mase::shape* s = recorded_shape(m, part);
    return s == nullptr ? std::string("?") : merge(text, mase::to_string(*s));
  };
  return d;
}

std::string describe_symbolic(const std::vector<symbolic_dimension>& symbolic) {
  std::string text;
  for (const symbolic_dimension& s : symbolic) {
    std::string uses;
    for (const std::string& u : s.uses) uses += fmt::format("{}{}", uses.empty() ? "" : ", ", u);
    text += fmt::format("{}{} ({})", text.empty() ? "" : ", ", s.name.empty() ? "an unnamed dimension" : s.name, uses);
  }
  return text;
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
