// The scenario catalogue of the story families (story_lp, story_ilp): settings in many domains, each with its own
// actor, three decision items and per-item measures in its own words (JSON, see story_lp.cpp for the schema).
#pragma once

namespace trex::optmodel::families {

const char* story_catalogue_json();

}  // namespace trex::optmodel::families
