# `mase run` writes what the evaluator computes: runs MODEL on INPUT (.pb or .npy) into
# OUT/run, then builds a backend-test folder from MODEL, REFERENCE_INPUT (the same values as a
# TensorProto) and the output run wrote, and has `mase onnx-test` check, with zero tolerance,
# that evaluating the model reproduces that output exactly.
#   cmake -DMASE=… -DMODEL=… -DINPUT=x=… -DREFERENCE_INPUT=… -DOUTPUT_NAME=y -DOUT=dir -P check_run_output.cmake
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${MASE}" run "${MODEL}" --input "${INPUT}" --output-dir "${OUT}/run"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mase run failed (${rc}):\n${out}${err}")
endif()
if(NOT EXISTS "${OUT}/run/${OUTPUT_NAME}.pb")
  message(FATAL_ERROR "mase run did not write ${OUT}/run/${OUTPUT_NAME}.pb:\n${out}${err}")
endif()
set(case "${OUT}/run_output")
file(MAKE_DIRECTORY "${case}/test_data_set_0")
file(COPY_FILE "${MODEL}" "${case}/model.onnx")
file(COPY_FILE "${REFERENCE_INPUT}" "${case}/test_data_set_0/input_0.pb")
file(COPY_FILE "${OUT}/run/${OUTPUT_NAME}.pb" "${case}/test_data_set_0/output_0.pb")
execute_process(COMMAND "${MASE}" onnx-test "${case}" --rtol 0 --atol 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "PASS run_output")
  message(FATAL_ERROR "the output of mase run differs from a fresh evaluation (${rc}):\n${out}${err}")
endif()
