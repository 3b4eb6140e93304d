#pragma once
// mase's foundation: errors, shapes, tensors. Every other umbrella includes it.

#include <mase/core/error.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
