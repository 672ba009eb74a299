// Unrelated parallel machine scheduling: assign each job to one machine (processing time p_jm), minimise the
// makespan C_max. MILP.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace machine_scheduling_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int nm_ = 2 + (d >= 3) + g.r.int_in(0, 1), nj = 3 + d + g.r.int_in(0, 2);
    const strings J = g.names("job", nj), M = g.names("machine", nm_);
    std::vector<std::vector<double>> p(nj, std::vector<double>(nm_));
    for (int j = 0; j < nj; j++) {
        const int base = g.r.int_in(3, 15);
        for (int k = 0; k < nm_; k++) p[j][k] = std::max(1, base + g.r.int_in(-3, 6));
    }
    ojson& data = g.inst.data;
    data["jobs"] = list(J);
    data["machines"] = list(M);
    data["time"] = map2(J, M, p);
    model& m = g.inst.m;
    const int cmax = m.add_var("makespan", var_type::continuous, 0, inf, 1);
    std::vector<std::vector<int>> x(nj, std::vector<int>(nm_));
    for (int j = 0; j < nj; j++)
        for (int k = 0; k < nm_; k++) x[j][k] = m.add_var(nm("x", j, k), var_type::binary, 0, 1, 0);
    for (int j = 0; j < nj; j++) {
        std::vector<term> t;
        for (int k = 0; k < nm_; k++) t.push_back({x[j][k], 1});
        m.add_con(nm("assign", j), t, row_sense::eq, 1);
    }
    for (int k = 0; k < nm_; k++) {
        std::vector<term> t;
        for (int j = 0; j < nj; j++) t.push_back({x[j][k], p[j][k]});
        t.push_back({cmax, -1});
        m.add_con(nm("load", k), t, row_sense::le, 0);
    }
}

}  // namespace machine_scheduling_impl

TREX_FAMILY(machine_scheduling) {
    static const family f = [] {
        family f;
        f.name = "machine_scheduling";
        f.title = "Parallel machine scheduling (makespan)";
        f.milp = true;
        f.generate = machine_scheduling_impl::generate;
        f.scenarios = {
            {"production", {{"org", "a machine shop"}, {"job", "job"}, {"jobs", "jobs"}, {"machine", "machine"},
                            {"machines", "machines"}, {"unit", "hours"}, {"job_pool", "jobs"},
                            {"machine_pool", "machines"}}},
            {"generic", {{"org", "a compute cluster"}, {"job", "batch job"}, {"jobs", "batch jobs"},
                         {"machine", "server"}, {"machines", "servers"}, {"unit", "minutes"},
                         {"job_pool", "tasks"}, {"machine_pool", "machines"}}},
            {"healthcare", {{"org", "a hospital laboratory"}, {"job", "sample batch"}, {"jobs", "sample batches"},
                            {"machine", "analyzer"}, {"machines", "analyzers"}, {"unit", "minutes"},
                            {"job_pool", "jobs"}, {"machine_pool", "machines"}}},
            {"education", {{"org", "an exam office"}, {"job", "exam stack"}, {"jobs", "exam stacks"},
                           {"machine", "grader"}, {"machines", "graders"}, {"unit", "hours"},
                           {"job_pool", "courses"}, {"machine_pool", "workers"}}},
        };
        f.intro = "[{Org} has {n_jobs} {jobs} to process on {n_machines} {machines} working in parallel.|{Org} "
                  "must split {n_jobs} {jobs} among {n_machines} {machines}; times differ by {machine}.|There "
                  "are {n_jobs} {jobs} [waiting|to be processed|to run] at {org}, and {n_machines} {machines} "
                  "[work|run|operate] [in parallel|side by side] [to handle|to process] them; [a {job}'s "
                  "processing time depends on the {machine}|the time a {job} takes differs from {machine} to "
                  "{machine}].|[Each|Every] one of {n_jobs} {jobs} [must|has to|is to] be [handled|processed] "
                  "by one of {n_machines} parallel {machines} at {org}, [and|where] [processing times|the times "
                  "needed] [vary|differ] by {machine}.]";
        f.params = {
            {"jobs", {}, "{jobs}", "", true},
            {"machines", {}, "{machines}", "", true},
            {"time", {"jobs", "machines"}, "[processing time|time needed|processing duration]", "{unit}"},
        };
        f.constraints = {"[Each {job} runs entirely on one {machine}.|A {job} cannot be split between "
                         "{machines}.|[Every|Each] {job} [must|has to] be [assigned|given] to [exactly one|one "
                         "and only one|a single] {machine}, which [processes|runs] it [entirely|in full|from "
                         "start to end].|[No|Not a single] {job} [may|can] be [split|divided|shared] [between|"
                         "among|across] [two or more|several] {machines}; [each|every] {job} [goes|is assigned] "
                         "to [exactly one|one] {machine}.|[Assign|Give] [each|every] {job} [in full|whole|as a "
                         "whole] to [exactly one|one and only one|a single] {machine}.]",
                         "[All {machines} start at time zero and process their {jobs} one after another.|A "
                         "{machine} finishes when its last {job} is done.|[Each|Every] {machine} [starts|begins] "
                         "at time zero and [works through|processes|runs] its {jobs} [one after another|one at a "
                         "time|in sequence], so it [finishes|is done] after the [total|sum] of their processing "
                         "times.|The [finishing time|finish time] of a {machine} [equals|is] the [total|sum|"
                         "combined] processing time of the {jobs} [assigned to it|it is given|it runs], [counted|"
                         "measured] from time zero.|[Starting|Beginning] at time zero, [a|each] {machine} "
                         "[handles|processes] [its|the] {jobs} [assigned to it|given to it] [without "
                         "overlap|one at a time] and [finishes|is done] [once all of them are done|when the "
                         "last of them is complete].]"};
        f.objective = "[Minimize the time at which the last {machine} finishes (the makespan).|Make the whole "
                      "batch finish as early as possible.|The [goal|aim|objective] is to [make|keep] the "
                      "makespan, the [finishing|finish] time of the {machine} that [finishes|is done] last, as "
                      "[small|short] "
                      "as possible.|[Choose|Find|Decide] an assignment [so that|such that|in which] the last "
                      "{machine} to finish [does so|is done] as [early|soon] as possible.|[Assign|Give] the "
                      "{jobs} to {machines} [to minimize|so as to minimize] the makespan, [that is|i.e.] the "
                      "[time|moment] [at which|when] the [last|final] {machine} finishes.]";
        f.integrality = "[Assignments are yes/no.|Each {job} goes to exactly one {machine}.|Whether a {job} "
                        "[runs|goes] on a {machine} is a [yes/no|binary|all-or-nothing] [decision|choice].|[No|"
                        "Not a single] {job} [may|can] be [split|divided] [between|among] {machines}.|[Every|"
                        "Each] [assignment|choice of {machine} for a {job}] is [all or nothing|yes or no], "
                        "never [partial|fractional].]";
        f.decisions = "which {machine} processes each {job} (binary) and the makespan";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& C_{\\max} \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{m\\in M} x_{jm} = 1 && \\forall j\\in J \\quad\\text{(assign)} \\\\\n"
                  "& \\sum_{j\\in J} p_{jm}\\,x_{jm} \\le C_{\\max} && \\forall m\\in M \\quad\\text{(load)} \\\\\n"
                  "& x_{jm} \\in \\{0,1\\},\\ C_{\\max} \\ge 0\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$J$: {jobs}; $M$: {machines}", "$p_{jm}$: processing time of $j$ on $m$",
                           "$x_{jm} = 1$ if $j$ runs on $m$; $C_{\\max}$: makespan"};
        f.code = R"(J = data["jobs"]
M = data["machines"]
cmax = @var("makespan", 0, None, C)
x = {(j, k): @var(f"x_{a + 1}_{b + 1}", 0, 1, B) for a, j in enumerate(J) for b, k in enumerate(M)}
@obj(cmax)
for a, j in enumerate(J):
    @add(@sum(x[j, k] for k in M) == 1, f"assign_{a + 1}")
for b, k in enumerate(M):
    @add(@sum(data["time"][j][k] * x[j, k] for j in J) - cmax <= 0, f"load_{b + 1}")
)";
        f.var_docs = {{"makespan", {}, "makespan"}, {"x", {"jobs", "machines"}, "{0} on {1}"}};
        f.con_docs = {{"assign", {"jobs"}, "assignment of {0}"}, {"load", {"machines"}, "workload of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
