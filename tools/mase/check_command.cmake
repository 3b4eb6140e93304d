# Runs one command and checks its exit status and output (CTest checks only zero / non-zero).
#   cmake -DARGS="prog|arg1|arg2" -DEXPECT_RC=1 [-DSTDOUT_REGEX=…] [-DSTDERR_REGEX=…]
#         [-DSTDERR_ONE_LINE=ON] [-DWORKING_DIRECTORY=dir] [-DFRESH_DIR=dir] -P check_command.cmake
# ARGS separates arguments with '|' (a CMake list would be split by add_test).
string(REPLACE "|" ";" command "${ARGS}")
if(NOT DEFINED WORKING_DIRECTORY)
  set(WORKING_DIRECTORY ".")
endif()
if(DEFINED FRESH_DIR)
  file(REMOVE_RECURSE "${FRESH_DIR}")
  file(MAKE_DIRECTORY "${FRESH_DIR}")
endif()
execute_process(COMMAND ${command} WORKING_DIRECTORY "${WORKING_DIRECTORY}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(report "command: ${command}\nexit status: ${rc}\n--- stdout ---\n${out}--- stderr ---\n${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "expected exit status ${EXPECT_RC}\n${report}")
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  message(FATAL_ERROR "stdout does not match '${STDOUT_REGEX}'\n${report}")
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "stderr does not match '${STDERR_REGEX}'\n${report}")
endif()
if(STDERR_ONE_LINE AND NOT err MATCHES "^mase: error: [^\n]*\n$")
  message(FATAL_ERROR "stderr is not one line 'mase: error: …'\n${report}")
endif()
message(STATUS "${report}")
