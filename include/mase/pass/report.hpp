#pragma once
// Report passes (MASE's report_*_analysis_pass): each writes its table to std::cout, to a stream
// (`report_node_type(std::cerr)`) or to a file (`report_node_shape("shapes.txt")`, written
// atomically), and returns the text as its info.

#include <mase/core/compiled.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/report_tables.hpp>

#include <filesystem>
#include <ostream>
#include <sstream>
#include <string>

namespace mase {

// What a report pass returns: the text it wrote.
struct report_text {
  std::string text;
  friend bool operator==(const report_text&, const report_text&) = default;
};

namespace detail {
// Where a report goes: a stream (std::cout unless chosen) or a file.
struct report_destination {
  std::ostream* stream = nullptr;
  std::filesystem::path file;

  // Writes the report to the file (atomically) or the stream (std::cout when neither is set).
  report_text deliver(std::string text) const;
};
}  // namespace detail

// A report pass writing the table `Write` makes; Needs are the facts the table reads.
template <class Needs, void (*Write)(std::ostream&, const graph&)>
struct report_pass {
  using needs = Needs;
  using provides = facts<>;
  detail::report_destination destination;

  report_text run(const graph& g) const {
    std::ostringstream text;
    Write(text, g);
    return destination.deliver(std::move(text).str());
  }
  report_pass operator()(std::ostream& stream) const { return {{&stream, {}}}; }
  report_pass operator()(std::filesystem::path file) const { return {{nullptr, std::move(file)}}; }
};

// Table of every node: name, kind, op, inputs, attributes; counts per kind and per op.
inline const report_pass<facts<>, &write_graph_report> report_graph{};
// Node name / mase_type / mase_op / data_in_0 type.
inline const report_pass<facts<fact::metadata_initialised>, &write_node_type_report> report_node_type{};
// Each node's argument and result shapes.
inline const report_pass<facts<fact::common_metadata>, &write_node_shape_report> report_node_shape{};
// Non-implicit nodes: name, op, data_out_0 type, toolchain, device id.
inline const report_pass<facts<fact::hardware_metadata>, &write_node_hardware_report> report_node_hardware_type{};

// The chosen metadata sections of every node (MASE's report_node_meta_param, `which`).
struct report_metadata_pass {
  using needs = facts<fact::metadata_initialised>;
  using provides = facts<>;
  metadata_sections sections = metadata_sections::all;
  detail::report_destination destination;

  report_text run(const graph& g) const {
    std::ostringstream text;
    write_metadata_report(text, g, sections);
    return destination.deliver(std::move(text).str());
  }
  report_metadata_pass operator()(metadata_sections which) const { return {which, destination}; }
  report_metadata_pass operator()(std::ostream& stream) const { return {sections, {&stream, {}}}; }
  report_metadata_pass operator()(metadata_sections which, std::ostream& stream) const { return {which, {&stream, {}}}; }
  report_metadata_pass operator()(metadata_sections which, std::filesystem::path file) const {
    return {which, {nullptr, std::move(file)}};
  }
};
inline const report_metadata_pass report_metadata{};

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/report_definitions.hpp>
#endif
