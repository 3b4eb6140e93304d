#pragma once
// Running simulators and synthesis on an emitted project (verilog/tools.hpp declares it): inline in
// the header-only mode, compiled once in mase::mase (src/verilog.cpp) otherwise.

#include <mase/core/child_process.hpp>
#include <mase/core/project_folder.hpp>
#include <mase/verilog/tools.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/verilog/tools.hpp> instead"
#endif

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace mase::verilog {

MASE_COMPILED_INLINE std::string_view to_string(simulator s) noexcept { return s == simulator::verilator ? "verilator" : "iverilog"; }

MASE_COMPILED_INLINE simulator simulator_from_string(std::string_view name) {
  if (name == "verilator") return simulator::verilator;
  if (name == "iverilog" || name == "icarus") return simulator::iverilog;
  throw error(fmt::format("unknown simulator \"{}\"; the simulators are verilator and iverilog", name));
}

namespace detail {
MASE_COMPILED_INLINE std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

MASE_COMPILED_INLINE std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

MASE_COMPILED_INLINE std::string tail(const std::string& text, std::size_t lines) {
  std::size_t at = text.size();
  for (std::size_t n = 0; n <= lines && at > 0; ++n) {
    const std::size_t nl = text.rfind('\n', at - 1);
    if (nl == std::string::npos) return text;
    at = nl;
  }
  return at >= text.size() ? std::string() : text.substr(at + 1);
}

// Runs `command` in `dir`, its output to `log` (relative to dir), in a process group that ends
// with this process (core/child_process.hpp); returns the exit status.
MASE_COMPILED_INLINE int run_in(const fs::path& dir, const std::string& command, const fs::path& log) {
  std::error_code ec;
  fs::create_directories(dir / log.parent_path(), ec);
  const std::string line =
      fmt::format("cd {} && ( {} ) > {} 2>&1", shell_quote(dir.string()), command, shell_quote(log.string()));
  return run_shell(line, command.substr(0, command.find(' ')));
}

MASE_COMPILED_INLINE void require_tool(const char* program, const char* package) {
  const std::string probe = fmt::format("command -v {} > /dev/null 2>&1", program);
  require(run_shell(probe, program) == 0, "{} is not installed; install it with apt-get install {}", program, package);
}

MASE_COMPILED_INLINE std::string file_list(const std::vector<fs::path>& files, const fs::path& dir) {
  std::string list;
  for (const fs::path& f : files) {
    list += ' ';
    list += shell_quote(fs::relative(f, dir).string());
  }
  return list;
}

MASE_COMPILED_INLINE std::vector<fs::path> rtl_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir / "rtl"))
    if (entry.path().extension() == ".sv") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace detail

namespace detail {
// The testbench's verdict in a simulation's log.
MASE_COMPILED_INLINE simulation_result read_verdict(const fs::path& dir, const fs::path& log, std::string_view run,
                                                    int status) {
  simulation_result r;
  r.log = read_all(dir / log);
  std::smatch m;
  static const std::regex verdict(R"((\d+) passed, (\d+) failed, (\d+) cycles)");
  require(std::regex_search(r.log, m, verdict), "simulate: the {} run of {} printed no verdict (exit status {}):\n{}",
          run, dir.string(), status, tail(r.log, 20));
  r.passed = std::stoll(m[1]);
  r.failed = std::stoll(m[2]);
  r.cycles = std::stoll(m[3]);
  static const std::regex steady(R"(steady state: (-?\d+) cycles for the last (\d+) samples)");
  if (std::regex_search(r.log, m, steady)) {
    r.steady_cycles = std::stoll(m[1]);
    r.steady_samples = std::stoll(m[2]);
  }
  return r;
}
}  // namespace detail

MASE_COMPILED_INLINE simulation_result simulate(const fs::path& project, simulator sim, const simulate_options& options) {
  const fs::path dir = fs::absolute(project);
  require_project(dir, "verilog", "simulate");
  require(fs::exists(dir / "tb" / "tb.sv"), "simulate: {} has no tb/tb.sv; emit the project first", dir.string());
  const std::string sources = detail::file_list(detail::rtl_files(dir), dir);
  const std::string stall = fmt::format("+stall={}", options.stall_percent);
  fs::path log;
  int status = 0;  // the simulation's exit status
  if (sim == simulator::verilator) {
    detail::require_tool("verilator", "verilator");
    log = "sim/verilator.log";
    const std::string build = fmt::format(
        "verilator --cc --exe --build -j 2 -Wno-fatal -Wno-lint -Wno-style --top-module tb -Mdir sim/verilator "
        "-o Vtb tb/tb.sv{} {}",
        sources, detail::shell_quote((dir / "tb" / "sim_main.cpp").string()));  // make runs in sim/verilator
    if (detail::run_in(dir, build, "sim/verilator_build.log") != 0)
      throw error(fmt::format("simulate: Verilator could not build {}:\n{}", dir.string(),
                              detail::tail(detail::read_all(dir / "sim/verilator_build.log"), 20)));
    // Verilator's model of a large design (a matmul's whole second operand as one wide vector)
    // can keep megabytes of temporaries on the stack: run it with the largest stack allowed.
    status = detail::run_in(dir, fmt::format("ulimit -s unlimited 2>/dev/null || ulimit -s \"$(ulimit -H -s)\"; sim/verilator/Vtb {}", stall), log);
  } else {
    detail::require_tool("iverilog", "iverilog");
    log = "sim/iverilog.log";
    if (detail::run_in(dir, fmt::format("iverilog -g2012 -s tb -o sim/tb.vvp tb/tb.sv{}", sources),
                       "sim/iverilog_build.log") != 0)
      throw error(fmt::format("simulate: Icarus Verilog could not compile {}:\n{}", dir.string(),
                              detail::tail(detail::read_all(dir / "sim/iverilog_build.log"), 20)));
    status = detail::run_in(dir, fmt::format("vvp -n sim/tb.vvp {}", stall), log);
  }
  return detail::read_verdict(dir, log, to_string(sim), status);
}

MASE_COMPILED_INLINE std::string lint(const fs::path& project) {
  detail::require_tool("verilator", "verilator");
  const fs::path dir = fs::absolute(project);
  require_project(dir, "verilog", "lint");
  const std::string sources = detail::file_list(detail::rtl_files(dir), dir);
  const int status =
      detail::run_in(dir, fmt::format("verilator --lint-only -Wall --top-module top{}", sources), "sim/lint.log");
  const std::string log = detail::read_all(dir / "sim/lint.log");
  if (status == 0 && log.find("%Warning") == std::string::npos && log.find("%Error") == std::string::npos) return {};
  return log.empty() ? fmt::format("verilator exited with status {}", status) : log;
}

namespace detail {
// The target of a project's last synthesis: reports/target.txt names it; a report without one is xc7's.
MASE_COMPILED_INLINE const target& synthesized_target(const fs::path& dir) {
  if (!fs::exists(dir / "reports/target.txt")) return targets::xc7;
  std::string name = read_all(dir / "reports/target.txt");
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  return target_from_string(name);
}
}  // namespace detail

MASE_COMPILED_INLINE synthesis_report read_synthesis_report(const fs::path& project) {
  const fs::path dir = fs::absolute(project);
  require(fs::exists(dir / "reports/utilization.txt"), "read_synthesis_report: {} has no reports/utilization.txt; run "
          "synthesize first", dir.string());
  synthesis_report r;
  const target& t = detail::synthesized_target(dir);
  r.target = std::string(t.name);
  r.stat = detail::read_all(dir / "reports/utilization.txt");
  std::istringstream lines(r.stat);
  std::string line;
  static const std::regex cell_count(R"(^\s+(\S+)\s+(\d+)\s*$)");
  static const std::regex total(R"(Number of cells:\s+(\d+))");
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, total)) {
      r.cells = std::stoll(m[1]);
    } else if (std::regex_match(line, m, cell_count)) {
      const cell_rule* rule = cell_rule_of(t, m[1].str());
      if (rule == nullptr) continue;
      const std::int64_t n = std::stoll(m[2]);
      switch (rule->role) {
        case cell_role::flip_flop: r.flip_flops += n; break;
        case cell_role::lut: r.luts += n; break;
        case cell_role::dsp: r.multipliers += n; break;
        case cell_role::block_ram:
          r.block_rams += n;
          if (t.family == device_family::xilinx_7series) r.block_rams_18k += n;
          break;
        case cell_role::block_ram_pair:
          r.block_rams += n;
          r.block_rams_18k += 2 * n;
          break;
        case cell_role::carry: r.carry_chains += n; break;
        case cell_role::lut_ram: r.lut_rams += n; break;
      }
    }
  }
  return r;
}

MASE_COMPILED_INLINE synthesis_report synthesize(const fs::path& project, const target& t) {
  detail::require_tool("yosys", "yosys");
  const fs::path dir = fs::absolute(project);
  require_project(dir, "verilog", "synthesize");
  // top.sv's unpacked-array ports are beyond yosys 0.23's parser; top_core is the same design.
  // -defer: elaborate only with the design's parameters (a module's defaults may name no ROM file).
  std::string script = "read_verilog -defer -sv";
  for (const fs::path& f : detail::rtl_files(dir))
    if (f.filename() != "top.sv") script += fmt::format(" {}", fs::relative(f, dir).string());
  // The reports are written under other names and renamed once yosys has finished: a run that
  // fails or is killed leaves no report, never an old one that looks like this run's.
  script += fmt::format("\nhierarchy -top top_core\n{} -top top_core\ntee -q -o reports/utilization.txt.partial stat\n",
                        t.synthesis);
  if (t.places_and_routes()) script += "write_json reports/netlist.json.partial\n";
  script += "write_verilog -noattr reports/netlist.v.partial\n";
  std::error_code ec;
  fs::create_directories(dir / "reports", ec);
  for (const char* old : {"reports/utilization.txt", "reports/target.txt", "reports/netlist.json", "reports/netlist.v"})
    fs::remove(dir / old, ec);
  detail::write_text(dir / "reports" / "synth.ys", script);
  if (detail::run_in(dir, "yosys -q -s reports/synth.ys", "reports/yosys.log") != 0)
    throw error(fmt::format("synthesize: yosys failed on {}:\n{}", dir.string(),
                            detail::tail(detail::read_all(dir / "reports/yosys.log"), 20)));
  if (t.places_and_routes()) fs::rename(dir / "reports/netlist.json.partial", dir / "reports/netlist.json", ec);
  if (!ec) fs::rename(dir / "reports/netlist.v.partial", dir / "reports/netlist.v", ec);
  if (!ec) detail::write_text(dir / "reports" / "target.txt", fmt::format("{}\n", t.name));
  if (!ec) fs::rename(dir / "reports/utilization.txt.partial", dir / "reports/utilization.txt", ec);
  if (ec) throw error(fmt::format("synthesize: yosys wrote no report in {}: {}", dir.string(), ec.message()));
  return read_synthesis_report(dir);
}

MASE_COMPILED_INLINE simulation_result simulate_netlist(const fs::path& project, const simulate_options& options) {
  detail::require_tool("iverilog", "iverilog");
  detail::require_tool("yosys", "yosys");
  const fs::path dir = fs::absolute(project);
  require_project(dir, "verilog", "simulate_netlist");
  require(fs::exists(dir / "tb" / "tb.sv"), "simulate_netlist: {} has no tb/tb.sv; emit the project first", dir.string());
  require(fs::exists(dir / "reports" / "netlist.v"),
          "simulate_netlist: {} has no reports/netlist.v; synthesize the project first", dir.string());
  const target& t = detail::synthesized_target(dir);
  std::error_code ec;
  fs::create_directories(dir / "sim", ec);
  // yosys's data directory is share/yosys beside its binary's bin/ (what its "+/" paths name).
  if (detail::run_in(dir, "echo \"$(dirname \"$(readlink -f \"$(command -v yosys)\")\")/../share/yosys\"",
                     "sim/yosys_datdir.txt") != 0)
    throw error(fmt::format("simulate_netlist: could not find yosys's data directory from {}", dir.string()));
  std::string datdir = detail::read_all(dir / "sim/yosys_datdir.txt");
  while (!datdir.empty() && (datdir.back() == '\n' || datdir.back() == ' ')) datdir.pop_back();
  const fs::path models = fs::path(datdir) / t.cell_models;
  require(fs::exists(models), "simulate_netlist: yosys's cell models {} for {} are missing; reinstall the yosys package",
          models.string(), t.name);
  // The netlist's top is top_core, the module the testbench drives; its memories carry their
  // contents as cell parameters, so no ROM image is read.
  const std::string compile = fmt::format("iverilog -g2012 -DNO_ICE40_DEFAULT_ASSIGNMENTS -s tb -o sim/netlist.vvp "
                                          "tb/tb.sv reports/netlist.v {}", detail::shell_quote(models.string()));
  if (detail::run_in(dir, compile, "sim/netlist_build.log") != 0)
    throw error(fmt::format("simulate_netlist: Icarus Verilog could not compile {}'s netlist:\n{}", dir.string(),
                            detail::tail(detail::read_all(dir / "sim/netlist_build.log"), 20)));
  const int status = detail::run_in(dir, fmt::format("vvp -n sim/netlist.vvp +stall={}", options.stall_percent),
                                    "sim/netlist.log");
  return detail::read_verdict(dir, "sim/netlist.log", fmt::format("netlist ({})", t.name), status);
}

namespace detail {
// One resource of nextpnr's report's "utilization" table (absent: none used, none available).
MASE_COMPILED_INLINE resource_use nextpnr_use(const nlohmann::json& report, const char* bel) {
  const auto table = report.find("utilization");
  if (table == report.end() || !table->contains(bel)) return {};
  const nlohmann::json& entry = (*table)[bel];
  return {.used = entry.value("used", std::int64_t{0}), .available = entry.value("available", std::int64_t{0})};
}
}  // namespace detail

MASE_COMPILED_INLINE place_and_route_report place_and_route(const fs::path& project, const target& t,
                                                            const place_and_route_options& options) {
  require(t.places_and_routes(), "place_and_route: the target {} has no open-source placement and routing; the "
          "targets that have are {}", t.name, target_names(/*placing_and_routing_only=*/true));
  require(options.frequency_mhz > 0, "place_and_route: the frequency must be positive (got {} MHz)", options.frequency_mhz);
  detail::require_tool("nextpnr-ice40", "nextpnr-ice40");
  detail::require_tool("icepack", "fpga-icestorm");
  const fs::path dir = fs::absolute(project);
  require_project(dir, "verilog", "place_and_route");
  require(fs::exists(dir / "reports/netlist.json") && fs::exists(dir / "reports/utilization.txt") &&
              detail::synthesized_target(dir) == t,
          "place_and_route: {} has no netlist synthesized for {}; run synthesize(project, target) first", dir.string(),
          t.name);
  std::error_code ec;
  for (const char* old : {"reports/nextpnr.json", "reports/top_core.asc", "reports/top_core.bin"}) fs::remove(dir / old, ec);
  // The ports go to pins nextpnr chooses (no constraints file): the design is measured, not a board.
  const std::string command = fmt::format(
      "nextpnr-ice40 {} --package {} --json reports/netlist.json --asc reports/top_core.asc.partial "
      "--report reports/nextpnr.json.partial --freq {} --seed {} --pcf-allow-unconstrained --timing-allow-fail",
      t.nextpnr_device, t.package, options.frequency_mhz, options.seed);
  if (detail::run_in(dir, command, "reports/nextpnr.log") != 0)
    throw error(fmt::format("place_and_route: nextpnr-ice40 could not place and route {} on {}:\n{}", dir.string(),
                            t.description, detail::tail(detail::read_all(dir / "reports/nextpnr.log"), 20)));
  fs::rename(dir / "reports/top_core.asc.partial", dir / "reports/top_core.asc", ec);
  if (!ec) fs::rename(dir / "reports/nextpnr.json.partial", dir / "reports/nextpnr.json", ec);
  if (ec) throw error(fmt::format("place_and_route: nextpnr-ice40 wrote no report in {}: {}", dir.string(), ec.message()));
  if (detail::run_in(dir, "icepack reports/top_core.asc reports/top_core.bin.partial", "reports/icepack.log") != 0)
    throw error(fmt::format("place_and_route: icepack could not pack {}:\n{}", dir.string(),
                            detail::tail(detail::read_all(dir / "reports/icepack.log"), 20)));
  fs::rename(dir / "reports/top_core.bin.partial", dir / "reports/top_core.bin", ec);
  if (ec) throw error(fmt::format("place_and_route: icepack wrote no bitstream in {}: {}", dir.string(), ec.message()));

  place_and_route_report r;
  r.target = std::string(t.name);
  r.report = detail::read_all(dir / "reports/nextpnr.json");
  r.bitstream = dir / "reports/top_core.bin";
  r.constraint_mhz = options.frequency_mhz;
  const nlohmann::json report = nlohmann::json::parse(r.report, nullptr, /*allow_exceptions=*/false);
  require(report.is_object(), "place_and_route: nextpnr's report {} is not JSON", (dir / "reports/nextpnr.json").string());
  r.logic_cells = detail::nextpnr_use(report, "ICESTORM_LC");
  r.dsps = detail::nextpnr_use(report, "ICESTORM_DSP");
  r.block_rams = detail::nextpnr_use(report, "ICESTORM_RAM");
  r.ios = detail::nextpnr_use(report, "SB_IO");
  // Every clock's achieved frequency; the design runs at the slowest.
  if (const auto clocks = report.find("fmax"); clocks != report.end() && clocks->is_object())
    for (const auto& [clock, timing] : clocks->items()) {
      (void)clock;
      const double achieved = timing.value("achieved", 0.0);
      if (r.fmax_mhz == 0 || achieved < r.fmax_mhz) r.fmax_mhz = achieved;
    }
  return r;
}

}  // namespace mase::verilog
