// Pipeline parallelism (docs/distributed.md §9): the layer partition and the schedules as explicit step lists.
//
// The model's L blocks are cut into pp·v contiguous model chunks. Rank r of the pipeline holds the v chunks
// c·pp + r (c = 0..v-1, its local chunks; v = 1 is the plain pipeline). Model chunk 0 also holds the embedding
// (and must hold the hash-routed layers), the last model chunk hc_head/norm/head, the losses and the MTP block.
// What crosses chunks is the 4-stream mHC state [N, hc_mult, d] and, backwards, its gradient.
//
// A schedule is the ordered list of actions one pipeline rank runs for one optimizer step of m micro-batches:
//   1F1B (PipeDream-flush): min(pp-r-1, m) warm-up forwards, then one forward and one backward alternately, then the
//     remaining backwards; at most pp-r micro-batches are in flight on rank r.
//   interleaved 1F1B (Megatron virtual stages, v > 1, m divisible by pp): the same over the m·v (micro-batch, chunk)
//     pairs, forwards in groups of pp micro-batches per chunk ascending, backwards per chunk descending, with
//     (pp-r-1)·2 + (v-1)·pp warm-up forwards.
// recv_* actions wait for an activation (or gradient) from the neighbour; send_* actions start sending one. The
// executor posts every receive of a step when the step starts, so a recv action only waits.
#pragma once

#include <string>
#include <vector>

#include "trex/model/config.hpp"
#include "trex/model/model.hpp"

namespace trex::parallel {

enum class pp_op { recv_forward, forward, send_forward, recv_backward, backward, send_backward };
const char* pp_op_name(pp_op op);

struct pp_action {
    pp_op op = pp_op::forward;
    int mb = 0;     // micro-batch of this pipeline (0..m-1)
    int chunk = 0;  // local chunk (0..v-1); model chunk = chunk·pp + rank
    bool operator==(const pp_action& o) const { return op == o.op && mb == o.mb && chunk == o.chunk; }
};

enum class pp_schedule_kind { one_f_one_b, interleaved };

// "1f1b" or "interleaved"; anything else is an error naming dist.pp_schedule.
pp_schedule_kind parse_pp_schedule(const std::string& s);

// The actions of pipeline rank `rank` (0..pp-1) for m micro-batches and v chunks per rank (v = 1 for 1F1B).
// Sends and receives only appear where a neighbour exists (none before model chunk 0, none after the last).
std::vector<pp_action> pipeline_schedule(pp_schedule_kind kind, int pp, int v, int m, int rank);

// Micro-batches (counting (micro-batch, chunk) pairs) whose forward ran and whose backward did not yet, at most,
// over a schedule: the activations a rank keeps in flight.
int peak_in_flight(const std::vector<pp_action>& steps);

// The theoretical bubble fraction: (pp-1)/(m+pp-1) for 1F1B, (pp-1)/(v·m+pp-1) interleaved.
double theoretical_bubble(pp_schedule_kind kind, int pp, int v, int m);

// Blocks per model chunk. `layers` (dist.pp_layers, may be empty) gives them explicitly (pp·v positive counts summing
// to L); otherwise balanced: the remainder goes to the earliest chunks, and model chunk 0 gets at least the
// hash-routed layers. Errors name dist.pp_layers.
std::vector<int> pipeline_partition(const model_config& cfg, int pp, int v, const std::vector<int>& layers);

// One rank's part of the pipeline.
struct pipeline_layout {
    pp_schedule_kind kind = pp_schedule_kind::one_f_one_b;
    int pp = 1, v = 1, rank = 0;
    std::vector<int> blocks;          // blocks per model chunk [pp·v]
    std::vector<stage_range> ranges;  // my local chunks' block ranges [v]

    int model_chunk(int local) const { return local * pp + rank; }
    int chunks() const { return pp * v; }
    bool first_chunk(int local) const { return model_chunk(local) == 0; }
    bool last_chunk(int local) const { return model_chunk(local) == chunks() - 1; }
    // The pipeline rank holding model chunk mc.
    int rank_of_chunk(int mc) const { return mc % pp; }
    // The model chunk holding block l (l = L: the MTP block, on the last chunk).
    int chunk_of_block(int l) const;
    // The model chunk holding tensor `spec`: blocks by their chunk; embed.weight on model chunk 0; the head, final
    // norm, hc_head and the MTP block on the last chunk.
    int chunk_of(const tensor_spec& spec) const;
    // Does this rank hold (compute gradients for and update) tensor `spec`? Blocks by their chunk; embed.weight on
    // model chunk 0; the head, final norm, hc_head and the MTP block on the last chunk.
    bool holds(const tensor_spec& spec) const;
    // Does this rank store tensor `spec` (param_store's holds predicate)? What it holds, and embed.weight on the last
    // chunk's rank when the model has MTP (the MTP block looks it up; pipeline_step::sync_embedding copies it there).
    bool stores(const tensor_spec& spec, bool has_mtp) const;
    // "pp: 1f1b, 2 stages x 1 chunk(s): stage 0: embed + blocks 0-1 | stage 1: blocks 2-3 + head + MTP", one line
    // per rank, and the theoretical bubble for m micro-batches.
    std::string describe(int m) const;
};

pipeline_layout make_pipeline_layout(const model_config& cfg, pp_schedule_kind kind, int pp, int v, int rank,
                                     const std::vector<int>& layers);

}  // namespace trex::parallel
