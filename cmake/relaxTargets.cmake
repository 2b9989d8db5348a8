# Helpers for the project's own executables (tests, examples, benchmarks).

# A CUDA or C++ executable of this project: relax, OpenMP for the reference backend, warnings,
# and the project's CUDA architectures.
function(relax_executable target)
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE relax::reference_openmp)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr>)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${RELAX_CUDA_ARCHITECTURES}")
endfunction()
