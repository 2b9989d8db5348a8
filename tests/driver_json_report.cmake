# The driver's JSON report says what ran: the box given by --nx and --ny (and n as null, since
# --n sized no axis), blocking checks on the CPU reference backend (which never overlaps them,
# whatever --checks asks), r as typed (numbers read back to the same double), and the total of
# its steps' sweeps.
# Run as: cmake -DDRIVER=<relax-diffusion> -DOUT=<file.json> -P driver_json_report.cmake
execute_process(
  COMMAND "${DRIVER}" --nx 5 --ny 7 --steps 2 --r 0.1234567 --checks overlapped --backend cpu --json "${OUT}"
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "expected exit status 0 (converged), got ${status}:\n${output}")
endif()
file(READ "${OUT}" report)
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
