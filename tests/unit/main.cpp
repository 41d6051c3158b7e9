// Unit tests run inside one MPI process; engine tests use Comm::self().
#include <gtest/gtest.h>

#include "shoal/core/comm.hpp"

int main(int argc, char** argv) {
  shoal::core::MpiSession mpi(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
