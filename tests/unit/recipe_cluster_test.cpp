// trex recipe --profile cluster: the planner's layout for the T-Rex V4-Flash CPT launcher's setup, shown next to the
// launcher's own layout, and launch scripts that carry exactly that layout.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/recipe/cluster.hpp"

namespace fs = std::filesystem;
using namespace trex;
using ojson = nlohmann::ordered_json;

TEST(RecipeCluster, ThePlannersLayoutGoesIntoEveryLaunchScript) {
    const std::string dir = test::scratch_dir("recipe-cluster");
    const ojson r = recipe::run_cluster_profile({"v4-flash-a3-cpt", dir, test::trex_binary()});
    const ojson plan = ojson::parse(read_file(dir + "/plan.json"));
    // the chosen layout: the fastest of the planner's list with >= 5 % of the device memory free
    const ojson& best = r["best"];
    size_t k = 0;
    while (k < plan["best"].size() && plan["best"][k] != best) k++;
    ASSERT_LT(k, plan["best"].size());
    EXPECT_TRUE(best["fits"].get<bool>());
    const auto free_share = [](const ojson& l) {
        return l["headroom_gb"].get<double>() / (l["peak_gb"].get<double>() + l["headroom_gb"].get<double>());
    };
    EXPECT_GE(free_share(best), 0.05);
    for (size_t i = 0; i < k; i++) EXPECT_LT(free_share(plan["best"][i]), 0.05) << i;
    // DP x micro-batch x accumulation = the launcher's global batch of 128
    const int accum = 128 / (best["dp"].get<int>() * best["micro_batch"].get<int>());
    // the reference is the launcher's layout, ranked among the alternatives
    EXPECT_EQ(r["reference"]["layout"].get<std::string>().rfind("TP1 PP4 EP32", 0), 0u);
    const std::string md = read_file(dir + "/cluster.md");
    EXPECT_NE(md.find(best["layout"].get<std::string>()), std::string::npos);
    EXPECT_NE(md.find("reference (as given)"), std::string::npos);

    const std::string meg = read_file(dir + "/launch/megatron-cpt.sh");
    for (const char* k : {"tp", "pp", "ep"}) {
        const std::string flag = std::string(k) == "tp"   ? "--tensor-model-parallel-size "
                                 : std::string(k) == "pp" ? "--pipeline-model-parallel-size "
                                                          : "--expert-model-parallel-size ";
        EXPECT_NE(meg.find(flag + std::to_string(best[k].get<int>()) + " "), std::string::npos) << flag;
    }
    EXPECT_NE(meg.find("--global-batch-size 128 --seq-length 4096"), std::string::npos) << meg;
    const std::string slurm = read_file(dir + "/launch/trex-sft.slurm");
    EXPECT_NE(slurm.find(fmt::format("--tp {} --pp {} --ep {} --set data.seq=4096 --set data.batch={} "
                                     "--set data.grad_accum={}",
                                     best["tp"].get<int>(), best["pp"].get<int>(), best["ep"].get<int>(),
                                     best["micro_batch"].get<int>(), accum)),
              std::string::npos)
        << slurm;
    // every script parses, and a trex script without its run config says how to call it
    for (const char* s : {"trex-cpt.slurm", "trex-sft.slurm", "megatron-cpt.sh", "megatron-sft.sh"})
        EXPECT_EQ(std::system(("bash -n " + dir + "/launch/" + s).c_str()), 0) << s;
    EXPECT_EQ(WEXITSTATUS(std::system(("bash " + dir + "/launch/trex-cpt.slurm 2>/dev/null").c_str())), 2);
}

TEST(RecipeCluster, MegatronArgumentsFollowTheLayout) {
    const ojson layout = {{"tp", 2},
                          {"pp", 8},
                          {"vpp", 2},
                          {"ep", 64},
                          {"etp", 1},
                          {"cp", 1},
                          {"micro_batch", 1},
                          {"schedule", "1f1b"},
                          {"recompute", {"full"}}};
    const ojson setup = {{"global_batch", 512}, {"seq_len", 4096}, {"precision", "bf16"}};
    const std::string a = recipe::megatron_arguments(layout, setup, 61);
    EXPECT_NE(a.find("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 8 --expert-model-parallel-size 64"),
              std::string::npos)
        << a;
    EXPECT_NE(a.find("--sequence-parallel"), std::string::npos);
    EXPECT_NE(a.find("--num-layers-per-virtual-pipeline-stage 3"), std::string::npos) << a;  // 61 / (8 * 2)
    EXPECT_NE(a.find("--recompute-granularity full"), std::string::npos);
    EXPECT_NE(a.find("--bf16"), std::string::npos);
}

TEST(RecipeCluster, AnUnknownRunFileIsAnError) {
    const std::string dir = test::scratch_dir("recipe-cluster-bad");
    EXPECT_THROW(recipe::run_cluster_profile({"no-such-run", dir, test::trex_binary()}), trex::error);
}
