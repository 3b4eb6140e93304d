# `mase onnx-test --jobs 2` prints the same report, in the same order, as `--jobs 1`:
#   cmake -DMASE=… -DTESTS=dir -P check_onnx_test_jobs.cmake
foreach(jobs 1 2)
  execute_process(COMMAND "${MASE}" onnx-test "${TESTS}" --jobs ${jobs}
                  RESULT_VARIABLE rc_${jobs} OUTPUT_VARIABLE out_${jobs} ERROR_VARIABLE err)
  if(NOT out_${jobs} MATCHES "[1-9][0-9]* passed, 0 failed, [0-9]+ skipped\n$")
    message(FATAL_ERROR "mase onnx-test --jobs ${jobs} (rc ${rc_${jobs}}) did not pass:\n${out_${jobs}}${err}")
  endif()
endforeach()
if(NOT out_1 STREQUAL out_2)
  message(FATAL_ERROR "mase onnx-test --jobs 2 reported otherwise than --jobs 1:\n--- jobs 1\n${out_1}--- jobs 2\n${out_2}")
endif()
