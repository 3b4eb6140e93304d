// mase: the command-line tool (MASE's `ch` in spirit). Parses the command line with CLI11 and
// hands the options to one subcommand (cmd_*.cpp). Exit status: 0 on success, 1 on an error
// (one line "mase: error: …" on stderr) or a failed check, 2 on a usage error.
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/core/suggest.hpp>
#include <mase/verilog/target.hpp>
#include <mase/version.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace {

// --target's choices: every target mase knows (verilog/target.hpp).
std::vector<std::string> target_choices() {
  std::vector<std::string> names;
  for (const mase::verilog::target* t : mase::verilog::targets::all) names.emplace_back(t->name);
  return names;
}

using namespace mase_cli;

constexpr int usage_status = 2;

// Messages are one line: a multi-line what() (rare) is joined.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

void add_input_shape_option(CLI::App& sub, std::vector<std::string>& into) {
  sub.add_option("--input-shape", into,
                 "Replace an input's shape in the file (e.g. a symbolic batch dimension): NAME=1,3,224,224; repeatable")
      ->type_name("NAME=DIMS");
}

void add_model_argument(CLI::App& sub, fs::path& into) {
  sub.add_option("model", into, "The ONNX model (.onnx)")->required()->type_name("MODEL.onnx");
}

void add_raise_flag(CLI::App& sub, bool& into) {
  sub.add_flag("--raise", into, "Rewrite the exporter's fine-grained patterns into coarse ops (linear, gelu, "
                                "layer_norm, attention, …) after import: raise_granularity");
}

void add_jobs_option(CLI::App& sub, std::size_t& into) {
  sub.add_option("-j,--jobs", into, "Threads for the evaluator's products (default: one per core); the results are the "
                                    "same, bit for bit, on any number")
      ->type_name("N");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mase: inspect, run, profile and quantize ONNX models with mase (a C++ port of MASE)", "mase"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("mase {}", mase::version));

  info_options info;
  CLI::App* info_cmd = app.add_subcommand("info", "Report a model: inputs and outputs with shapes, parameter count, "
                                                  "every node, node counts per kind and per op");
  add_model_argument(*info_cmd, info.model);
  add_input_shape_option(*info_cmd, info.input_shapes);
  add_raise_flag(*info_cmd, info.raise);
  info_cmd->add_flag("--shapes", info.shapes, "Also print each node's input and result shapes");

  draw_options draw;
  CLI::App* draw_cmd = app.add_subcommand("draw", "Draw the model's graph as Graphviz DOT text or SVG");
  add_model_argument(*draw_cmd, draw.model);
  add_input_shape_option(*draw_cmd, draw.input_shapes);
  add_raise_flag(*draw_cmd, draw.raise);
  draw_cmd->add_option("-o,--output", draw.output, "The drawing: .dot (text) or .svg (needs Graphviz's dot)")
      ->required()
      ->type_name("FILE");

  run_options run;
  CLI::App* run_cmd = app.add_subcommand("run", "Evaluate the model on input files; write one file per graph output");
  add_model_argument(*run_cmd, run.model);
  add_input_shape_option(*run_cmd, run.input_shapes);
  add_raise_flag(*run_cmd, run.raise);
  run_cmd
      ->add_option("-i,--input", run.inputs,
                   "An input tensor: NAME=FILE, FILE an ONNX TensorProto (.pb) or NumPy array (.npy); give each "
                   "input N times for N runs")
      ->required()
      ->type_name("NAME=FILE");
  run_cmd->add_option("-c,--config", run.config, "Quantize first with this MASE TOML config")->type_name("Q.toml");
  run_cmd->add_option("-m,--mode", run.mode, "How to evaluate: float, fake-quant (MASE's software semantics) or "
                                              "bit-exact (the fixed-point hardware's arithmetic); default: fake-quant "
                                              "with --config, else float")
      ->check(CLI::IsMember({"float", "fake-quant", "bit-exact"}));
  run_cmd->add_option("-o,--output-dir", run.output_dir, "Folder for the outputs, one file per graph output named "
                                                         "after it (NAME.pb; NAME_K.pb for run K of several)")
      ->required()
      ->type_name("DIR");
  run_cmd->add_option("-f,--format", run.format, "Output files: pb (ONNX TensorProto) or npy")
      ->check(CLI::IsMember({"pb", "npy"}))
      ->capture_default_str();
  add_jobs_option(*run_cmd, run.jobs);

  profile_options profile;
  CLI::App* profile_cmd = app.add_subcommand(
      "profile", "Profile every weight once and every activation over input batches (MASE's profile_statistics); "
                 "print each entry's range");
  add_model_argument(*profile_cmd, profile.model);
  add_input_shape_option(*profile_cmd, profile.input_shapes);
  add_raise_flag(*profile_cmd, profile.raise);
  profile_cmd
      ->add_option("-i,--input", profile.inputs,
                   "An input batch: NAME=FILE (.pb or .npy); give each input once per batch")
      ->required()
      ->type_name("NAME=FILE");
  profile_cmd->add_option("-n,--batches", profile.batches, "Profile only the first N batches (default: all given)")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  profile_cmd->add_option("--statistic", profile.statistic, "range_min_max or range_quantile (MASE's names)")
      ->check(CLI::IsMember({"range_min_max", "range_quantile"}))
      ->capture_default_str();
  profile_cmd->add_flag("--abs", profile.abs, "Profile absolute values");
  add_jobs_option(*profile_cmd, profile.jobs);

  quantize_options quantize;
  CLI::App* quantize_cmd =
      app.add_subcommand("quantize", "Quantize with a MASE TOML config, print the summary and save a checkpoint");
  add_model_argument(*quantize_cmd, quantize.model);
  add_input_shape_option(*quantize_cmd, quantize.input_shapes);
  add_raise_flag(*quantize_cmd, quantize.raise);
  quantize_cmd->add_option("-c,--config", quantize.config, "The MASE TOML config ([passes.quantize] or top level)")
      ->required()
      ->type_name("Q.toml");
  quantize_cmd
      ->add_option("-i,--input", quantize.inputs,
                   "Run the model on these inputs for add_common_metadata (default: shapes from the ops' rules)")
      ->type_name("NAME=FILE");
  quantize_cmd->add_option("-o,--output", quantize.output, "Checkpoint stem: writes STEM.json and STEM.safetensors "
                                                           "(each new, or a checkpoint mase wrote)")
      ->required()
      ->type_name("STEM");

  onnx_test_options onnx_test;
  CLI::App* onnx_test_cmd = app.add_subcommand(
      "onnx-test", "Run ONNX backend tests: each DIR holds model.onnx and test_data_set_*/, or is a folder of such "
                   "folders");
  onnx_test_cmd->add_option("dirs", onnx_test.dirs, "Test folders, or folders of them")->required()->type_name("DIR");
  add_raise_flag(*onnx_test_cmd, onnx_test.raise);
  onnx_test_cmd->add_flag("--require-all", onnx_test.require_all, "Fail when a test is skipped (unsupported ops)");
  onnx_test_cmd->add_flag("-q,--quiet", onnx_test.quiet, "Print only failures and the summary");
  onnx_test_cmd->add_option("--rtol", onnx_test.rtol, "Relative tolerance")->capture_default_str();
  onnx_test_cmd->add_option("--atol", onnx_test.atol, "Absolute tolerance")->capture_default_str();
  onnx_test_cmd->add_option("-j,--jobs", onnx_test.jobs, "Tests run at once (default: one per core); the report is the "
                                                         "same, in the same order, on any number")
      ->type_name("N");

  emit_verilog_options emit;
  CLI::App* emit_cmd = app.add_subcommand(
      "emit-verilog", "Quantize, emit a streaming SystemVerilog design with a self-checking testbench, and optionally "
                      "lint, simulate and synthesize it");
  add_model_argument(*emit_cmd, emit.model);
  add_input_shape_option(*emit_cmd, emit.input_shapes);
  // Raised by default: the hardware components are coarse ops (an exporter's Erf GELU has none).
  emit_cmd->add_flag("--raise,!--no-raise", emit.raise,
                     "Rewrite the exporter's fine-grained patterns into coarse ops (raise_granularity) before "
                     "quantizing; on by default, --no-raise turns it off");
  emit_cmd->add_option("-c,--config", emit.config, "The MASE TOML config; every node with hardware must be fixed point")
      ->required()
      ->type_name("Q.toml");
  emit_cmd->add_option("-o,--out", emit.out, "The project folder: new, empty, or one mase emitted before (only what mase wrote there is replaced)")
      ->required()
      ->type_name("DIR");
  emit_cmd
      ->add_option("-i,--input", emit.inputs,
                   "Testbench stimulus: NAME=FILE (.pb or .npy), batch dimension = samples (default: random)")
      ->type_name("NAME=FILE");
  emit_cmd->add_option("-n,--samples", emit.samples, "Random stimulus samples when no --input is given")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  emit_cmd
      ->add_option("-p,--parallelism", emit.parallelism,
                   "max_parallelism: lanes of streams, then of a linear layer's output tile (1 to 4 values, "
                   "e.g. -p 4 8 or -p 4,8)")
      ->expected(1, 4)
      ->delimiter(',')
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  emit_cmd->add_option("--simulate", emit.simulators, "Simulate with verilator and/or iverilog (repeatable)")
      ->check(CLI::IsMember({"verilator", "iverilog"}))
      ->type_name("SIMULATOR");
  emit_cmd->add_flag("--channels-last", emit.channels_last,
                     "Stream [N, C, H, W] maps pixel by pixel (H x W x C): convolutions keep k rows of every channel "
                     "instead of two samples, their lanes over output channels");
  emit_cmd->add_flag("--synth", emit.synth,
                     "Implement the design on --target: synthesize with yosys and report the resources; on an iCE40 "
                     "part also place and route with nextpnr-ice40 (utilisation, Fmax) and pack the bitstream");
  emit_cmd->add_option("--target", emit.target, "What --synth implements the design on: xc7 (yosys synth_xilinx), "
                                                "ice40-up5k or ice40-hx8k (synth_ice40, nextpnr-ice40, icepack)")
      ->check(CLI::IsMember(target_choices()))
      ->capture_default_str();
  emit_cmd->add_option("--clock-mhz,--frequency", emit.frequency_mhz,
                       "The target clock in MHz: nextpnr places and routes towards it (iCE40 targets), and the "
                       "report gives the design's rate at it")
      ->check(CLI::PositiveNumber)
      ->type_name("MHZ")
      ->capture_default_str();
  emit_cmd->add_flag("--simulate-netlist", emit.simulate_netlist,
                     "After --synth, simulate the synthesized netlist (yosys write_verilog, the target's cell models) "
                     "with iverilog and the same self-checking testbench")
      ->needs("--synth");
  emit_cmd->add_flag("--lint", emit.lint, "Lint the design with verilator --lint-only -Wall");

  search_command_options search;
  CLI::App* search_cmd = app.add_subcommand(
      "search", "Mixed-precision search with MASE's search TOML: sample per-node formats, evaluate each trial, keep "
                "the Pareto front; writes trials.jsonl (resumable), pareto.csv, pareto.svg, best.toml and pareto/");
  add_model_argument(*search_cmd, search.model);
  add_input_shape_option(*search_cmd, search.input_shapes);
  add_raise_flag(*search_cmd, search.raise);
  search_cmd->add_option("-c,--config", search.config, "MASE's search TOML ([search.search_space], [search.strategy])")
      ->required()
      ->type_name("SEARCH.toml");
  search_cmd->add_option("-d,--data", search.data, "Evaluation inputs: NAME=FILE (.npy or .pb), the batch dimension "
                                                  "holding the samples; once per input")
      ->required()
      ->type_name("NAME=FILE");
  search_cmd->add_option("--labels", search.labels, "One class per sample (.npy or .pb), for the accuracy and loss "
                                                    "metrics")
      ->type_name("FILE");
  search_cmd->add_option("--calibration", search.calibration, "Inputs whose ranges give \"NA\" fraction widths: "
                                                              "NAME=FILE (default: the --data)")
      ->type_name("NAME=FILE");
  search_cmd->add_option("-o,--out", search.out, "The output folder: new, empty, or a search mase wrote (its journal "
                                                  "is resumed; only mase's files there are replaced)")
      ->required()
      ->type_name("DIR");
  search_cmd->add_option("-j,--jobs", search.jobs, "Threads running trials (0: one per core; default: setup.n_jobs)")
      ->type_name("N");
  search_cmd->add_option("--seed", search.seed, "The seed (default: setup.seed, else 0)")->type_name("S");
  search_cmd->add_option("-n,--trials", search.trials, "Trials in all (default: setup.n_trials)")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  search_cmd->add_flag("--synth", search.synth, "Emit every Pareto trial's design into DIR/hardware/trial_N and "
                                                "synthesize it with yosys (synth_xilinx); prints and writes "
                                                "pareto_synthesis.csv, the cost model beside yosys. Needs "
                                                "[search.strategy.hw_runner.hardware]");

  // Set last: subcommands added before would inherit it.
  app.footer("Run 'mase SUBCOMMAND --help' for a subcommand's options.");

  // A first word that is no subcommand (a misspelt one) is named, with the nearest: CLI11 would
  // take it for a stray argument and only say that a subcommand is required.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const std::string near = mase::nearest_names(argv[1], names);
      fmt::print(stderr, "mase: error: unknown subcommand \"{}\"{}; the subcommands are {} (see mase --help)\n",
                 argv[1], near.empty() ? "" : fmt::format(" (did you mean {}?)", near), fmt::join(names, ", "));
      return usage_status;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "mase: error: {} (see mase --help)\n", one_line(e.what()));
    return usage_status;
  }

  try {
    if (info_cmd->parsed()) return run_info(info);
    if (draw_cmd->parsed()) return run_draw(draw);
    if (run_cmd->parsed()) return run_run(run);
    if (profile_cmd->parsed()) return run_profile(profile);
    if (quantize_cmd->parsed()) return run_quantize(quantize);
    if (onnx_test_cmd->parsed()) return run_onnx_test(onnx_test);
    if (emit_cmd->parsed()) return run_emit_verilog(emit);
    if (search_cmd->parsed()) return run_search(search);
    return usage_status;  // require_subcommand(1) makes this unreachable
  } catch (const usage_error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "mase: error: {} (see mase {} --help)\n", one_line(e.what()),
               app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name());
    return usage_status;
  } catch (const std::exception& e) {  // mase::error and everything else
    std::fflush(stdout);
    fmt::print(stderr, "mase: error: {}\n", one_line(e.what()));
    return 1;
  }
}
