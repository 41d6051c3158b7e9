// Routing files (work/routing_file.hpp): read against a small MoE job (4
// layers, the first dense, 16 experts over EP 4, 2 micro-batches), with each
// placement, and its weights looked up.
#include "shoal/work/routing_file.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = shoal::fuzz::write_input(data, size, "routing.csv");
  shoal::work::JobSpec job;
  job.model.layers = 4;
  job.model.dense_layers = 1;
  job.model.experts = 16;
  job.model.top_k = 2;
  job.parallel.ep = 4;
  job.parallel.micro_batches = 2;
  for (const auto placement :
       {shoal::work::ExpertPlacement::kInOrder, shoal::work::ExpertPlacement::kRoundRobin,
        shoal::work::ExpertPlacement::kNicAware}) {
    job.ep_comm.placement = placement;
    shoal::fuzz::expect_only_errors([&] {
      const auto table = shoal::work::RoutingTable::read(path, job);
      for (std::uint32_t it = 0; it < 3; ++it) {
        for (std::uint32_t layer = 1; layer < 4; ++layer) table.weights(it, layer, 1);
      }
    });
  }
  return 0;
}
