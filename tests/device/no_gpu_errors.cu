// Without a GPU, every GPU entry point of CG throws relax::unavailable_error (not cuda_error):
// constructing a CsrOperator, a Poisson5Operator solver, a CG. Exits with 77 (skipped) where a
// GPU is present; the device tests cover that case.
#include <relax/core/device.hpp>
#include <relax/solver/cg.cuh>
#include <relax/sparse/device_csr.cuh>
#include <relax/stencil/operator.cuh>

#include <cstdio>
#include <string>

namespace {

template <class F>
bool throws_unavailable(const char* what, F&& f) {
  try {
    f();
  } catch (const relax::unavailable_error& e) {
    std::printf("ok: %s: %s\n", what, e.what());
    return true;
  } catch (const std::exception& e) {
    std::printf("FAILED: %s threw another exception: %s\n", what, e.what());
    return false;
  }
  std::printf("FAILED: %s did not throw\n", what);
  return false;
}

}  // namespace

int main() {
  if (relax::device_count() > 0) {
    std::printf("a CUDA device is present: the no-GPU checks are skipped\n");
    return 77;
  }
  relax::Csr<double> a;
  a.rows = a.cols = 1;
  a.row_ptr = {0, 1};
  a.col_idx = {0};
  a.values = {2.0};
  bool ok = throws_unavailable("CsrOperator", [&] { relax::CsrOperator<double> op(a); });
  ok = throws_unavailable("CG<Poisson5Operator>", [&] {
         relax::CG<relax::Poisson5Operator<double>> cg{relax::Poisson5Operator<double>(4)};
       }) && ok;
  return ok ? 0 : 1;
}
