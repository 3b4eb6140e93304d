#pragma once
// Running a graph: the evaluator (float, fake-quant and bit-exact) and its kernels.

#include <mase/eval/evaluator.hpp>
#include <mase/ir.hpp>
