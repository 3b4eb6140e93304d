#pragma once
// Passes and pipelines. A pass is a function object with
//   using needs = facts<…>;  using provides = facts<…>;  [using invalidates = facts<…>;]
//   Info run(graph& g) const;       // Info may be void
// `a | b` composes passes into a pipeline; `graph | pipeline` runs it and returns the graph,
// typed with the facts now established; `mase::run(graph, pipeline)` also returns each pass's
// info. A pass whose needs are not established by earlier passes is a compile error naming the
// pass to run first (see facts.hpp).

#include <mase/ir/graph.hpp>
#include <mase/pass/facts.hpp>

#include <concepts>
#include <tuple>
#include <type_traits>
#include <utility>

namespace mase {

// A graph whose type records the facts established about it. It is a graph: every graph
// operation works on it, and it converts to a plain graph (dropping the facts) implicitly.
template <class... Facts>
class graph_with : public graph {
public:
  using established = facts<Facts...>;
  graph_with() = default;
  explicit graph_with(graph g) : graph(std::move(g)) {}
};

// What a pass without an info struct reports.
struct no_info {
  friend bool operator==(no_info, no_info) = default;
};

template <class P>
concept graph_pass = requires {
  typename P::needs;
  typename P::provides;
} && requires(const P& p, graph& g) { p.run(g); };

template <graph_pass... Passes>
struct pipeline {
  std::tuple<Passes...> passes;
};

namespace detail {

template <class T>
struct is_pipeline : std::false_type {};
template <class... Ps>
struct is_pipeline<pipeline<Ps...>> : std::true_type {};

template <class T>
concept pipeable = graph_pass<std::remove_cvref_t<T>> || is_pipeline<std::remove_cvref_t<T>>::value;

template <class P>
auto as_pipeline(P&& p) {
  using T = std::remove_cvref_t<P>;
  if constexpr (is_pipeline<T>::value) return std::forward<P>(p);
  else return pipeline<T>{std::tuple<T>(std::forward<P>(p))};
}

template <class Graph>
struct established_facts {
  using type = facts<>;
};
template <class... Fs>
struct established_facts<graph_with<Fs...>> {
  using type = facts<Fs...>;
};

template <class Set>
struct graph_with_set;
template <class... Fs>
struct graph_with_set<facts<Fs...>> {
  using type = graph_with<Fs...>;
};

template <class P>
struct invalidated_facts {
  using type = facts<>;
};
template <class P>
  requires requires { typename P::invalidates; }
struct invalidated_facts<P> {
  using type = typename P::invalidates;
};

template <class P>
using pass_info_t = std::conditional_t<std::is_void_v<decltype(std::declval<const P&>().run(std::declval<graph&>()))>,
                                       no_info, decltype(std::declval<const P&>().run(std::declval<graph&>()))>;

// One pass applied to a graph with `Established` facts.
template <class Established, class Pass>
struct pass_step {
  template <class Fact>
  static constexpr bool has() {
    if constexpr (contains_fact<Fact, Established>::value) {
      return true;
    } else {
      (void)sizeof(pass_needs_fact<Fact, Pass>);  // its static_assert is the diagnostic
      return false;
    }
  }
  template <class... Needed>
  static constexpr bool has_all(facts<Needed...>) {
    // Counted, not &&-ed: every missing fact's static_assert fires, not only the first one's.
    return (int{has<Needed>()} + ... + 0) == static_cast<int>(sizeof...(Needed));
  }
  static constexpr bool ok = has_all(typename Pass::needs{});
  using after = typename remove_facts<typename union_facts<Established, typename Pass::provides>::type,
                                      typename invalidated_facts<Pass>::type>::type;
};

template <class Established, class... Passes>
struct pipeline_steps {
  static constexpr bool ok = true;
  using after = Established;
};
template <class Established, class Pass, class... Rest>
struct pipeline_steps<Established, Pass, Rest...> {
  using step = pass_step<Established, Pass>;
  static constexpr bool ok = step::ok && pipeline_steps<typename step::after, Rest...>::ok;
  using after = typename pipeline_steps<typename step::after, Rest...>::after;
};

template <class P>
pass_info_t<P> run_one(const P& pass, graph& g) {
  if constexpr (std::is_void_v<decltype(pass.run(g))>) {
    pass.run(g);
    return {};
  } else {
    return pass.run(g);
  }
}

}  // namespace detail

// What mase::run returns: the graph and the info of every pass, in pipeline order.
template <class Graph, class... Infos>
struct run_result {
  Graph graph;
  std::tuple<Infos...> info;

  // The info of the pass that produced an `Info` (the type must occur once in the pipeline).
  template <class Info>
  const Info& get() const {
    return std::get<Info>(info);
  }
};

// Composition: a | b is a pipeline running a, then b.
template <detail::pipeable A, detail::pipeable B>
auto operator|(A&& a, B&& b) {
  return std::apply(
      [](auto&&... ps) {
        return pipeline<std::remove_cvref_t<decltype(ps)>...>{std::tuple<std::remove_cvref_t<decltype(ps)>...>(
            std::forward<decltype(ps)>(ps)...)};
      },
      std::tuple_cat(detail::as_pipeline(std::forward<A>(a)).passes, detail::as_pipeline(std::forward<B>(b)).passes));
}

// Runs a pass or a pipeline over a graph (taken by value), returning the graph and every pass's
// info. Does not compile if a pass needs a fact no earlier pass (or the graph's type) provides.
template <class G, detail::pipeable P>
  requires std::derived_from<std::remove_cvref_t<G>, graph>
auto run(G&& g, const P& passes) {
  return std::apply(
      [&](const auto&... ps) {
        using established = typename detail::established_facts<std::remove_cvref_t<G>>::type;
        using steps = detail::pipeline_steps<established, std::remove_cvref_t<decltype(ps)>...>;
        using result_graph = typename detail::graph_with_set<typename steps::after>::type;
        using result = run_result<result_graph, detail::pass_info_t<std::remove_cvref_t<decltype(ps)>>...>;
        if constexpr (steps::ok) {
          graph work(std::forward<G>(g));
          // Braced initialisation runs the passes left to right.
          std::tuple<detail::pass_info_t<std::remove_cvref_t<decltype(ps)>>...> infos{detail::run_one(ps, work)...};
          return result{result_graph(std::move(work)), std::move(infos)};
        } else {
          return result{};
        }
      },
      detail::as_pipeline(passes).passes);
}

// graph | pipeline: runs it and returns the graph, typed with the facts now established.
template <class G, detail::pipeable P>
  requires std::derived_from<std::remove_cvref_t<G>, graph>
auto operator|(G&& g, const P& passes) {
  return run(std::forward<G>(g), passes).graph;
}

// A pass from a callable over `graph&` (a transform) or `const graph&` (an analysis), with the
// facts it needs and provides. The callable's result, if any, is the pass's info.
template <class Needs, class Provides, class F>
struct function_pass {
  using needs = Needs;
  using provides = Provides;
  F function;

  auto run(graph& g) const {
    if constexpr (std::is_invocable_v<const F&, graph&>) return function(g);
    else return function(std::as_const(g));
  }
};

template <class Needs = facts<>, class Provides = facts<>, class F>
constexpr function_pass<Needs, Provides, F> make_pass(F function) {
  return {std::move(function)};
}

}  // namespace mase
