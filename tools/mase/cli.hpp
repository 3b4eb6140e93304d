#pragma once
// The mase command-line tool: what main.cpp parses (with CLI11) and hands to each subcommand,
// and the helpers the subcommands share (support.cpp, quantize_flow.cpp).
//
// Each subcommand lives in its own translation unit (cmd_*.cpp) and only main.cpp includes
// CLI11, so that the template-heavy headers are compiled once per unit that needs them.

#include <mase/core/ordered_map.hpp>
#include <mase/core/tensor.hpp>
#include <mase/ir/graph.hpp>

#include "option_parsing.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mase_cli {

namespace fs = std::filesystem;

// usage_error, split_assignment and the --input-shape parser are in option_parsing.hpp.

// --- options, as parsed ---------------------------------------------------------------------

struct info_options {
  fs::path model;
  std::vector<std::string> input_shapes;  // NAME=1,3,224,224
  bool raise = false;                     // raise_granularity after import
  bool shapes = false;                    // also the per-node shape table
};

struct draw_options {
  fs::path model;
  std::vector<std::string> input_shapes;
  bool raise = false;
  fs::path output;  // .dot or .svg
};

struct run_options {
  fs::path model;
  std::vector<std::string> input_shapes;
  bool raise = false;
  std::vector<std::string> inputs;  // NAME=FILE, repeated for several runs
  std::optional<fs::path> config;
  std::string mode;            // float | fake-quant | bit-exact; empty: fake-quant with a config, else float
  fs::path output_dir;
  std::string format = "pb";  // pb | npy
  std::size_t jobs = 0;       // evaluator threads; 0: one per core
};

struct profile_options {
  fs::path model;
  std::vector<std::string> input_shapes;
  bool raise = false;
  std::vector<std::string> inputs;  // NAME=FILE, one batch per repetition
  std::optional<std::size_t> batches;
  std::string statistic = "range_min_max";  // range_min_max | range_quantile
  bool abs = false;
  std::size_t jobs = 0;  // evaluator threads; 0: one per core
};

struct quantize_options {
  fs::path model;
  std::vector<std::string> input_shapes;
  bool raise = false;
  fs::path config;
  std::vector<std::string> inputs;  // optional: a dummy run for add_common_metadata
  fs::path output;                  // checkpoint stem
};

struct onnx_test_options {
  std::vector<fs::path> dirs;
  bool raise = false;
  bool require_all = false;
  bool quiet = false;
  double rtol = 1e-3;
  double atol = 1e-7;
  std::size_t jobs = 0;  // tests run at once (0: one per core)
};

struct emit_verilog_options {
  fs::path model;
  std::vector<std::string> input_shapes;
  bool raise = true;  // the components are coarse ops (linear, gelu, …), not the exporter's fine-grained patterns
  fs::path config;
  fs::path out;
  std::vector<std::string> inputs;  // optional testbench stimulus, NAME=FILE
  std::int64_t samples = 8;         // random stimulus samples when no --input is given
  std::vector<int> parallelism{4, 4};  // max_parallelism: [0] streams, [1] linear output tiles
  std::vector<std::string> simulators;  // verilator | iverilog
  bool channels_last = false;           // hardware_options::channels_last
  bool synth = false;
  std::string target = "xc7";     // verilog/target.hpp: what --synth implements the design on
  double frequency_mhz = 12;      // the target clock: nextpnr's, and the report's rate
  bool simulate_netlist = false;  // after synth: the netlist runs the testbench
  bool lint = false;
};

struct search_command_options {
  fs::path model;
  std::vector<std::string> input_shapes;
  bool raise = false;
  fs::path config;                       // MASE's search TOML
  std::vector<std::string> data;         // NAME=FILE: the evaluation inputs, one batch
  std::optional<fs::path> labels;        // one class per sample, for accuracy and loss
  std::vector<std::string> calibration;  // NAME=FILE: ranges for "NA" fraction widths (default: the data)
  fs::path out;
  std::optional<std::size_t> jobs;       // overrides setup.n_jobs
  std::optional<std::uint64_t> seed;     // overrides setup.seed
  std::optional<std::size_t> trials;     // overrides setup.n_trials
  bool synth = false;                    // emit and synthesize the front's designs with yosys
};

// Each returns the process's exit status; errors are thrown (mase::error, usage_error).
int run_info(const info_options& o);
int run_draw(const draw_options& o);
int run_run(const run_options& o);
int run_profile(const profile_options& o);
int run_quantize(const quantize_options& o);
int run_onnx_test(const onnx_test_options& o);
int run_emit_verilog(const emit_verilog_options& o);
int run_search(const search_command_options& o);

// --- shared helpers (support.cpp) -----------------------------------------------------------

// An ONNX model as the tool needs it; kept free of the ONNX headers so that only support.cpp and
// cmd_onnx_test.cpp compile them.
struct model_port {
  std::string onnx_name;
  std::string node;
};
// A graph input's dimension that the file leaves symbolic, imported with a placeholder size
// (load_model's symbolic_placeholder).
struct symbolic_dimension {
  std::string name;               // "batch"; empty when the file leaves it unnamed
  std::int64_t size = 0;          // the placeholder
  std::vector<std::string> uses;  // where the inputs declare it: "x[0]"
};
struct loaded_model {
  fs::path file;
  mase::graph graph;
  std::vector<model_port> inputs;   // placeholders, in the file's order
  std::vector<model_port> outputs;  // what the output node reads, in the file's order
  std::int64_t opset = 0;
  std::string producer;
  std::vector<symbolic_dimension> symbolic;
};

// Loads `file` with --input-shape overrides ("x=1,3,224,224"); with `raise`, then rewrites
// the exporter's fine-grained patterns into coarse ops (raise_granularity). `inputs` are the
// command's --input NAME=FILE options: the first file of each input gives the model's symbolic
// dimensions their sizes (import_options::data_shapes), and a file whose shape contradicts the
// model is an error naming it. With `one_sample`, the model is imported for one sample of each
// file (its leading dimension 1): a design streams the files' samples one after another.
// `data_option` is the command's option for the files (--input, --data), named in messages;
// empty for a command without one. A `symbolic_placeholder` above 0 gives the symbolic
// dimensions left unsized placeholder sizes instead of failing (import_options'
// symbolic_placeholder): for describing a model, never for running it.
loaded_model load_model(const fs::path& file, const std::vector<std::string>& input_shapes, bool raise,
                        const std::vector<std::string>& inputs = {}, bool one_sample = false,
                        std::string_view data_option = "--input", std::int64_t symbolic_placeholder = 0);

// A model described without its data (mase info, mase draw). The symbolic dimensions that no
// --input-shape sizes get placeholder sizes, twice with different ones: a dimension that follows
// a symbol in both imports is shown by the symbol's name.
struct described_model {
  loaded_model model;  // imported with the first placeholders (model.symbolic lists them)
  // model.graph after init_metadata | add_common_metadata; model.graph as it is, and
  // shape_problem saying why, when the shapes cannot be inferred.
  mase::graph graph;
  std::optional<std::string> shape_problem;
  // Respells what info and draw show of graph's nodes (mase::node_text): a number that follows a
  // symbol by its name ("[batch, 10]", "784*batch"), one that depends on symbols otherwise as
  // "?". Empty when nothing is symbolic (the numbers are then the model's).
  std::function<std::string(const mase::node&, std::string_view, std::string)> respell;
  // The second import (with shapes where graph has them), and the merge of a text of graph's
  // with the same text of other's, as respell spells them; both empty when nothing is symbolic.
  std::shared_ptr<const mase::graph> other;
  std::function<std::string(std::string_view, std::string_view)> merge;
};
described_model describe_model(const fs::path& file, const std::vector<std::string>& input_shapes, bool raise);
// "batch (x[0])", "an unnamed dimension (x[1])": the symbolic dimensions, for messages.
std::string describe_symbolic(const std::vector<symbolic_dimension>& symbolic);
// Refuses (mase::error) an output file that is one of the command's inputs, the same file by any
// path or link: `command` and `option` (the output's flag) name them in the message.
void refuse_outputs_over_inputs(std::string_view command, const std::vector<fs::path>& outputs,
                                const std::vector<fs::path>& inputs, std::string_view option);
// The files of NAME=FILE options.
std::vector<fs::path> assigned_files(const std::vector<std::string>& assignments, std::string_view option);
// raise_granularity in place, as a plain function (what backend_test_options::transform takes).
void raise_in_place(mase::graph& g);

// A tensor file by extension: .pb (ONNX TensorProto) or .npy.
mase::tensor read_tensor_file(const fs::path& file);
// Writes `t` as `<dir>/<file_name_for(stem)>.<format>` ("pb" or "npy"); a TensorProto records
// `tensor_name`. Returns the path written.
fs::path write_tensor_file(const fs::path& dir, std::string_view stem, std::string_view tensor_name,
                           const mase::tensor& t, std::string_view format);
// Where write_tensor_file puts the tensor `stem` in `dir` ("pb" or "npy").
fs::path tensor_file_path(const fs::path& dir, std::string_view stem, std::string_view format);
// An ONNX name as a file name: characters other than letters, digits, '.', '-' and '_' become '_'.
std::string file_name_for(std::string_view onnx_name);

// --input NAME=FILE options grouped into runs: the k-th occurrence of each name is run k. Every
// model input must be given, each the same number of times.
class input_batches {
public:
  input_batches(const loaded_model& model, const std::vector<std::string>& inputs, std::string_view option = "--input");
  std::size_t size() const noexcept { return runs_; }
  bool empty() const noexcept { return runs_ == 0; }
  // Run k's inputs, read from their files, by placeholder node name (what the evaluator takes).
  mase::ordered_map<mase::tensor> load(std::size_t k) const;
  // Run k's files, for messages: "x=a.pb, mask=m.npy".
  std::string describe(std::size_t k) const;

private:
  struct input_files {
    std::string node;       // the placeholder
    std::string onnx_name;  // as the user named it
    std::vector<fs::path> files;
  };
  std::vector<input_files> files_;
  std::size_t runs_ = 0;
};

// A progress bar on stderr, drawn only when stderr is a terminal (quiet in pipes and logs).
class progress_bar {
public:
  progress_bar(std::string label, std::size_t total);
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;
  ~progress_bar();
  // `status` follows the count on the same line (e.g. "3.1 trials/s, best 0.97, 12 s left").
  void update(std::size_t done, std::string_view status = {});
  // Removes the bar from the line (before printing something else to the terminal).
  void clear();
  bool enabled() const noexcept { return enabled_; }

private:
  std::string label_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::string status_;
  bool enabled_;
  bool drawn_ = false;
};

// --- the quantization flow (quantize_flow.cpp) ----------------------------------------------

struct quantized_model {
  mase::graph before;     // after add_common_metadata, float32 everywhere
  mase::graph quantized;  // after quantize
  std::string summary;    // summarize_quantization's table
  std::string derived_formats;  // the formats the config did not give (node_quantization::derived), as a table; empty when none
  std::size_t quantized_nodes = 0;
  std::size_t bypassed_nodes = 0;
};

// init_metadata | add_common_metadata (a run on `dummy_inputs` when given, else the shape rules)
// | quantize(the TOML config in `config`). `for_hardware` gives results the config leaves float a
// format the hardware components take (quantize_config::hardware_formats).
quantized_model quantize_graph(const mase::graph& g, const fs::path& config,
                               const mase::ordered_map<mase::tensor>* dummy_inputs, bool for_hardware = false);

}  // namespace mase_cli
