// Configs compiled into the binary, so the main job runs with no file at hand.
#pragma once

namespace trex {

// configs/v4-tiny.json (spec §5.1) as of the build.
const char* embedded_tiny_config_json();

}  // namespace trex
