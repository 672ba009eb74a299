// `trex train`: the training loop (issue 4). From a train_config: build or load the model, the optimizer, the data
// stream; run steps of gradient accumulation, clipping, Muon/AdamW update and aux-loss-free bias update; log every
// step to <out>/metrics.jsonl; checkpoint atomically; resume exactly; write the run report at the end.
#pragma once

#include <string>

#include "trex/train/train_config.hpp"

namespace trex {

namespace parallel {
class communicator;
}

struct train_summary {
    int64_t start_step = 0;   // first step of this invocation (> 0 after a resume)
    int64_t end_step = 0;     // optimizer steps completed
    int64_t skipped = 0;      // updates skipped by the NaN/Inf guard (whole run)
    double last_loss = 0;
    double first_loss = 0;    // loss of this invocation's first step
    std::string checkpoint;   // last checkpoint written
    std::string report;       // report.md path ("" if not written)
};

// Runs the training described by cfg. Progress goes to stderr; throws trex::error on bad input or when the guard
// stops the run (after writing a final checkpoint). Under mpirun the world is MPI (parallel::make_world_communicator):
// every rank calls this; rank 0 writes the metrics, checkpoints and report (docs/distributed.md).
train_summary run_training(const train_config& cfg);
// The same on a given world communicator.
train_summary run_training(const train_config& cfg, parallel::communicator& world);

}  // namespace trex
