// Job-shop scheduling (makespan): every job visits every machine once, in its
// own route order, with a processing time per operation; a machine processes
// one operation at a time. Disjunctive big-M MILP: start times s_jm, binaries
// y_mjk (job j before job k on machine m, j < k), makespan C <= deadline; big-M
// = the sum of all processing times. Infeasible design: the deadline is below
// the total processing time of the longest job.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace job_shop_impl {  // named, not anonymous: the families build as one
                           // unity translation unit

// Makespan of a greedy list schedule (earliest-start operation first): a
// feasible schedule.
double list_schedule(const std::vector<std::vector<double>>& p, const std::vector<std::vector<int>>& route) {
    const int nj = (int)p.size(), nm_ = (int)p[0].size();
    std::vector<int> next(nj, 0);
    std::vector<double> job_free(nj, 0), mach_free(nm_, 0);
    double cmax = 0;
    for (int step = 0; step < nj * nm_; step++) {
        int best = -1;
        double best_start = 0;
        for (int j = 0; j < nj; j++) {
            if (next[j] >= nm_) continue;
            const double st = std::max(job_free[j], mach_free[route[j][next[j]]]);
            if (best < 0 || st < best_start) best = j, best_start = st;
        }
        const int k = route[best][next[best]];
        job_free[best] = mach_free[k] = best_start + p[best][k];
        cmax = std::max(cmax, job_free[best]);
        next[best]++;
    }
    return cmax;
}

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int nj = d <= 2 ? 3 : d <= 3 ? 4 : 5, nm_ = d == 1 ? 2 + g.r.int_in(0, 1) : d <= 4 ? 3 : 4;
    const strings J = g.names("job", nj), M = g.names("machine", nm_);
    std::vector<std::vector<double>> p(nj, std::vector<double>(nm_)), order(nj, std::vector<double>(nm_));
    std::vector<std::vector<int>> route(nj);
    for (int j = 0; j < nj; j++) {
        route[j] = g.r.permutation(nm_);
        for (int r = 0; r < nm_; r++) order[j][route[j][r]] = r + 1;
        for (int k = 0; k < nm_; k++) p[j][k] = g.r.int_in(2, 12);
    }
    double deadline = list_schedule(p, route) + g.r.int_in(0, 4);
    if (g.req.want == design::infeasible) {
        double longest = 0;
        for (int j = 0; j < nj; j++) longest = std::max(longest, sum(p[j]));
        deadline = longest - g.r.int_in(1, 3);
    }
    double big_m = 0;
    for (int j = 0; j < nj; j++) big_m += sum(p[j]);
    ojson& data = g.inst.data;
    data["jobs"] = list(J);
    data["machines"] = list(M);
    data["order"] = map2(J, M, order);
    data["time"] = map2(J, M, p);
    data["deadline"] = num(deadline);
    model& m = g.inst.m;
    const int cmax = m.add_var("makespan", var_type::continuous, 0, deadline, 1);
    std::vector<std::vector<int>> s(nj, std::vector<int>(nm_));
    for (int j = 0; j < nj; j++)
        for (int k = 0; k < nm_; k++) s[j][k] = m.add_var(nm("s", j, k), var_type::continuous, 0, inf, 0);
    std::vector<std::vector<std::vector<int>>> y(nm_, std::vector<std::vector<int>>(nj, std::vector<int>(nj, -1)));
    for (int k = 0; k < nm_; k++)
        for (int a = 0; a < nj; a++)
            for (int b = a + 1; b < nj; b++)
                y[k][a][b] = m.add_var(fmt::format("y_{}_{}_{}", k + 1, a + 1, b + 1), var_type::binary, 0, 1, 0);
    for (int j = 0; j < nj; j++) {
        for (int r = 1; r < nm_; r++) {
            const int prev = route[j][r - 1], cur = route[j][r];
            m.add_con(nm("route", j, cur), {{s[j][cur], 1}, {s[j][prev], -1}}, row_sense::ge, p[j][prev]);
        }
        const int last = route[j][nm_ - 1];
        m.add_con(nm("finish", j), {{cmax, 1}, {s[j][last], -1}}, row_sense::ge, p[j][last]);
    }
    for (int k = 0; k < nm_; k++)
        for (int a = 0; a < nj; a++)
            for (int b = a + 1; b < nj; b++) {
                m.add_con(fmt::format("before_{}_{}_{}", k + 1, a + 1, b + 1),
                          {{s[a][k], 1}, {s[b][k], -1}, {y[k][a][b], big_m}}, row_sense::le, big_m - p[a][k]);
                m.add_con(fmt::format("after_{}_{}_{}", k + 1, a + 1, b + 1),
                          {{s[b][k], 1}, {s[a][k], -1}, {y[k][a][b], -big_m}}, row_sense::le, -p[b][k]);
            }
}

}  // namespace job_shop_impl

TREX_FAMILY(job_shop) {
    static const family f = [] {
        family f;
        f.name = "job_shop";
        f.title = "Job-shop scheduling (makespan)";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = job_shop_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a machine shop"},
              {"job", "job"},
              {"jobs", "jobs"},
              {"machine", "machine"},
              {"machines", "machines"},
              {"unit", "hours"},
              {"job_pool", "jobs"},
              {"machine_pool", "machines"}}},
            {"healthcare",
             {{"org", "a hospital laboratory"},
              {"job", "sample batch"},
              {"jobs", "sample batches"},
              {"machine", "analyzer"},
              {"machines", "analyzers"},
              {"unit", "minutes"},
              {"job_pool", "hospitals"},
              {"machine_pool", "machines"}}},
            {"education",
             {{"org", "a university print center"},
              {"job", "course pack"},
              {"jobs", "course packs"},
              {"machine", "workstation"},
              {"machines", "workstations"},
              {"unit", "hours"},
              {"job_pool", "courses"},
              {"machine_pool", "machines"}}},
            {"generic",
             {{"org", "a computing center"},
              {"job", "workflow"},
              {"jobs", "workflows"},
              {"machine", "server"},
              {"machines", "servers"},
              {"unit", "minutes"},
              {"job_pool", "tasks"},
              {"machine_pool", "sites"}}},
        };
        f.intro =
            "[{Org} has {n_jobs} {jobs} to schedule on {n_machines} {machines}. Every {job} visits each "
            "{machine} exactly once, in its own fixed order.|{Org} must sequence {n_jobs} {jobs} on "
            "{n_machines} {machines}; each {job} passes through all {machines} along its own route.|There are "
            "{n_jobs} {jobs} [to be scheduled|to schedule|to sequence] on {n_machines} {machines} at {org}, and "
            "[each|every] {job} [must visit|goes through|passes through] [every|each] {machine} exactly once, "
            "[following|in] its own fixed route.|[Each|Every] one of {n_jobs} {jobs} [has to|must|is to] "
            "[pass through|visit] all {n_machines} {machines} [once|exactly once], in a fixed order of its "
            "own, and {org} [needs|wants|has] to [schedule|sequence|plan] [the work|them].]";
        f.params = {
            {"jobs", {}, "{jobs}", "", true},
            {"machines", {}, "{machines}", "", true},
            {"order", {"jobs", "machines"},
             "[position in the route (1 = visited first)|place in the route (1 = first {machine} visited)|step "
             "number in the route (1 = visited first)]",
             ""},
            {"time", {"jobs", "machines"},
             "[processing time on each {machine}|time needed on each {machine}|processing time at each {machine}]",
             "{unit}"},
            {"deadline", {},
             "[deadline by which all {jobs} must be finished|deadline for finishing all {jobs}|latest time by "
             "which every {job} must be done]",
             "{unit}"},
        };
        f.constraints = {
            "[A {job} can start its next operation only after the previous one in its route is finished.|The "
            "operations of each {job} follow its route: one starts only when the previous one has ended.|[No|"
            "Not a single] {job} [may|can] [start|begin] an operation [before|until] the [previous|preceding] "
            "operation [in|on] its route [has finished|is complete|is done].|[Each|Every] operation of a {job} "
            "[must wait for the [previous|preceding] operation in its route to finish|has to wait until the "
            "[previous|preceding] operation in its route is finished|may start only after the [previous|"
            "preceding] operation in its route has ended].|[Within|Along] [each|every] {job}'s route, [an "
            "operation|each "
            "operation] [may|can] [only start|start only] [once|after|when] the one [before it|preceding it] "
            "[has finished|is complete].]",
            "[A {machine} processes one {job} at a time, without interruption.|No {machine} can work on two "
            "{jobs} at once, and an operation is never interrupted.|[Each|Every] {machine} [handles|processes|"
            "works on] [at most one|no more than one|only one] {job} at [a|any one] time, and [operations run|each "
            "operation runs] [without interruption|to the end once started|uninterrupted].|[Once|After] an "
            "operation [starts|has started] on a {machine}, it [runs|continues] [without a break|uninterrupted|"
            "to completion], and [that|the] {machine} [cannot|may not] [take|work on] [another|a second] {job} "
            "[meanwhile|at the same time|in the meantime].|It is [not allowed|not possible|forbidden] for a {machine} "
            "to "
            "[work on|process] two {jobs} [at once|at the same time], and operations [are never|may not be] "
            "interrupted.]",
            "[All work starts at time zero and must be completed by the deadline.|Everything starts at time zero "
            "and has to be done by the deadline.|[No|Not a single] operation [may|can] [start|begin] before time "
            "zero or [finish|end] after the deadline.|[Every|Each] operation [must|has to] [start|begin] at or "
            "after time zero and [end|finish|be done] [by|no later than|at or before] the deadline.|[Work|The "
            "schedule] [begins|starts] at time zero, and [all {jobs} must|all {jobs} have to|every {job} must|every "
            "{job} "
            "has to] be "
            "[finished|completed|done] [by|no later than] the deadline.]"};
        f.objective =
            "[Minimize the makespan, the time at which the last operation finishes.|Finish all {jobs} as early as "
            "possible (minimize the makespan).|The [goal|aim|objective] is to [make|keep] the makespan (the "
            "[finishing time|completion time] of the last operation) as [small|short] as possible.|[Choose|Find|"
            "Plan] a schedule [in which|where|so that] the last operation [finishes|ends|is completed] as "
            "[early|soon] as possible.|[Make|Get] the time [at which|when] the [final|last] operation [ends|"
            "finishes] as [early|small] as possible[, that is, minimize the makespan|].]";
        f.integrality =
            "[The order of two {jobs} on a {machine} is a yes/no decision.|On each {machine}, one of any two "
            "{jobs} goes first.|[For|On] [each|every] {machine}, [which of two {jobs} goes first|the order of "
            "any two {jobs}] is a [yes/no|binary|two-way] [decision|choice].|[Any two {jobs}|Two {jobs}] "
            "[sharing|on] a {machine} [must|have to] be [ordered|sequenced]: one [goes|is processed] [first|"
            "before the other], [entirely|with no overlap].|Whether a {job} [precedes|comes before] another on a "
            "{machine} is [an all-or-nothing|a yes/no] [decision|choice].]";
        f.decisions =
            "the start time of every operation, the order of every pair "
            "of {jobs} on each {machine} "
            "(binary) and the makespan";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& C \\\\\n"
            "\\text{s.t.}\\;& s_{jm'} - s_{jm} \\ge p_{jm} && \\forall j,\\ "
            "m \\text{ directly before } m' "
            "\\text{ in the route of } j \\quad\\text{(route)} \\\\\n"
            "& C - s_{jm} \\ge p_{jm} && \\forall j,\\ m \\text{ last in the "
            "route of } j "
            "\\quad\\text{(finish)} \\\\\n"
            "& s_{jm} - s_{km} + B\\,y_{mjk} \\le B - p_{jm} && \\forall "
            "m,\\ j < k \\quad\\text{(before)} "
            "\\\\\n"
            "& s_{km} - s_{jm} - B\\,y_{mjk} \\le -p_{km} && \\forall m,\\ j "
            "< k \\quad\\text{(after)} \\\\\n"
            "& 0 \\le C \\le D,\\ s_{jm} \\ge 0,\\ y_{mjk} \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {
            "$J$: {jobs}; $M$: {machines}; the route of $j$ orders $M$ by the "
            "given step",
            "$p_{jm}$: processing time; $D$: deadline", "$B = \\sum_{j,m} p_{jm}$: big-M (sum of all processing times)",
            "$s_{jm}$: start of $j$ on $m$; $y_{mjk} = 1$ if $j$ precedes $k$ on "
            "$m$; $C$: makespan"};
        f.code = R"(J = data["jobs"]
M = data["machines"]
p = data["time"]
big_m = sum(p[j][k] for j in J for k in M)
route = {j: sorted(M, key=lambda k: data["order"][j][k]) for j in J}
cmax = @var("makespan", 0, data["deadline"], C)
s = {(j, k): @var(f"s_{a + 1}_{b + 1}", 0, None, C) for a, j in enumerate(J) for b, k in enumerate(M)}
y = {(k, i, j): @var(f"y_{c + 1}_{a + 1}_{b + 1}", 0, 1, B)
     for c, k in enumerate(M) for a, i in enumerate(J) for b, j in enumerate(J) if a < b}
@obj(cmax)
for a, j in enumerate(J):
    for r in range(1, len(M)):
        prev, cur = route[j][r - 1], route[j][r]
        @add(s[j, cur] - s[j, prev] >= p[j][prev], f"route_{a + 1}_{M.index(cur) + 1}")
    last = route[j][-1]
    @add(cmax - s[j, last] >= p[j][last], f"finish_{a + 1}")
for c, k in enumerate(M):
    for a, i in enumerate(J):
        for b, j in enumerate(J):
            if a < b:
                @add(s[i, k] - s[j, k] + big_m * y[k, i, j] <= big_m - p[i][k], f"before_{c + 1}_{a + 1}_{b + 1}")
                @add(s[j, k] - s[i, k] - big_m * y[k, i, j] <= -p[j][k], f"after_{c + 1}_{a + 1}_{b + 1}")
)";
        f.var_docs = {{"makespan", {}, "makespan"},
                      {"s", {"jobs", "machines"}, "start time of {0} on {1}"},
                      {"y", {"machines", "jobs", "jobs"}, "{1} goes before {2} on {0}"}};
        f.con_docs = {{"route", {"jobs", "machines"}, "route of {0}: the operation on {1} waits for the previous one"},
                      {"finish", {"jobs"}, "makespan covers the last operation of {0}"},
                      {"before", {"machines", "jobs", "jobs"}, "{1} before {2} on {0} (if chosen)"},
                      {"after", {"machines", "jobs", "jobs"}, "{2} before {1} on {0} (otherwise)"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
