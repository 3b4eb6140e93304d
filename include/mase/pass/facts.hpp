#pragma once
// Facts: what a pipeline has established about a graph so far. A pass states the facts it needs
// and the facts it provides; the graph's type (graph_with<Facts...>) carries the established
// ones, so running a pass before the pass that provides what it needs does not compile.

#include <type_traits>

namespace mase {

template <class... Facts>
struct facts {};

namespace fact {
// Each built-in fact names the pass that establishes it.
struct metadata_initialised { static constexpr const char* provided_by = "init_metadata"; };
struct common_metadata { static constexpr const char* provided_by = "add_common_metadata"; };
struct software_metadata { static constexpr const char* provided_by = "add_software_metadata"; };
struct statistics { static constexpr const char* provided_by = "profile_statistics"; };
struct quantized { static constexpr const char* provided_by = "quantize"; };
struct hardware_metadata { static constexpr const char* provided_by = "add_hardware_metadata"; };
}  // namespace fact

namespace detail {

template <class Fact, class Set>
struct contains_fact;
template <class Fact, class... Fs>
struct contains_fact<Fact, facts<Fs...>> : std::bool_constant<(std::is_same_v<Fact, Fs> || ...)> {};

// Set union keeping the first set's order.
template <class Set, class Added>
struct union_facts;
template <class... Fs>
struct union_facts<facts<Fs...>, facts<>> {
  using type = facts<Fs...>;
};
template <class... Fs, class G, class... Gs>
struct union_facts<facts<Fs...>, facts<G, Gs...>> {
  using type = typename union_facts<std::conditional_t<contains_fact<G, facts<Fs...>>::value, facts<Fs...>, facts<Fs..., G>>,
                                    facts<Gs...>>::type;
};

// Set difference.
template <class Set, class Removed>
struct remove_facts;
template <class Removed>
struct remove_facts<facts<>, Removed> {
  using type = facts<>;
};
template <class F, class... Fs, class Removed>
struct remove_facts<facts<F, Fs...>, Removed> {
  using rest = typename remove_facts<facts<Fs...>, Removed>::type;
  template <class R>
  struct prepend;
  template <class... Rs>
  struct prepend<facts<Rs...>> {
    using type = facts<F, Rs...>;
  };
  using type = std::conditional_t<contains_fact<F, Removed>::value, rest, typename prepend<rest>::type>;
};

template <class T>
inline constexpr bool dependent_false = false;

}  // namespace detail

// Instantiated for each fact a pass needs and the graph lacks: its static_assert is the
// diagnostic. The "required from" lines above it name the Pass.
template <class Fact, class Pass>
struct pass_needs_fact {
  static_assert(detail::dependent_false<Pass>,
                "pipeline order: a pass needs a fact that no earlier pass provides; the Fact template argument "
                "names it (a user-defined fact): run the pass that provides it earlier in the pipeline");
};
template <class Pass>
struct pass_needs_fact<fact::metadata_initialised, Pass> {
  static_assert(detail::dependent_false<Pass>,
                "pipeline order: this pass reads node metadata, which does not exist yet; run init_metadata "
                "earlier in the pipeline");
};
template <class Pass>
struct pass_needs_fact<fact::common_metadata, Pass> {
  static_assert(detail::dependent_false<Pass>,
                "pipeline order: this pass needs common metadata (mase_op, args, results and their shapes); run "
                "add_common_metadata earlier in the pipeline");
};
template <class Pass>
struct pass_needs_fact<fact::software_metadata, Pass> {
  static_assert(detail::dependent_false<Pass>,
                "pipeline order: this pass needs software metadata; run add_software_metadata earlier in the "
                "pipeline");
};
template <class Pass>
struct pass_needs_fact<fact::statistics, Pass> {
  static_assert(detail::dependent_false<Pass>,
                "pipeline order: this pass needs profiled statistics; run profile_statistics earlier in the "
                "pipeline");
};
template <class Pass>
struct pass_needs_fact<fact::quantized, Pass> {
  static_assert(detail::dependent_false<Pass>,
                "pipeline order: this pass needs a quantized graph; run quantize earlier in the pipeline");
};
template <class Pass>
struct pass_needs_fact<fact::hardware_metadata, Pass> {
  static_assert(detail::dependent_false<Pass>,
                "pipeline order: this pass needs hardware metadata; run add_hardware_metadata earlier in the "
                "pipeline");
};

}  // namespace mase
