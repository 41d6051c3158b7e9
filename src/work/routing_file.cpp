#include "shoal/work/routing_file.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <string_view>
#include <tuple>

#include "shoal/core/error.hpp"

namespace shoal::work {
namespace {

/// The comma-separated fields of a line, trimmed.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  for (;;) {
    const std::size_t comma = line.find(',');
    std::string_view f = line.substr(0, comma);
    while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) f.remove_prefix(1);
    while (!f.empty() && (f.back() == ' ' || f.back() == '\t' || f.back() == '\r')) {
      f.remove_suffix(1);
    }
    out.push_back(f);
    if (comma == std::string_view::npos) return out;
    line.remove_prefix(comma + 1);
  }
}

}  // namespace

std::vector<std::uint32_t> place_experts(const JobSpec& job, const std::vector<double>& load) {
  const std::uint64_t experts = job.model.experts;
  const std::uint32_t ep = job.parallel.ep;
  std::vector<std::uint32_t> member(experts);
  std::vector<std::uint32_t> slots(ep, 0);  // how many experts each member holds in order
  for (std::uint64_t e = 0; e < experts; ++e) {
    member[e] = static_cast<std::uint32_t>(e * ep / experts);
    ++slots[member[e]];
  }
  if (job.ep_comm.placement == ExpertPlacement::kInOrder) return member;
  if (job.ep_comm.placement == ExpertPlacement::kRoundRobin) {
    for (std::uint64_t e = 0; e < experts; ++e) member[e] = static_cast<std::uint32_t>(e % ep);
    return member;
  }
  // NIC-aware: the heaviest expert first, each onto the member (one NIC per
  // GPU) with the least load so far that has a slot left; ties by index.
  std::vector<std::uint64_t> order(experts);
  for (std::uint64_t e = 0; e < experts; ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return load[a] > load[b]; });
  std::vector<double> held(ep, 0.0);
  for (const std::uint64_t e : order) {
    std::uint32_t best = ep;
    for (std::uint32_t g = 0; g < ep; ++g) {
      if (slots[g] == 0) continue;
      if (best == ep || held[g] < held[best]) best = g;
    }
    member[e] = best;
    held[best] += load[e];
    --slots[best];
  }
  return member;
}

RoutingTable RoutingTable::read(const std::string& path, const JobSpec& job) {
  const ModelSpec& m = job.model;
  const ParallelSpec& p = job.parallel;
  const std::string file = "routing file " + path;
  if (m.experts == 0) throw Error(file + ": the job has no experts");
  std::ifstream in(path);
  if (!in) throw Error(file + ": cannot be read");
  // (iteration, layer from 1, micro-batch) -> tokens per member
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<double>> rows;
  std::string line;
  std::size_t number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = file + ", line " + std::to_string(number) + ": ";
    if (line.empty() || line[0] == '#') continue;
    const auto f = fields(line);
    if (!header) {
      if (f.size() != 5 || f[0] != "iteration" || f[1] != "layer" || f[2] != "micro_batch" ||
          f[3] != "expert" || f[4] != "tokens") {
        throw Error(where + "the header must be iteration,layer,micro_batch,expert,tokens");
      }
      header = true;
      continue;
    }
    if (f.size() != 5) throw Error(where + "expected 5 fields, found " + std::to_string(f.size()));
    std::uint64_t v[5] = {};
    constexpr const char* kNames[5] = {"iteration", "layer", "micro_batch", "expert", "tokens"};
    for (int i = 0; i < 5; ++i) {
      const auto [end, ec] = std::from_chars(f[i].data(), f[i].data() + f[i].size(), v[i]);
      if (ec != std::errc() || end != f[i].data() + f[i].size() || f[i].empty()) {
        throw Error(where + kNames[i] + " \"" + std::string(f[i]) +
                    "\" is not a whole number of at least 0");
      }
    }
    if (v[1] < 1 || v[1] > m.layers || !m.moe_layer(static_cast<std::uint32_t>(v[1] - 1))) {
      throw Error(where + "layer " + std::to_string(v[1]) + " is not an MoE layer of the model");
    }
    if (v[2] >= p.micro_batches) {
      throw Error(where + "micro_batch " + std::to_string(v[2]) + " is out of range (0 to " +
                  std::to_string(p.micro_batches - 1) + ")");
    }
    if (v[3] >= m.experts) {
      throw Error(where + "expert " + std::to_string(v[3]) + " is out of range (0 to " +
                  std::to_string(m.experts - 1) + ")");
    }
    if (v[0] > 1'000'000)
      throw Error(where + "iteration " + std::to_string(v[0]) + " is too large");
    auto& tokens = rows[{static_cast<std::uint32_t>(v[0]), static_cast<std::uint32_t>(v[1]),
                         static_cast<std::uint32_t>(v[2])}];
    tokens.resize(m.experts, 0.0);
    tokens[v[3]] += static_cast<double>(v[4]);
  }
  if (!header)
    throw Error(file + ": empty (expected the header iteration,layer,micro_batch,expert,tokens)");
  if (rows.empty()) throw Error(file + ": no rows");
  RoutingTable table;
  table.iterations_ = std::get<0>(rows.rbegin()->first) + 1;
  // Where each layer's experts sit: in order (expert e on member e x EP /
  // experts), or placed by load (the file's tokens per expert over all its
  // iterations and micro-batches).
  std::vector<std::vector<std::uint32_t>> member_of(m.layers);
  for (std::uint32_t layer = 0; layer < m.layers; ++layer) {
    if (!m.moe_layer(layer)) continue;
    std::vector<double> load(m.experts, 0.0);
    for (const auto& [key, tokens] : rows) {
      if (std::get<1>(key) != layer + 1) continue;
      for (std::size_t e = 0; e < tokens.size(); ++e) load[e] += tokens[e];
    }
    member_of[layer] = place_experts(job, load);
  }
  table.layers_ = m.layers;
  table.micro_batches_ = p.micro_batches;
  table.weights_.resize(std::size_t{table.iterations_} * m.layers * p.micro_batches);
  table.tokens_.resize(table.weights_.size());
  for (std::uint32_t it = 0; it < table.iterations_; ++it) {
    for (std::uint32_t layer = 0; layer < m.layers; ++layer) {
      if (!m.moe_layer(layer)) continue;
      for (std::uint32_t mb = 0; mb < p.micro_batches; ++mb) {
        const auto found = rows.find({it, layer + 1, mb});
        const std::string key = "iteration " + std::to_string(it) + ", layer " +
                                std::to_string(layer + 1) + ", micro_batch " + std::to_string(mb);
        if (found == rows.end()) throw Error(file + ": no rows for " + key);
        double total = 0;
        for (const double t : found->second) total += t;
        if (total <= 0) throw Error(file + ": no tokens for " + key);
        std::vector<double>& w =
            table.weights_[(std::size_t{it} * m.layers + layer) * p.micro_batches + mb];
        w.assign(p.ep, 0.0);
        for (std::size_t e = 0; e < found->second.size(); ++e) {
          w[member_of[layer][e]] += found->second[e] * static_cast<double>(p.ep) / total;
        }
        table.tokens_[(std::size_t{it} * m.layers + layer) * p.micro_batches + mb] = found->second;
      }
    }
  }
  table.member_of_ = std::move(member_of);
  return table;
}

const std::vector<double>& RoutingTable::weights(std::uint32_t iteration, std::uint32_t layer,
                                                 std::uint32_t mb) const {
  return weights_[index(iteration, layer, mb)];
}

}  // namespace shoal::work
