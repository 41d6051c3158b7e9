// MPI tests: every rank runs every test (they are collective); only rank 0 reports.
#include <gtest/gtest.h>

#include "shoal/core/comm.hpp"

int main(int argc, char** argv) {
  shoal::core::MpiSession mpi(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (shoal::core::Comm::world().rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  // A failure on any rank fails the run: mpirun reports the worst exit code.
  return RUN_ALL_TESTS();
}
