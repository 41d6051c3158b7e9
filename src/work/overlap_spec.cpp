#include "shoal/work/overlap_spec.hpp"

#include "read_count.hpp"
#include "shoal/config/config_file.hpp"
#include "shoal/core/error.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::work {
std::string_view overlap_name(Overlap mode) {
  switch (mode) {
    case Overlap::kNone:
      return "none";
    case Overlap::kDualMicroBatch:
      return "dual-micro-batch";
    case Overlap::kChunked:
      return "chunked";
  }
  return "?";
}

void read_overlap(config::ConfigFile& c, std::string_view schedule, std::string_view gpu,
                  std::string_view moe, JobSpec& job) {
  OverlapSpec& o = job.overlap;
  if (const auto mode = c.string(schedule, "overlap")) {
    if (*mode == "none") {
      o.mode = Overlap::kNone;
    } else if (*mode == "dual-micro-batch") {
      o.mode = Overlap::kDualMicroBatch;
    } else if (*mode == "chunked") {
      o.mode = Overlap::kChunked;
    } else {
      throw Error("config " + c.path() + ": " + std::string(schedule) + ".overlap \"" + *mode +
                  "\" is unknown (none, dual-micro-batch or chunked)");
    }
  }
  read_count(c, schedule, "overlap_chunks", o.chunks);
  read_count(c, schedule, "comm_sms", o.comm_sms);
  read_count(c, gpu, "gpu_sms", job.gpu.sms);
  if (const auto swap = c.string(moe, "expert_swap")) {
    if (*swap == "none") {
      o.expert_swap = ExpertSwap::kNone;
    } else if (*swap == "per-step") {
      o.expert_swap = ExpertSwap::kPerStep;
    } else {
      throw Error("config " + c.path() + ": " + std::string(moe) + ".expert_swap \"" + *swap +
                  "\" is unknown (none or per-step)");
    }
  }
  read_count(c, moe, "expert_swap_state_bytes", o.swap_state_bytes);
}

void check_overlap(const JobSpec& job, const std::string& where) {
  const OverlapSpec& o = job.overlap;
  const ParallelSpec& p = job.parallel;
  const ScheduleSpec& s = job.schedule;
  const auto n = [](std::uint64_t v) { return std::to_string(v); };
  if (o.chunks < 1) throw Error(where + "schedule.overlap_chunks must be at least 1");
  if (o.chunks > 1 && o.mode != Overlap::kChunked) {
    throw Error(where + "schedule.overlap_chunks (" + n(o.chunks) +
                ") needs overlap = \"chunked\"");
  }
  if (o.mode == Overlap::kChunked) {
    if (job.model.experts == 0 || p.ep < 2) {
      throw Error(where +
                  "schedule.overlap = \"chunked\" splits the EP all-to-all: it needs an MoE "
                  "model and ep of 2 or more");
    }
    const std::uint64_t tokens = p.micro_batch_tokens / p.tp;
    if (o.chunks > tokens) {
      throw Error(where + "schedule.overlap_chunks (" + n(o.chunks) +
                  ") exceeds the tokens a GPU dispatches per micro-batch (" + n(tokens) + ")");
    }
  }
  if (o.mode == Overlap::kDualMicroBatch) {
    if (s.pp_schedule == PpSchedule::kDualPipe) {
      throw Error(where +
                  "schedule.overlap = \"dual-micro-batch\" cannot combine with pp_schedule = "
                  "\"dualpipe\", whose forward-and-backward pairs already overlap (use none or "
                  "chunked)");
    }
    if (p.micro_batches % 2 != 0) {
      throw Error(where +
                  "schedule.overlap = \"dual-micro-batch\" pairs micro-batches: it needs "
                  "an even micro_batches, not " +
                  n(p.micro_batches));
    }
    if (s.pp_schedule == PpSchedule::kInterleaved && p.micro_batches % (2 * p.pp) != 0) {
      throw Error(where +
                  "schedule.overlap = \"dual-micro-batch\" with pp_schedule = "
                  "\"interleaved\" needs micro_batches (" +
                  n(p.micro_batches) + ") to be a multiple of 2 x pp (" + n(2 * p.pp) + ")");
    }
  }
  if (job.gpu.sms == 0) throw Error(where + "gpu.gpu_sms must be at least 1");
  if (o.comm_sms >= job.gpu.sms) {
    throw Error(where + "schedule.comm_sms (" + n(o.comm_sms) + ") must be below gpu_sms (" +
                n(job.gpu.sms) + ")");
  }
  if (o.swap_state_bytes > 0 && o.expert_swap != ExpertSwap::kPerStep) {
    throw Error(where + "moe.expert_swap_state_bytes (" + n(o.swap_state_bytes) +
                ") needs expert_swap = \"per-step\"");
  }
  if (o.expert_swap == ExpertSwap::kPerStep) {
    if (job.model.experts == 0 || p.ep < 2) {
      throw Error(where + "moe.expert_swap = \"per-step\" needs an MoE model and ep of 2 or more");
    }
    if (job.skew.routing_name.empty()) {
      throw Error(where +
                  "moe.expert_swap = \"per-step\" needs each expert's load per iteration: give "
                  "a routing file ([skew] routing_file)");
    }
  }
}

}  // namespace shoal::work
