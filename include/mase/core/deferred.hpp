#pragma once
// deferred_t<T, Context>: T, spelled so that it depends on a template's parameter `Context`.
//
// A template's non-dependent expressions are compiled where the template is defined, so a pass or
// codec written as a template still makes every unit that includes it compile (for example) a
// std::regex or a JSON parser it calls. Naming such a type as deferred_t<T, Context> moves that
// work to the units that instantiate the template.

namespace mase {

template <class T, class Context>
struct deferred {
  using type = T;
};

template <class T, class Context>
using deferred_t = typename deferred<T, Context>::type;

}  // namespace mase
