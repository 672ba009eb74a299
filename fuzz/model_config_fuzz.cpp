// Fuzz target: the model config reader, load_config (src/trex/model/config.hpp), through a scratch config.json.
//
// Input: the bytes of a config.json. A trex::error is a rejected input; anything else is a finding
// (fuzz_support.hpp). An accepted config must also survive a round trip: config_to_json of it is read back by
// config_from_json without error, and writing that again gives the same JSON (the keys `trex convert` writes are the
// keys the reader reads).
#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "trex/base/error.hpp"
#include "trex/model/config.hpp"

namespace {

void check_round_trip(const trex::model_config& cfg) {
    const nlohmann::json written = trex::config_to_json(cfg);
    trex::model_config again;
    try {
        again = trex::config_from_json(written, "round trip");
    } catch (const trex::error& e) {
        trex::fuzz::finding(std::string("config_to_json wrote a config config_from_json rejects: ") + e.what());
    }
    if (trex::config_to_json(again) != written)
        trex::fuzz::finding("config_to_json(config_from_json(config_to_json(c))) differs from config_to_json(c)");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = trex::fuzz::write_scratch_file("config.json", data, size);
    trex::model_config cfg;
    try {
        cfg = trex::load_config(path);
    } catch (const trex::error&) {
        return 0;
    }
    check_round_trip(cfg);
    return 0;
}
