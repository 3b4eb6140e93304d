# cmake -P script: install, then configure, build and run the consumer project.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "command failed (${result}): ${ARGN}\n${err}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${MASE_BINARY_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${MASE_SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
run(${WORK_DIR}/build/consumer_compiled)
run(${WORK_DIR}/build/consumer_onnx_compiled ${MASE_SOURCE_DIR}/examples/data/mlp_784_256_64_10.onnx ${WORK_DIR}/onnx_out)
