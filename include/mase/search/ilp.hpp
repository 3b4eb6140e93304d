#pragma once
// An exact budgeted assignment in the style of HAWQ-V3 (Yao et al. 2021), solved by GLPK
// (libglpk-dev, link -lglpk): first each subject's sensitivity to each combination of its
// values is measured with only that subject quantized (the change in the first objective from
// the float32 model), and its cost (the change in the second objective, which must add up over
// subjects: average bits, model size, BOPs); then, for a sweep of budgets on the total cost, an
// integer linear program picks one combination per subject minimizing the summed sensitivity
// within the budget. Each distinct solution is evaluated as a trial, so the study holds the
// ILP's front measured, not predicted. A separate header: only a program that links GLPK
// includes it.

#include <mase/core/error.hpp>
#include <mase/search/sampler.hpp>
#include <mase/search/space.hpp>

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

class ilp_sampler final : public sampler {
public:
  struct options {
    std::size_t budgets = 16;       // budgets swept between the cheapest and the dearest assignment
    int time_limit_ms = 10000;      // per solve; the best assignment found by then is kept
    std::size_t max_combinations = 4096;  // per subject
  };
  ilp_sampler() = default;
  explicit ilp_sampler(options o) : options_(o) {}
  std::string_view name() const override { return "ilp"; }

  // One subject's combinations: each a value index for each of the subject's dimensions.
  struct subject_choices {
    std::vector<std::size_t> dimensions;
    std::vector<std::vector<std::uint32_t>> combinations;
    std::vector<double> sensitivity, cost;  // per combination
  };

  // The measured table, for reports (filled by drive).
  const std::vector<subject_choices>& table() const noexcept { return table_; }
  std::size_t measurements() const noexcept { return measurements_; }

  void drive(const search_space& space, trial_batches& trials) override {
    if (trials.objective_count() != 2)
      throw error(fmt::format("the ilp sampler needs exactly two objectives, a quality to keep (the first) and a cost "
                              "that adds up over nodes (the second); this search has {}",
                              trials.objective_count()));
    table_ = combinations_of(space);
    std::vector<subject_request> requests{{point(space.dimensions.size(), 0), {}}};  // the float32 model
    for (std::size_t s = 0; s < table_.size(); ++s)
      for (const std::vector<std::uint32_t>& combination : table_[s].combinations)
        requests.push_back({point_with(space, table_[s], combination), {s}});
    const std::vector<objective_vector> measured = trials.measure(requests);
    measurements_ = measured.size();
    std::size_t at = 1;
    for (std::size_t s = 0; s < table_.size(); ++s)
      for (std::size_t c = 0; c < table_[s].combinations.size(); ++c, ++at) {
        const double sensitivity = measured[at][0] - measured[0][0], cost = measured[at][1] - measured[0][1];
        if (!std::isfinite(sensitivity) || !std::isfinite(cost))
          throw error(fmt::format("the ilp sampler: quantizing only {} gives an objective that is not a finite number; "
                                  "the ILP needs finite sensitivities and costs",
                                  space.subjects[s]));
        table_[s].sensitivity.push_back(sensitivity);
        table_[s].cost.push_back(cost);
      }

    double cheapest = 0, dearest = 0;
    for (const subject_choices& subject : table_) {
      cheapest += *std::min_element(subject.cost.begin(), subject.cost.end());
      dearest += *std::max_element(subject.cost.begin(), subject.cost.end());
    }
    std::vector<point> points;
    for (std::size_t k = 0; k < options_.budgets; ++k) {
      const double budget = options_.budgets == 1 ? dearest
                                                  : cheapest + (dearest - cheapest) * static_cast<double>(k) /
                                                                   static_cast<double>(options_.budgets - 1);
      const std::optional<point> p = solve(space, budget);
      if (p && std::find(points.begin(), points.end(), *p) == points.end()) points.push_back(*p);
    }
    for (std::size_t done = 0; done < points.size() && trials.budget_left() > 0;) {
      const std::size_t count = std::min({trials.batch_size(), trials.budget_left(), points.size() - done});
      trials.evaluate(std::vector<point>(points.begin() + static_cast<std::ptrdiff_t>(done),
                                         points.begin() + static_cast<std::ptrdiff_t>(done + count)));
      done += count;
    }
  }

private:
  std::vector<subject_choices> combinations_of(const search_space& space) const {
    std::vector<subject_choices> subjects(space.subjects.size());
    for (std::size_t d = 0; d < space.dimensions.size(); ++d) subjects[space.dimensions[d].subject].dimensions.push_back(d);
    for (std::size_t s = 0; s < subjects.size(); ++s) {
      std::size_t count = 1;
      for (std::size_t d : subjects[s].dimensions) {
        count *= space.dimensions[d].choices.size();
        if (count > options_.max_combinations)
          throw error(fmt::format("the ilp sampler: subject {} has more than {} combinations of values; narrow its "
                                  "lists",
                                  space.subjects[s], options_.max_combinations));
      }
      for (std::size_t n = 0; n < count; ++n) {
        std::vector<std::uint32_t> combination(subjects[s].dimensions.size());
        std::size_t rest = n;
        for (std::size_t i = combination.size(); i-- > 0;) {
          const std::size_t k = space.dimensions[subjects[s].dimensions[i]].choices.size();
          combination[i] = static_cast<std::uint32_t>(rest % k);
          rest /= k;
        }
        subjects[s].combinations.push_back(std::move(combination));
      }
    }
    return subjects;
  }

  static point point_with(const search_space& space, const subject_choices& subject,
                          const std::vector<std::uint32_t>& combination) {
    point p(space.dimensions.size(), 0);
    for (std::size_t i = 0; i < subject.dimensions.size(); ++i) p[subject.dimensions[i]] = combination[i];
    return p;
  }

  // The least summed sensitivity with total cost at most `budget`: one binary variable per
  // (subject, combination), one row per subject (exactly one chosen), one budget row.
  std::optional<point> solve(const search_space& space, double budget) const {
    const std::unique_ptr<glp_prob, decltype(&glp_delete_prob)> problem(glp_create_prob(), &glp_delete_prob);
    glp_prob* lp = problem.get();
    glp_set_obj_dir(lp, GLP_MIN);
    const int subjects = static_cast<int>(table_.size());
    glp_add_rows(lp, subjects + 1);
    for (int s = 1; s <= subjects; ++s) glp_set_row_bnds(lp, s, GLP_FX, 1.0, 1.0);
    const double slack = 1e-9 * std::max(1.0, std::abs(budget));  // the cheapest budget is met exactly
    glp_set_row_bnds(lp, subjects + 1, GLP_UP, 0.0, budget + slack);
    std::vector<int> rows{0}, columns{0};
    std::vector<double> values{0};
    int column = 0;
    for (int s = 0; s < subjects; ++s) {
      const subject_choices& subject = table_[static_cast<std::size_t>(s)];
      glp_add_cols(lp, static_cast<int>(subject.combinations.size()));
      for (std::size_t c = 0; c < subject.combinations.size(); ++c) {
        ++column;
        glp_set_col_kind(lp, column, GLP_BV);
        glp_set_obj_coef(lp, column, subject.sensitivity[c]);
        rows.push_back(s + 1), columns.push_back(column), values.push_back(1.0);
        rows.push_back(subjects + 1), columns.push_back(column), values.push_back(subject.cost[c]);
      }
    }
    glp_load_matrix(lp, static_cast<int>(rows.size()) - 1, rows.data(), columns.data(), values.data());
    glp_iocp parameters;
    glp_init_iocp(&parameters);
    parameters.presolve = GLP_ON;
    parameters.msg_lev = GLP_MSG_OFF;
    parameters.tm_lim = options_.time_limit_ms;
    glp_intopt(lp, &parameters);
    const int status = glp_mip_status(lp);
    if (status != GLP_OPT && status != GLP_FEAS) return std::nullopt;
    point p(space.dimensions.size(), 0);
    column = 0;
    for (const subject_choices& subject : table_)
      for (std::size_t c = 0; c < subject.combinations.size(); ++c)
        if (glp_mip_col_val(lp, ++column) > 0.5)
          for (std::size_t i = 0; i < subject.dimensions.size(); ++i) p[subject.dimensions[i]] = subject.combinations[c][i];
    return p;
  }

  options options_{};
  std::vector<subject_choices> table_;
  std::size_t measurements_ = 0;
};

inline std::unique_ptr<sampler> make_ilp_sampler(ilp_sampler::options o = {}) { return std::make_unique<ilp_sampler>(o); }

}  // namespace mase::search
