#pragma once
// A communicator of one rank on GPU 0, made as a program of one process per GPU makes its own
// (there, every rank gets the id of rank 0's ncclGetUniqueId through the program's bootstrap).
#include <catch2/catch.hpp>

#include <cuda_runtime.h>
#include <nccl.h>
#include <relax/multi/nccl.cuh>

namespace relax::testing {

struct OneNcclRank {
  ncclComm_t comm = nullptr;
  OneNcclRank() {
    ncclUniqueId id;
    REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess);
  }
  OneNcclRank(const OneNcclRank&) = delete;
  OneNcclRank& operator=(const OneNcclRank&) = delete;
  //! The Comm policy of a program whose communicator this is.
  relax::Nccl policy() const {
    relax::Nccl c;
    c.comm = comm;
    return c;
  }
  ~OneNcclRank() {
    if (comm != nullptr) (void)ncclCommDestroy(comm);
  }
};

}  // namespace relax::testing
