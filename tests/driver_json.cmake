# The driver's JSON report, on the CPU reference backend. Run as:
#   cmake -DDRIVER=<relax-diffusion> -DOUT=<file.json> -DCASE=diverged|report -P driver_json.cmake
# diverged: a solve that diverges still writes valid JSON: the non-finite residual is null (JSON
#   has no NaN), and the run says it did not converge (exit status 2).
# report: the report says what ran: the box given by --nx and --ny (and n as null, since --n
#   sized no axis), blocking checks (the reference backend never overlaps them, whatever --checks
#   asks), r as typed (numbers read back to the same double), and the total of its steps' sweeps.
if(CASE STREQUAL "diverged")
  set(args --n 16 --steps 1 --amplitude 3e38)
  set(expected_status 2)
else()
  set(args --nx 5 --ny 7 --steps 2 --r 0.1234567 --checks overlapped)
  set(expected_status 0)
endif()
execute_process(COMMAND "${DRIVER}" ${args} --backend cpu --json "${OUT}"
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL expected_status)
  message(FATAL_ERROR "expected exit status ${expected_status}, got ${status}:\n${output}")
endif()
file(READ "${OUT}" report)
# string(JSON) stops with an error on text that is not JSON.
if(CASE STREQUAL "diverged")
  string(JSON converged GET "${report}" converged)
  string(JSON rho_type TYPE "${report}" steps 0 rho)
  string(JSON status_text GET "${report}" steps 0 status)
  if(converged OR NOT rho_type STREQUAL "NULL" OR NOT status_text MATCHES "non-finite")
    message(FATAL_ERROR "unexpected report (converged ${converged}, rho ${rho_type}, status ${status_text}):\n${report}")
  endif()
  message(STATUS "diverged run: valid JSON, rho null, status '${status_text}'")
else()
  string(JSON n_type TYPE "${report}" n)
  string(JSON nx GET "${report}" nx)
  string(JSON ny GET "${report}" ny)
  string(JSON checks GET "${report}" checks)
  string(JSON r GET "${report}" r)
  string(JSON total GET "${report}" total_sweeps)
  string(JSON first GET "${report}" steps 0 sweeps)
  string(JSON second GET "${report}" steps 1 sweeps)
  math(EXPR sum "${first} + ${second}")
  if(NOT n_type STREQUAL "NULL" OR NOT nx EQUAL 5 OR NOT ny EQUAL 7 OR NOT checks STREQUAL "blocking" OR
     NOT r STREQUAL "0.1234567" OR NOT total EQUAL sum)
    message(FATAL_ERROR "unexpected report (n ${n_type}, nx ${nx}, ny ${ny}, checks ${checks}, r ${r}, "
                        "total_sweeps ${total}, steps ${first} + ${second}):\n${report}")
  endif()
  message(STATUS "report: n null, 5 x 7, blocking checks, r ${r}, ${total} sweeps")
endif()
