#pragma once
//! \file
//! `relax::OperatorView<Op>`: a non-owning handle on a CG operator, so that one matrix uploaded to
//! the GPU serves several solvers. `CG<Operator, Variant>` owns the operator it is given; given a
//! view it owns only the view:
//!
//!     relax::CsrOperator<double> a(csr);                       // one upload
//!     relax::CG<relax::OperatorView<relax::CsrOperator<double>>, relax::Fused> fused(relax::view(a));
//!     relax::CG<relax::OperatorView<relax::CsrOperator<double>>, relax::Pipelined> pipe(relax::view(a));
//!
//! The viewed operator must outlive every solver that holds a view of it, and must not be moved
//! from meanwhile (the view keeps its address). Solvers only call its const members (`size`,
//! `apply`, `rows`), so solvers that share it may run one after the other on any streams; running
//! them concurrently is safe as far as the operator goes (it is read-only), each solver having
//! its own vectors.

#include <cstdint>
#include <type_traits>
#include <utility>

namespace relax {

namespace detail {
template <class Op, class = void>
struct rows_type_of {
  using type = void;
};
template <class Op>
struct rows_type_of<Op, std::void_t<typename Op::rows_type>> {
  using type = typename Op::rows_type;
};
}  // namespace detail

//! A non-owning view of an operator (`value_type`, `size()`, `apply(p, q, stream)` and, where the
//! operator has them, `rows()` and `rows_type`); copyable, so it can be given to any number of
//! solvers.
template <class Op>
class OperatorView {
 public:
  using operator_type = Op;
  using value_type = typename Op::value_type;
  //! The viewed operator's rows type (void if it has none).
  using rows_type = typename detail::rows_type_of<Op>::type;

  //! Views `op`, which must outlive the view and keep its address.
  explicit OperatorView(const Op& op) noexcept : op_(&op) {}

  std::int64_t size() const { return op_->size(); }

  //! q = A p, forwarded to the viewed operator.
  template <class... Args>
  void apply(Args&&... args) const {
    op_->apply(std::forward<Args>(args)...);
  }

  //! The viewed operator's rows (only where it has them: the fused CG variants need them).
  template <class O = Op>
  auto rows() const -> decltype(std::declval<const O&>().rows()) {
    return op_->rows();
  }

  //! The viewed operator.
  const Op& get() const noexcept { return *op_; }

 private:
  const Op* op_;
};

//! A view of `op` (see `OperatorView`).
template <class Op>
OperatorView<Op> view(const Op& op) noexcept {
  return OperatorView<Op>(op);
}

}  // namespace relax
