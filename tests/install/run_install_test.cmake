# cmake -P script: install mase into a scratch prefix, then configure, build and run the projects
# that use it as a user's would: tests/install/without_components (find_package(mase) alone, with
# the optional components' libraries hidden, in both modes) and tests/install/consumer (the
# components, the first tutorial and the C++ blocks of README.md and docs/*.md).
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
string(TIMESTAMP started "%s")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "command failed (${result}): ${ARGN}\n${err}")
  endif()
endfunction()

set(configure_options -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_BUILD_TYPE=Release)
if(CXX_COMPILER_LAUNCHER)
  list(APPEND configure_options -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER})
endif()

run(${CMAKE_COMMAND} --install ${MASE_BINARY_DIR} --prefix ${prefix})

# mase::mase and mase::header_only alone must configure without ONNX, Protobuf or toml++: a find_package(mase) that
# looks for them unasked fails here.
set(hidden -DCMAKE_DISABLE_FIND_PACKAGE_ONNX=ON -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON
    -DCMAKE_DISABLE_FIND_PACKAGE_tomlplusplus=ON)
run(${CMAKE_COMMAND} -S ${MASE_SOURCE_DIR}/tests/install/without_components -B ${WORK_DIR}/without_components
    ${configure_options} ${hidden})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/without_components --parallel 2)
run(${WORK_DIR}/without_components/consumer)
run(${WORK_DIR}/without_components/consumer_header_only)

# ... and asking for the onnx component there must fail, naming what it needs.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${MASE_SOURCE_DIR}/tests/install/without_components
                  -B ${WORK_DIR}/without_onnx ${configure_options} ${hidden} -DMASE_COMPONENTS=onnx
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result EQUAL 0 OR NOT err MATCHES "The component onnx needs Protobuf and ONNX")
  message(FATAL_ERROR "find_package(mase COMPONENTS onnx) without ONNX: expected it to fail naming "
                      "Protobuf and ONNX; it returned ${result}:\n${out}\n${err}")
endif()
message("without_components: find_package(mase COMPONENTS onnx) without ONNX fails, naming it")

run(${CMAKE_COMMAND} -S ${MASE_SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build
    ${configure_options} -DMASE_SOURCE_DIR=${MASE_SOURCE_DIR})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel 2)
run(${WORK_DIR}/build/consumer_compiled)
run(${WORK_DIR}/build/consumer_onnx_compiled ${MASE_SOURCE_DIR}/examples/data/mlp_784_256_64_10.onnx ${WORK_DIR}/onnx_out)
if(EXISTS ${WORK_DIR}/build/consumer_search_solvers)
  run(${WORK_DIR}/build/consumer_search_solvers)
else()
  message("consumer_search_solvers: not built (pagmo, GLPK or MPI missing)")
endif()

# The docs' programs, each in a folder of its own (a block may write files where it runs).
include(${WORK_DIR}/build/docs_programs.cmake)
list(LENGTH docs_programs pages)
foreach(program IN LISTS docs_programs)
  get_filename_component(name ${program} NAME)
  file(MAKE_DIRECTORY ${WORK_DIR}/run/${name})
  execute_process(COMMAND ${program} WORKING_DIRECTORY ${WORK_DIR}/run/${name}
                  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${program} failed (${result}):\n${err}")
  endif()
endforeach()
string(TIMESTAMP finished "%s")
math(EXPR seconds "${finished} - ${started}")
message("docs: the C++ blocks of ${pages} pages compiled against the installed package and run")
message("install test: ${seconds} s")
