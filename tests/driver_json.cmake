# The driver's JSON report of a solve that diverged is valid JSON: the non-finite residual is
# written as null (JSON has no NaN), and the run says it did not converge (exit status 2).
# Run as: cmake -DDRIVER=<relax-diffusion> -DOUT=<file.json> -P driver_json.cmake
execute_process(
  COMMAND "${DRIVER}" --n 16 --steps 1 --amplitude 3e38 --backend cpu --json "${OUT}"
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 2)
  message(FATAL_ERROR "expected exit status 2 (not converged), got ${status}:\n${output}")
endif()
file(READ "${OUT}" report)
# string(JSON) stops with an error on text that is not JSON.
string(JSON converged GET "${report}" converged)
string(JSON rho_type TYPE "${report}" steps 0 rho)
string(JSON status_text GET "${report}" steps 0 status)
if(converged OR NOT rho_type STREQUAL "NULL" OR NOT status_text MATCHES "non-finite")
  message(FATAL_ERROR "unexpected report (converged ${converged}, rho ${rho_type}, status ${status_text}):\n${report}")
endif()
message(STATUS "diverged run: valid JSON, rho null, status '${status_text}'")
