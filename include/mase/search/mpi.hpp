#pragma once
// The search on many machines: under `mpirun -np N`, rank 0 is the master (it runs the strategy
// and owns the journal) and hands trials to ranks 1 … N-1, which evaluate them with their own
// copy of the model and data; the master evaluates trials too, on a thread of its own. Trial
// numbers are the master's, so the study is the one a single process would find for the same
// seed. A worker that does not answer within `worker_timeout_seconds` is given up on: its trial
// goes to another rank, and an answer that comes later is ignored. A separate header: only a
// program that links MPI (OpenMPI's MPI::MPI_CXX) includes it; it must call MPI_Init first.

#include <mase/core/error.hpp>
#include <mase/search/study.hpp>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

struct mpi_options {
  MPI_Comm communicator = MPI_COMM_WORLD;
  double worker_timeout_seconds = 600;  // a trial taking longer is re-issued elsewhere
};

namespace detail {

enum mpi_tag : int { work_tag = 1, result_tag = 2, stop_tag = 3 };

inline void mpi_check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw error(fmt::format("search (MPI): {} failed (MPI error {})", what, code));
}

inline void mpi_send_text(const std::string& text, int rank, int tag, MPI_Comm comm) {
  mpi_check(MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, rank, tag, comm), "MPI_Send");
}

// A message from `status`'s source and tag, received.
inline std::string mpi_receive_text(const MPI_Status& status, MPI_Comm comm) {
  int size = 0;
  mpi_check(MPI_Get_count(&status, MPI_CHAR, &size), "MPI_Get_count");
  std::string text(static_cast<std::size_t>(size), '\0');
  mpi_check(MPI_Recv(text.data(), size, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  return text;
}

// A task: a trial (a point) or a measurement (a point and its subjects), by its key.
struct mpi_task {
  std::size_t key = 0;
  bool measurement = false;
  point choices;
  std::vector<std::size_t> subjects;
};

inline std::string task_text(const mpi_task& t) {
  return nlohmann::json{{"key", t.key}, {"measurement", t.measurement}, {"choices", t.choices}, {"subjects", t.subjects}}
      .dump();
}

inline mpi_task task_from(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  return {j.at("key").get<std::size_t>(), j.at("measurement").get<bool>(), j.at("choices").get<point>(),
          j.at("subjects").get<std::vector<std::size_t>>()};
}

// What a rank answers: the values (in each objective's own sense), or why it failed.
struct mpi_answer {
  std::size_t key = 0;
  std::vector<double> values;
  double seconds = 0;
  std::string failure;
};

inline std::string answer_text(const mpi_answer& a) {
  nlohmann::json values = nlohmann::json::array();
  for (double v : a.values) values.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
  return nlohmann::json{{"key", a.key}, {"values", values}, {"seconds", a.seconds}, {"failure", a.failure}}.dump();
}

inline mpi_answer answer_from(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  mpi_answer a{j.at("key").get<std::size_t>(), {}, j.at("seconds").get<double>(), j.at("failure").get<std::string>()};
  for (const nlohmann::json& v : j.at("values"))
    a.values.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
  return a;
}

inline mpi_answer answer_task(const trial_runner& runner, const mpi_task& task) {
  mpi_answer a{.key = task.key, .values = {}, .seconds = 0, .failure = {}};
  if (!task.measurement) {
    const trial t = runner.run(task.key, task.choices);
    a.values = t.values;
    a.seconds = t.seconds;
    a.failure = t.failure;
    return a;
  }
  try {
    a.values = runner.measure(runner.config_of_subjects(task.choices, task.subjects));
  } catch (const std::exception& e) {
    a.failure = e.what();
  }
  return a;
}

// The master's dispatcher: tasks go to idle workers and to the master's own thread; answers come
// back by key. Only the calling (main) thread calls MPI.
class mpi_dispatcher {
public:
  mpi_dispatcher(const trial_runner& runner, const mpi_options& options) : runner_(runner), options_(options) {
    int size = 1;
    mpi_check(MPI_Comm_size(options.communicator, &size), "MPI_Comm_size");
    for (int r = 1; r < size; ++r) idle_.push_back(r);
    local_ = std::thread([this] { local_loop(); });
  }
  mpi_dispatcher(const mpi_dispatcher&) = delete;
  mpi_dispatcher& operator=(const mpi_dispatcher&) = delete;
  ~mpi_dispatcher() {
    {
      const std::lock_guard lock(local_guard_);
      stopping_ = true;
    }
    local_wake_.notify_all();
    local_.join();
    // Every worker is told, those given up on included (a slow one stops after its late answer).
    for (int r : idle_) MPI_Send(nullptr, 0, MPI_CHAR, r, stop_tag, options_.communicator);
    for (const auto& [rank, task] : busy_) MPI_Send(nullptr, 0, MPI_CHAR, rank, stop_tag, options_.communicator);
    for (int r : abandoned_) MPI_Send(nullptr, 0, MPI_CHAR, r, stop_tag, options_.communicator);
  }

  std::size_t given_up() const noexcept { return given_up_; }

  // Every task answered, `answered` called with each answer as it comes (a task whose worker is
  // given up on is answered by another rank).
  template <class OnAnswer>
  void run(const std::vector<mpi_task>& tasks, OnAnswer&& answered) {
    std::deque<mpi_task> queue(tasks.begin(), tasks.end());
    std::set<std::size_t> answers;
    const auto take = [&](const mpi_answer& a) {
      if (answers.insert(a.key).second) answered(a);
    };
    while (answers.size() < tasks.size()) {
      while (!queue.empty() && !idle_.empty()) {  // feed the workers
        const int rank = idle_.front();
        idle_.pop_front();
        mpi_send_text(task_text(queue.front()), rank, work_tag, options_.communicator);
        busy_.emplace(rank, in_flight{queue.front(), std::chrono::steady_clock::now()});
        queue.pop_front();
      }
      {  // and the master's own thread, one task at a time
        std::unique_lock lock(local_guard_);
        if (!queue.empty() && !local_task_ && !local_answer_) {
          local_task_ = queue.front();
          queue.pop_front();
          local_wake_.notify_all();
        }
        if (local_answer_) {
          take(*local_answer_);
          local_answer_.reset();
        }
      }
      int arrived = 0;
      MPI_Status status;
      mpi_check(MPI_Iprobe(MPI_ANY_SOURCE, result_tag, options_.communicator, &arrived, &status), "MPI_Iprobe");
      if (arrived) {
        const mpi_answer a = answer_from(mpi_receive_text(status, options_.communicator));
        const auto it = busy_.find(status.MPI_SOURCE);
        if (it != busy_.end()) {  // an answer from a rank given up on is dropped, the rank with it
          busy_.erase(it);
          idle_.push_back(status.MPI_SOURCE);
          take(a);
        }
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      for (auto it = busy_.begin(); it != busy_.end();) {
        if (std::chrono::duration<double>(now - it->second.since).count() > options_.worker_timeout_seconds) {
          queue.push_front(it->second.task);  // re-issued; the rank is not given more work
          ++given_up_;
          abandoned_.push_back(it->first);
          it = busy_.erase(it);
        } else {
          ++it;
        }
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

private:
  struct in_flight {
    mpi_task task;
    std::chrono::steady_clock::time_point since;
  };

  void local_loop() {
    for (;;) {
      mpi_task task;
      {
        std::unique_lock lock(local_guard_);
        local_wake_.wait(lock, [&] { return stopping_ || (local_task_ && !local_answer_); });
        if (stopping_) return;
        task = *local_task_;
      }
      mpi_answer answer = answer_task(runner_, task);
      const std::lock_guard lock(local_guard_);
      local_answer_ = std::move(answer);
      local_task_.reset();
    }
  }

  const trial_runner& runner_;
  const mpi_options& options_;
  std::deque<int> idle_;
  std::map<int, in_flight> busy_;
  std::size_t given_up_ = 0;
  std::vector<int> abandoned_;
  std::thread local_;
  std::mutex local_guard_;
  std::condition_variable local_wake_;
  std::optional<mpi_task> local_task_;
  std::optional<mpi_answer> local_answer_;
  bool stopping_ = false;
};

// A worker: answers tasks until the master says stop.
inline void mpi_worker(const trial_runner& runner, MPI_Comm comm) {
  for (;;) {
    MPI_Status status;
    mpi_check(MPI_Probe(0, MPI_ANY_TAG, comm, &status), "MPI_Probe");
    const std::string text = mpi_receive_text(status, comm);
    if (status.MPI_TAG == stop_tag) return;
    mpi_send_text(answer_text(answer_task(runner, task_from(text))), 0, result_tag, comm);
  }
}

}  // namespace detail

// run_search on every rank of `options.communicator`: call it on every rank with the same
// arguments. Rank 0 returns the study (and keeps the journal); the other ranks return a study
// without trials once the master is done.
inline study run_search_mpi(const graph& g, const search_space& space, sampler& strategy,
                            const std::vector<objective>& objs, const evaluation_data& data,
                            const search_options& options = {}, const mpi_options& mpi = {}) {
  int rank = 0;
  detail::mpi_check(MPI_Comm_rank(mpi.communicator, &rank), "MPI_Comm_rank");
  if (rank != 0) {
    const trial_runner runner(g, space, objs, data, options.mode);
    detail::mpi_worker(runner, mpi.communicator);
    study empty;
    empty.space = space;
    for (const objective& o : objs) empty.objectives.push_back({o.name, o.sense});
    return empty;
  }
  std::optional<detail::mpi_dispatcher> dispatcher;
  const detail::trial_executor execute = [&](const trial_runner& runner, std::size_t first,
                                             const std::vector<point>& points, const std::vector<std::size_t>& pending,
                                             const std::function<void(trial)>& finished) {
    if (!dispatcher) dispatcher.emplace(runner, mpi);
    std::vector<detail::mpi_task> tasks;
    for (std::size_t k : pending) tasks.push_back({first + k, false, points[k], {}});
    dispatcher->run(tasks, [&](const detail::mpi_answer& a) {
      finished({.number = a.key, .choices = points[a.key - first], .values = a.values, .seconds = a.seconds,
                .failure = a.failure});
    });
  };
  const detail::measure_executor measure = [&](const trial_runner& runner,
                                               const std::vector<subject_request>& requests) {
    if (!dispatcher) dispatcher.emplace(runner, mpi);
    std::vector<detail::mpi_task> tasks;
    for (std::size_t k = 0; k < requests.size(); ++k) tasks.push_back({k, true, requests[k].choices, requests[k].subjects});
    std::vector<std::vector<double>> out(requests.size());
    dispatcher->run(tasks, [&](const detail::mpi_answer& a) {
      if (!a.failure.empty()) throw error(fmt::format("search: a measurement failed: {}", a.failure));
      out[a.key] = a.values;
    });
    return out;
  };
  try {
    study result = detail::run_search_with(g, space, strategy, objs, data, options, execute, measure);
    if (dispatcher) result.reissued = dispatcher->given_up();
    dispatcher.reset();  // tells the workers to stop
    return result;
  } catch (...) {
    // An error only the master meets (its journal, say) still lets the workers go.
    if (dispatcher) {
      dispatcher.reset();
    } else {
      int size = 1;
      MPI_Comm_size(mpi.communicator, &size);
      for (int r = 1; r < size; ++r) MPI_Send(nullptr, 0, MPI_CHAR, r, detail::stop_tag, mpi.communicator);
    }
    throw;
  }
}

}  // namespace mase::search
