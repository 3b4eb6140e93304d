# `mase run --jobs N` writes the same bytes as `--jobs 1`: runs MODEL on INPUT with CONFIG in
# MODE on one thread and on two, and compares the output files.
#   cmake -DMASE=… -DMODEL=… -DINPUT=x=… -DCONFIG=… -DMODE=bit-exact -DOUTPUT_NAME=y -DOUT=dir -P check_jobs_output.cmake
file(REMOVE_RECURSE "${OUT}")
foreach(jobs 1 2)
  execute_process(COMMAND "${MASE}" run "${MODEL}" --input "${INPUT}" --config "${CONFIG}" --mode "${MODE}"
                          --jobs ${jobs} --output-dir "${OUT}/jobs_${jobs}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mase run --jobs ${jobs} failed (${rc}):\n${out}${err}")
  endif()
  file(SHA256 "${OUT}/jobs_${jobs}/${OUTPUT_NAME}.pb" hash_${jobs})
endforeach()
if(NOT hash_1 STREQUAL hash_2)
  message(FATAL_ERROR "mase run --jobs 2 wrote other bytes than --jobs 1")
endif()
