// Parallel HDF5 works on this toolchain: every rank writes its slice of one
// dataset collectively through MPI-IO, then every rank reads the whole back.
#include <hdf5.h>
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2) {
    if (rank == 0) std::fprintf(stderr, "usage: shoal_hdf5_smoke FILE.h5\n");
    MPI_Finalize();
    return 2;
  }
  constexpr hsize_t kPerRank = 1000;
  int failures = 0;

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  const hsize_t total = kPerRank * static_cast<hsize_t>(size);
  hid_t space = H5Screate_simple(1, &total, nullptr);
  hid_t dset =
      H5Dcreate2(file, "values", H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t offset = kPerRank * static_cast<hsize_t>(rank);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &offset, nullptr, &kPerRank, nullptr);
  hid_t memspace = H5Screate_simple(1, &kPerRank, nullptr);
  std::vector<long long> mine(kPerRank);
  for (hsize_t i = 0; i < kPerRank; ++i) mine[i] = static_cast<long long>(offset + i) * 7;
  hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
  if (H5Dwrite(dset, H5T_NATIVE_INT64, memspace, space, xfer, mine.data()) < 0) ++failures;
  H5Pclose(xfer);
  H5Sclose(memspace);
  H5Sclose(space);
  H5Dclose(dset);
  H5Fclose(file);

  file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
  dset = H5Dopen2(file, "values", H5P_DEFAULT);
  std::vector<long long> all(total);
  if (H5Dread(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data()) < 0) ++failures;
  for (hsize_t i = 0; i < total; ++i) {
    if (all[i] != static_cast<long long>(i) * 7) ++failures;
  }
  H5Dclose(dset);
  H5Fclose(file);
  H5Pclose(fapl);

  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("parallel HDF5: %d ranks wrote and read %llu values, %d mismatches\n", size,
                static_cast<unsigned long long>(total), all_failures);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
