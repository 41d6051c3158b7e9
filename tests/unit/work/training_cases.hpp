// Training jobs the generator's tests share: a small MoE job and a tiny dense
// one whose every time is known by hand, and how they are generated and run.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>

#include "one_rank_run.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/training_dag.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::work::test_jobs {

/// A small MoE model: 4 layers (the first dense), hidden 1024, 8 heads, 16
/// experts top-2 of FFN 512, dense FFN 2048, vocab 1000, sequence 512.
inline JobSpec small_moe() {
  JobSpec j;
  j.file = "small-moe";
  ModelSpec& m = j.model;
  m.name = "small MoE";
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 8;
  m.ffn = 2048;
  m.vocab = 1000;
  m.sequence = 512;
  m.experts = 16;
  m.top_k = 2;
  m.expert_ffn = 512;
  m.shared_ffn = 512;
  m.dense_layers = 1;
  j.parallel.tp = 2;
  j.parallel.pp = 2;
  j.parallel.ep = 4;
  j.parallel.micro_batches = 3;
  j.parallel.micro_batch_tokens = 512;
  return j;
}

inline Dag generate(JobSpec& job, std::uint32_t gpus) {
  job.resolve(gpus);
  Dag dag;
  add_training_job(job, dag);
  dag.resolve();
  dag.validate(gpus);
  return dag;
}

/// The fabric small_moe() runs on at 64 GPUs: the default fat tree.
inline topo::Fabric fat_tree_64() {
  topo::FatTreeSpec spec;
  spec.base.gpus = 64;
  return topo::build_fat_tree(spec);
}

/// 64 GPUs, 4 a server, on 8 leaves of 8 (radix 16): every rank count up to
/// 8 cuts a job across leaves, and an EP group of 8 spans one leaf's servers.
inline topo::Fabric eight_leaf_fat_tree() {
  topo::FatTreeSpec spec;
  spec.base.gpus = 64;
  spec.base.gpus_per_server = 4;
  spec.radix = 16;
  return topo::build_fat_tree(spec);
}

/// Runs `dag` on `fabric` and returns the results; `slow_link` gets `delay` more latency.
inline exec::RunResults simulate(const topo::Fabric& fabric, const Dag& dag,
                                 topo::LinkId slow_link = topo::kNoLink, Time delay = 0) {
  exec::Perturbations perturbations;
  if (slow_link != topo::kNoLink) perturbations.links.push_back({slow_link, 0, 0, delay});
  net::NetworkOptions options;
  options.cell_size = 64 * 1024;
  options.buffer_per_class = 1024 * 1024;
  return test::run_one_rank(fabric, dag, options, perturbations).results;
}

inline Time last_task_end(const exec::RunResults& r) {
  Time end = 0;
  for (const Time t : r.task_end) end = std::max(end, t);
  return end;
}

/// A dense model on 2 GPUs (one per stage), with every time known by hand:
/// 2 layers, hidden 1024, 8 heads, FFN 4096 (GeLU), vocab 1000, sequence and
/// micro-batch 512 tokens, 100 TFLOP/s at 100% efficiency, backward 2x.
inline JobSpec tiny_dense(std::uint32_t micro_batches) {
  JobSpec j;
  j.file = "tiny-dense";
  j.model = {"tiny", 2, 1024, 8, 0, 4096, 1000, 512, false, 2, 0, 0, 0, 0, 0};
  j.parallel.pp = 2;
  j.parallel.micro_batches = micro_batches;
  j.parallel.micro_batch_tokens = 512;
  j.gpu.peak_tflops = 100;
  j.gpu.efficiency = 1.0;
  return j;
}

/// A dense model with GQA: hidden 768, 12 heads of 64, 6 KV heads, 2 layers,
/// one micro-batch of 768 tokens.
inline JobSpec gqa_dense() {
  JobSpec j;
  j.file = "gqa";
  j.model = {"gqa", 2, 768, 12, 6, 1024, 100, 768, true, 2, 0, 0, 0, 0, 0};
  j.parallel.micro_batches = 1;
  j.parallel.micro_batch_tokens = 768;
  return j;
}

/// Two GPUs (one per server) on one switch.
inline topo::Fabric two_gpu_fabric(BitsPerSecond rate, Time latency) {
  topo::FabricSpec spec;
  spec.gpus = 2;
  spec.gpus_per_server = 1;
  spec.link_rate = rate;
  spec.link_latency = latency;
  return topo::build_single_switch(spec);
}

}  // namespace shoal::work::test_jobs
