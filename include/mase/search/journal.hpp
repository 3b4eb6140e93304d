#pragma once
// The trial journal: JSON lines, the first describing the search (its space, sampler, seed,
// batch size, evaluation mode and objectives), then one line per finished trial, appended and
// flushed before the next trial starts. A search killed at any moment loses at most the trials in
// flight: the same search given the same journal reads it back and runs only the trials it lacks
// (a last line cut short by the kill is dropped). A journal written by a different search is
// refused, never overwritten.

#include <mase/core/error.hpp>
#include <mase/format/mase_config.hpp>
#include <mase/search/space.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

// A finished trial: its point, its objective values (in each objective's own sense) and how long
// it took; or why it failed.
struct trial {
  std::size_t number = 0;
  point choices;
  std::vector<double> values;
  double seconds = 0;
  std::string failure{};  // empty: it succeeded
  bool ok() const noexcept { return failure.empty(); }
};

namespace detail {

inline nlohmann::json choice_json(const quant_config_value& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

}  // namespace detail

class journal {
public:
  // The journal at `path`, for the search `header` describes: its trials read back if the file
  // exists and was written by the same search (else mase::error naming the file and the field).
  journal(std::filesystem::path path, nlohmann::json header) : path_(std::move(path)), header_(std::move(header)) {
    std::error_code ec;
    if (std::filesystem::exists(path_, ec)) read_back();
    out_.open(path_, std::ios::binary | std::ios::app);
    if (!out_) throw error(fmt::format("search journal {}: cannot open it for writing", path_.string()));
    if (!had_header_) write_line(header_.dump());
  }

  const std::vector<trial>& recovered() const noexcept { return recovered_; }

  void append(const search_space& space, const std::vector<std::string>& objective_names, const trial& t) {
    nlohmann::json line;
    line["trial"] = t.number;
    line["indices"] = t.choices;
    nlohmann::json choices = nlohmann::json::object();
    for (std::size_t i = 0; i < t.choices.size(); ++i)
      choices[space.dimension_name(i)] = detail::choice_json(space.dimensions[i].choices[t.choices[i]]);
    line["choices"] = std::move(choices);
    if (t.ok()) {
      nlohmann::json values = nlohmann::json::object();
      for (std::size_t k = 0; k < t.values.size(); ++k) values[objective_names[k]] = t.values[k];
      line["values"] = std::move(values);
    } else {
      line["error"] = t.failure;
    }
    line["seconds"] = t.seconds;
    write_line(line.dump());
  }

private:
  void write_line(const std::string& text) {
    out_ << text << '\n';
    out_.flush();
    if (!out_) throw error(fmt::format("search journal {}: writing failed (disk full?)", path_.string()));
  }

  void read_back() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw error(fmt::format("search journal {}: it exists but cannot be read", path_.string()));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t complete = text.rfind('\n');
    complete = complete == std::string::npos ? 0 : complete + 1;  // a line cut short by a kill ends without '\n'
    std::size_t line_number = 0, at = 0;
    while (at < complete) {
      const std::size_t end = text.find('\n', at);
      const std::string line = text.substr(at, end - at);
      at = end + 1;
      ++line_number;
      const std::string where = fmt::format("search journal {}:{}", path_.string(), line_number);
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object())
        throw error(fmt::format("{}: not a JSON object; the file is not a mase search journal (choose another output "
                                "directory)",
                                where));
      if (line_number == 1) {
        if (!j.contains("mase_search"))
          throw error(fmt::format("{}: not a mase search journal; choose another output directory", where));
        for (const auto& [key, value] : header_.items())
          if (!j.contains(key) || j[key] != value)
            throw error(fmt::format("{}: written by a different search (its \"{}\" differs); choose another output "
                                    "directory, or rerun that search's command to resume it",
                                    where, key));
        had_header_ = true;
        continue;
      }
      try {
        trial t;
        t.number = j.at("trial").get<std::size_t>();
        t.choices = j.at("indices").get<point>();
        t.seconds = j.value("seconds", 0.0);
        if (j.contains("error")) {
          t.failure = j.at("error").get<std::string>();
        } else {
          // By the header's objective names (a JSON object's keys come back sorted); null is NaN.
          const nlohmann::json& values = j.at("values");
          for (const nlohmann::json& objective : header_.at("objectives")) {
            const nlohmann::json& v = values.at(objective.at("name").get<std::string>());
            t.values.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
          }
        }
        recovered_.push_back(std::move(t));
      } catch (const nlohmann::json::exception& e) {
        throw error(fmt::format("{}: not a trial line ({})", where, e.what()));
      }
    }
    if (complete < text.size()) {
      // Without a whole line, the file is this search's only if it is the start of its header
      // (cut by a kill); anything else is not ours to shorten.
      const std::string own = header_.dump();
      if (!had_header_ && (text.size() > own.size() || own.compare(0, text.size(), text) != 0))
        throw error(fmt::format("search journal {}: not a mase search journal (no whole line); choose another "
                                "output directory",
                                path_.string()));
      // Drop the cut line, so appended lines start on a line of their own: the file is the
      // journal the user asked the search to keep.
      std::filesystem::resize_file(path_, complete);
    }
  }

  std::filesystem::path path_;
  nlohmann::json header_;
  std::ofstream out_;
  bool had_header_ = false;
  std::vector<trial> recovered_;
};

}  // namespace mase::search
