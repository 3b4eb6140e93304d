#pragma once
// Quantization configs in MASE's TOML layout (configs/tests/quantize/*.toml), read into a
// quantize_config (pass/quantize.hpp). Two layouts are accepted:
//
//   # MASE's transform file: only [passes.quantize] is read; the rest (model, dataset, other
//   # passes) belongs to other tools and is ignored.
//   model = "toy"
//   [passes.quantize]
//   by = "type"                  # "type" | "name" | "regex_name"
//   report = true                # optional: print the summary table after quantizing
//   [passes.quantize.default.config]
//   name = "integer"
//   data_in_width = 8
//   …
//   [passes.quantize.linear.config]
//   …
//
//   # or the quantize table alone, at the top level
//   by = "type"
//   [default.config]
//   …
//
// Inside the quantize table every key is checked: `by`, `report`, `default` and the entries,
// each an `<key>.config` table of MASE keys (checked against its arithmetic as the pass does).
// `bypass = true`, a missing name or name = "NA" become mase::bypass. Entries keep the file's
// order (regex_name takes the first pattern that matches). Errors name the file, the table and
// the fix.

#include <mase/core/error.hpp>
#include <mase/format/mase_config.hpp>
#include <mase/ir/op_traits.hpp>
#include <mase/pass/quantize.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mase {

// How a TOML config is read. `ops`: a vocabulary holding a user's ops, whose names by = "type"
// keys may then use (without it, only mase's quantizable ops are keys); the quantize pass checks
// such an entry against the graph's nodes of that op.
struct quantize_config_options {
  const vocabulary* ops = nullptr;
};

namespace detail {

inline std::string_view toml_type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
    case toml::node_type::none: break;
  }
  return "value";
}

inline std::string toml_location(const std::string& file, const toml::node& n) {
  const toml::source_position p = n.source().begin;
  return p.line > 0 ? fmt::format("{}:{}", file, p.line) : file;
}

// "[passes.quantize.linear]", or with `config`, "[passes.quantize.linear.config]".
inline std::string toml_table_name(const std::string& table, std::string_view key, bool config = false) {
  return fmt::format("[{}{}{}]", table.empty() ? "" : table + ".", toml_key(key), config ? ".config" : "");
}

inline quant_config_value quant_value_from_toml(const toml::node& v, const std::string& where, std::string_view key) {
  if (const auto* b = v.as_boolean()) return b->get();
  if (const auto* i = v.as_integer()) return i->get();
  if (const auto* d = v.as_floating_point()) return d->get();
  if (const auto* s = v.as_string()) return s->get();
  if (const auto* a = v.as_array()) {
    std::vector<std::int64_t> list;
    for (const toml::node& item : *a) {
      const auto* i = item.as_integer();
      if (i == nullptr)
        throw error(fmt::format("{}: key \"{}\" must be a list of integers such as [1, 16]", where, key));
      list.push_back(i->get());
    }
    return list;
  }
  throw error(fmt::format("{}: key \"{}\" must be a boolean, a number, a string or a list of integers, not a {}", where,
                          key, toml_type_name(v.type())));
}

inline node_quantize_config node_config_from_toml(const toml::table& config, const config_source& source,
                                                  std::string_view key) {
  const std::string where =
      fmt::format("{}, {}", toml_location(source.file, config), toml_table_name(source.table, key, true));
  quant_config c;
  for (const auto& [k, v] : config) c.insert_or_assign(std::string(k.str()), quant_value_from_toml(v, where, k.str()));
  // Checked now so the error names the file; bypass-like entries become mase::bypass.
  if (!formats_of_config(c, where)) return bypass{};
  return c;
}

inline quantize_config quantize_config_from_toml(const toml::table& root, const std::string& file,
                                                 const quantize_config_options& options) {
  const toml::table* table = &root;
  config_source source{.file = file, .table = ""};
  if (const toml::node* passes = root.get("passes")) {
    const toml::table* t = passes->as_table();
    if (t == nullptr)
      throw error(fmt::format("{}: key \"passes\" must be a table; the quantize config goes in [passes.quantize]",
                              toml_location(file, *passes)));
    const toml::node* q = t->get("quantize");
    if (q == nullptr) {
      std::string found;
      for (const auto& [k, v] : *t) found += fmt::format("{}{}", found.empty() ? "" : ", ", k.str());
      throw error(fmt::format("{}: there is no [passes.quantize] table (the [passes] table holds {}); add one with "
                              "by = \"type\" and a [passes.quantize.default.config]",
                              file, found.empty() ? "nothing" : found));
    }
    table = q->as_table();
    if (table == nullptr)
      throw error(fmt::format("{}: passes.quantize must be a table, [passes.quantize]", toml_location(file, *q)));
    source.table = "passes.quantize";
  }
  const std::string here = source.table.empty() ? "the top level" : fmt::format("[{}]", source.table);

  quantize_config config;
  config.source = source;
  const toml::node* by = table->get("by");
  if (by == nullptr)
    throw error(fmt::format("{}: {} has no key \"by\"; add by = \"type\" (or \"name\", \"regex_name\")", file, here));
  const auto* by_text = by->as_string();
  const std::string by_value = by_text != nullptr ? by_text->get() : std::string();
  if (by_value == "type") config.by = quantize_by::type;
  else if (by_value == "name") config.by = quantize_by::name;
  else if (by_value == "regex_name") config.by = quantize_by::regex_name;
  else {
    const std::string given = by_text != nullptr ? fmt::format("\"{}\"", by_value)
                                                 : fmt::format("a TOML {}", toml_type_name(by->type()));
    throw error(fmt::format("{}: {}: by must be \"type\", \"name\" or \"regex_name\", not {}", toml_location(file, *by),
                            here, given));
  }

  // Entries in the file's order: toml++ tables are sorted by key.
  std::vector<std::tuple<toml::source_position, std::string, const toml::table*>> entries;
  for (const auto& [k, v] : *table) {
    const std::string key(k.str());
    if (key == "by") continue;
    if (key == "report") {
      const auto* b = v.as_boolean();
      if (b == nullptr) throw error(fmt::format("{}: {}: report must be true or false", toml_location(file, v), here));
      config.report = b->get();
      continue;
    }
    if (key == "baseline_weight_path" || key == "load_type")
      throw error(
          fmt::format("{}: {}: \"{}\" loads a LUTNet / LogicNets baseline, which mase does not support; remove it",
                      toml_location(file, v), here, key));
    const toml::table* entry = v.as_table();
    if (entry == nullptr)
      throw error(fmt::format("{}: {}: unknown key \"{}\"; the keys are by, report, default and one table per entry, "
                              "e.g. {}",
                              toml_location(file, v), here, key, toml_table_name(source.table, "linear", true)));
    const toml::table* node_config = nullptr;
    for (const auto& [ek, ev] : *entry) {
      if (ek.str() == "config" && !ev.is_table())
        throw error(fmt::format("{}: {}: config must be a table of MASE keys, {}", toml_location(file, ev),
                                toml_table_name(source.table, key), toml_table_name(source.table, key, true)));
      if (ek.str() != "config")
        throw error(fmt::format("{}: {}: unknown key \"{}\"; an entry holds only its config table, {}",
                                toml_location(file, ev), toml_table_name(source.table, key), ek.str(),
                                toml_table_name(source.table, key, true)));
      node_config = ev.as_table();
    }
    if (node_config == nullptr)
      throw error(fmt::format("{}: {} has no config table; write its keys under {}", toml_location(file, v),
                              toml_table_name(source.table, key), toml_table_name(source.table, key, true)));
    entries.emplace_back(node_config->source().begin, key, node_config);
  }
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const toml::source_position& x = std::get<0>(a);
    const toml::source_position& y = std::get<0>(b);
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  for (const auto& [position, key, node_config] : entries) {
    node_quantize_config c = node_config_from_toml(*node_config, source, key);
    if (key == "default") {
      config.default_config = std::move(c);
      continue;
    }
    // A user's op (one the options' vocabulary has and mase's does not) is checked against the
    // graph's nodes when the pass runs, which knows its quantization facet.
    const bool user_op = options.ops != nullptr && options.ops->contains(key) &&
                         std::find(op_names().begin(), op_names().end(), key) == op_names().end();
    if (config.by == quantize_by::type && user_op) config.user_op_types.push_back(key);
    else if (config.by == quantize_by::type) check_op_key(resolve_entry(source, key, c, true));
    config.entries.emplace_back(key, std::move(c));
  }
  return config;
}

}  // namespace detail

namespace detail {

inline std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
      continue;
    }
    out += c;
  }
  return out + '"';
}

inline std::string toml_value(const quant_config_value& v) {
  struct {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return fmt::format("{}", i); }
    // Shortest text that reads back as the same double, always with a '.' or an exponent.
    std::string operator()(double d) const {
      std::string text = fmt::format("{}", d);
      if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
      return text;
    }
    std::string operator()(const std::string& s) const { return toml_string(s); }
    std::string operator()(const std::vector<std::int64_t>& list) const { return fmt::format("[{}]", fmt::join(list, ", ")); }
  } text;
  return std::visit(text, v);
}

}  // namespace detail

// `config` in MASE's transform layout ([passes.quantize]), which load_quantize_config reads back
// equal. `comment` (lines without '#') goes first. Entries given as operand_formats have no MASE
// keys: mase::error naming the entry.
inline std::string quantize_config_to_toml(const quantize_config& config, std::string_view comment = {}) {
  std::string out;
  std::size_t at = 0;
  while (at < comment.size()) {
    const std::size_t end = std::min(comment.find('\n', at), comment.size());
    out += fmt::format("# {}\n", comment.substr(at, end - at));
    at = end + 1;
  }
  out += fmt::format("[passes.quantize]\nby = \"{}\"\n", to_string(config.by));
  if (config.report) out += "report = true\n";
  const auto write_entry = [&](std::string_view key, const node_quantize_config& c) {
    out += fmt::format("\n[passes.quantize.{}.config]\n", detail::toml_key(key));
    if (std::holds_alternative<bypass>(c)) {
      out += "bypass = true\n";
      return;
    }
    const quant_config* keys = std::get_if<quant_config>(&c);
    if (keys == nullptr)
      throw error(fmt::format("quantize config entry \"{}\" gives formats, not MASE keys, so it has no TOML form; "
                              "give it as a quant_config",
                              key));
    // "name" first, as MASE's files do; then the rest in key order.
    if (const auto name = keys->find("name"); name != keys->end())
      out += fmt::format("name = {}\n", detail::toml_value(name->second));
    for (const auto& [k, v] : *keys)
      if (k != "name") out += fmt::format("{} = {}\n", detail::toml_key(k), detail::toml_value(v));
  };
  if (config.default_config) write_entry("default", *config.default_config);
  for (const auto& [key, c] : config.entries) write_entry(key, c);
  return out;
}

namespace detail {

// TOML text parsed; a syntax error is a mase::error at file:line:column.
inline toml::table parse_toml(std::string_view text, std::string_view file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw error(fmt::format("{}:{}:{}: TOML syntax error: {}", file, e.source().begin.line, e.source().begin.column,
                            e.description()));
  }
}

}  // namespace detail

// A quantize config from TOML text; `file` names the source in messages.
inline quantize_config parse_quantize_config(std::string_view text, std::string_view file = "<string>",
                                             const quantize_config_options& options = {}) {
  return detail::quantize_config_from_toml(detail::parse_toml(text, file), std::string(file), options);
}

// A quantize config from a TOML file (MASE's layout; see the top of this file).
namespace detail {

// A config file's text; `what` names it in errors ("quantize config").
inline std::string read_config_text(const std::filesystem::path& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw error(fmt::format("cannot read {} {}: the file does not exist or is not readable", what, path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw error(fmt::format("cannot read {} {}: reading failed", what, path.string()));
  return std::move(text).str();
}

}  // namespace detail

inline quantize_config load_quantize_config(const std::filesystem::path& path,
                                            const quantize_config_options& options = {}) {
  return parse_quantize_config(detail::read_config_text(path, "quantize config"), path.string(), options);
}

}  // namespace mase
