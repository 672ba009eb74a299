// Permutation flow shop (makespan): every job visits the machines in the same order 1..m and all machines process
// the jobs in one common sequence. Positional MILP: x_jk = 1 if job j takes sequence position k, c_ki = completion
// time of the job in position k on machine i; minimize c_nm, which must not exceed the deadline. Infeasible design:
// the deadline is below a lower bound (the longest job's total time or the busiest machine's total load).
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace flow_shop_impl {  // named, not anonymous: the families build as one unity translation unit

// Makespan of the jobs in the given order.
double sequence_makespan(const std::vector<std::vector<double>>& p, const std::vector<int>& order) {
    const size_t nm_ = p[0].size();
    std::vector<double> done(nm_, 0);
    for (int j : order)
        for (size_t i = 0; i < nm_; i++) done[i] = std::max(done[i], i > 0 ? done[i - 1] : 0.0) + p[(size_t)j][i];
    return done[nm_ - 1];
}

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int nj = d == 1 ? 3 + g.r.int_in(0, 1) : d + 2, nm_ = d == 1 ? 2 : d <= 3 ? 3 : 4;
    const strings J = g.names("job", nj);
    strings M = g.names("machine", nm_);
    std::sort(M.begin(), M.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;  // "Machine 1" .. in numeric order
    });
    strings P;
    const char* suffix[] = {"th", "st", "nd", "rd"};
    for (int k = 1; k <= nj; k++)
        P.push_back(fmt::format("{}{}", k, k % 10 <= 3 && k / 10 != 1 ? suffix[k % 10] : "th"));
    std::vector<std::vector<double>> p(nj, std::vector<double>(nm_));
    for (int j = 0; j < nj; j++)
        for (int i = 0; i < nm_; i++) p[j][i] = g.r.int_in(2, 15);
    std::vector<int> identity(nj);
    for (int j = 0; j < nj; j++) identity[j] = j;
    double deadline = sequence_makespan(p, identity) + g.r.int_in(0, 5);
    if (g.req.want == design::infeasible) {
        double bound = 0;
        for (int j = 0; j < nj; j++) bound = std::max(bound, sum(p[j]));
        for (int i = 0; i < nm_; i++) {
            double load = 0;
            for (int j = 0; j < nj; j++) load += p[j][i];
            bound = std::max(bound, load);
        }
        deadline = bound - g.r.int_in(1, 3);
    }
    ojson& data = g.inst.data;
    data["jobs"] = list(J);
    data["machines"] = list(M);
    data["positions"] = list(P);
    data["time"] = map2(J, M, p);
    data["deadline"] = num(deadline);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(nj, std::vector<int>(nj)), c(nj, std::vector<int>(nm_));
    for (int j = 0; j < nj; j++)
        for (int k = 0; k < nj; k++) x[j][k] = m.add_var(nm("x", j, k), var_type::binary, 0, 1, 0);
    for (int k = 0; k < nj; k++)
        for (int i = 0; i < nm_; i++)
            c[k][i] = m.add_var(nm("c", k, i), var_type::continuous, 0, inf, k == nj - 1 && i == nm_ - 1 ? 1 : 0);
    for (int j = 0; j < nj; j++) {
        std::vector<term> t;
        for (int k = 0; k < nj; k++) t.push_back({x[j][k], 1});
        m.add_con(nm("job", j), t, row_sense::eq, 1);
    }
    for (int k = 0; k < nj; k++) {
        std::vector<term> t;
        for (int j = 0; j < nj; j++) t.push_back({x[j][k], 1});
        m.add_con(nm("position", k), t, row_sense::eq, 1);
    }
    for (int k = 0; k < nj; k++)
        for (int i = 0; i < nm_; i++) {
            std::vector<term> t = {{c[k][i], 1}};
            if (i > 0) t.push_back({c[k][i - 1], -1});
            for (int j = 0; j < nj; j++) t.push_back({x[j][k], -p[j][i]});
            m.add_con(nm("flow", k, i), t, row_sense::ge, 0);
            if (k > 0) {
                std::vector<term> u = {{c[k][i], 1}, {c[k - 1][i], -1}};
                for (int j = 0; j < nj; j++) u.push_back({x[j][k], -p[j][i]});
                m.add_con(nm("machine", k, i), u, row_sense::ge, 0);
            }
        }
    m.add_con("deadline", {{c[nj - 1][nm_ - 1], 1}}, row_sense::le, deadline);
}

}  // namespace flow_shop_impl

TREX_FAMILY(flow_shop) {
    static const family f = [] {
        family f;
        f.name = "flow_shop";
        f.title = "Permutation flow-shop scheduling (makespan)";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = flow_shop_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a furniture workshop"},
              {"job", "order"},
              {"jobs", "orders"},
              {"machine", "stage"},
              {"machines", "stages"},
              {"unit", "hours"},
              {"job_pool", "furniture"},
              {"machine_pool", "machines"}}},
            {"logistics",
             {{"org", "a parcel hub"},
              {"job", "consignment"},
              {"jobs", "consignments"},
              {"machine", "processing line"},
              {"machines", "processing lines"},
              {"unit", "minutes"},
              {"job_pool", "cities"},
              {"machine_pool", "sites"}}},
            {"education",
             {{"org", "an examination board"},
              {"job", "exam batch"},
              {"jobs", "exam batches"},
              {"machine", "processing step"},
              {"machines", "processing steps"},
              {"unit", "hours"},
              {"job_pool", "schools"},
              {"machine_pool", "tasks"}}},
            {"healthcare",
             {{"org", "a pharmacy compounding unit"},
              {"job", "prescription batch"},
              {"jobs", "prescription batches"},
              {"machine", "workstation"},
              {"machines", "workstations"},
              {"unit", "minutes"},
              {"job_pool", "hospitals"},
              {"machine_pool", "machines"}}},
        };
        f.intro =
            "[{Org} must process {n_jobs} {jobs}. Every {job} passes through the same {n_machines} {machines} "
            "in the listed order, and all {machines} handle the {jobs} in one common sequence.|{Org} has "
            "{n_jobs} {jobs} that each go through {n_machines} {machines} in the same order; one processing "
            "sequence of the {jobs} is used on every {machine}.|There are {n_jobs} {jobs} [to process|to be "
            "processed] at {org}; [each|every one] [visits|goes through] the {n_machines} {machines} in the listed "
            "order, and [the same|one common] sequence of {jobs} is [used|kept] on all {machines}.|[All|Each of "
            "the] {n_jobs} {jobs} at {org} [pass|must pass] through {n_machines} {machines} in the [same|listed] "
            "order, [with|using] [a single|one] [job|processing] sequence [shared by|common to] all {machines}.]";
        f.params = {
            {"jobs", {}, "{jobs}", "", true},
            {"machines", {}, "[{machines} (in processing order)|{machines} (listed in processing order)|{machines}, "
             "in the order visited]", "", true},
            {"positions", {}, "[positions of the sequence|sequence positions|positions in the sequence]", "", true},
            {"time", {"jobs", "machines"}, "processing time", "{unit}"},
            {"deadline", {}, "[deadline for finishing all {jobs}|deadline by which all {jobs} must be "
             "done|deadline for completing every {job}]", "{unit}"},
        };
        f.constraints = {
            "[Each {job} takes exactly one position of the sequence and each position holds exactly one {job}.|The "
            "sequence assigns every {job} to exactly one position and every position to exactly one {job}.|[Every|"
            "Each] position [in|of] the sequence [must|has to] be [filled by|given to] exactly one {job}, and "
            "[every|each] {job} [must|has to] [occupy|take] exactly one position.|No {job} may [take|fill] two "
            "positions and no position may [be left empty|stay empty] or [hold|take] two {jobs}: the sequence "
            "[matches|pairs] {jobs} and positions one to one.]",
            "[A {job} can start on a {machine} only after it has left the previous {machine} and after the "
            "{machine} has finished the {job} in the previous position.|On every {machine}, a {job} waits until "
            "it has cleared the previous {machine} and the preceding {job} in the sequence is done on this "
            "{machine}.|No {job} may [begin|start] on a {machine} before [it is finished on|it has completed] the "
            "[previous|preceding] {machine}, nor before the {job} [one position earlier|in the previous position] "
            "[has left|is done on] that {machine}.|Only [after|once] a {job} [has finished|is done] on the "
            "[previous|preceding] {machine} and the {machine} has [completed|finished] the {job} in the "
            "[previous|preceding] position [can|may] the {job} start on [that|this] {machine}; [its "
            "completion|the completion time] there is its start plus its processing time.]",
            "[The last {job} must leave the last {machine} by the deadline.|All processing must be finished by the "
            "deadline.|The completion time of the last {job} on the last {machine} [must|has to] be [at most|no "
            "later than] the deadline.|No {job} may [finish|be completed] on the last {machine} [after|later than] "
            "the deadline.]"};
        f.objective =
            "[Minimize the makespan, the completion time of the last {job} on the last {machine}.|Find the sequence "
            "that finishes all {jobs} earliest, [that is|i.e.] with the [smallest|shortest] completion time of the "
            "last {job} on the last {machine}.|The [goal|aim|objective] is [the smallest|the shortest|a minimal] "
            "makespan: the time at which the last {job} [leaves|is finished on] the last {machine}.|[Choose|"
            "Find] a sequence [so that|such that] the last {job} [finishes|completes] on the last {machine} "
            "[as early as possible|at the earliest possible time].]";
        f.integrality = "[Each {job} either takes a given position or not.|Positions are yes/no assignments.|"
                        "[Whether|If] a {job} [occupies|takes] a [given|particular] position is a [binary|yes/no] "
                        "[decision|choice].|A {job} cannot be [split|divided] [between|across] positions: [each|every] "
                        "{job}-position assignment is [all or nothing|yes or no].]";
        f.decisions =
            "which {job} takes each sequence position (binary) and the completion time of each position "
            "on each {machine}";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& c_{nm} \\\\\n"
            "\\text{s.t.}\\;& \\sum_{k\\in K} x_{jk} = 1 && \\forall j\\in J \\quad\\text{(job)} \\\\\n"
            "& \\sum_{j\\in J} x_{jk} = 1 && \\forall k\\in K \\quad\\text{(position)} \\\\\n"
            "& c_{ki} - c_{k,i-1} - \\sum_{j} p_{ji}\\,x_{jk} \\ge 0 && \\forall k, i,\\ c_{k0} = 0 "
            "\\quad\\text{(flow)} \\\\\n"
            "& c_{ki} - c_{k-1,i} - \\sum_{j} p_{ji}\\,x_{jk} \\ge 0 && \\forall k \\ge 2, i "
            "\\quad\\text{(machine)} \\\\\n"
            "& c_{nm} \\le D \\quad\\text{(deadline)} \\\\\n"
            "& x_{jk} \\in \\{0,1\\},\\ c_{ki} \\ge 0\n"
            "\\end{aligned}";
        f.latex_symbols = {"$J$: {jobs}; $I = \\{1..m\\}$: {machines} in order; $K = \\{1..n\\}$: positions",
                           "$p_{ji}$: processing time; $D$: deadline",
                           "$x_{jk} = 1$ if $j$ takes position $k$; $c_{ki}$: completion of position $k$ on $i$"};
        f.code = R"(J = data["jobs"]
M = data["machines"]
P = data["positions"]
p = data["time"]
x = {(j, k): @var(f"x_{a + 1}_{b + 1}", 0, 1, B) for a, j in enumerate(J) for b, k in enumerate(P)}
c = {(k, i): @var(f"c_{b + 1}_{e + 1}", 0, None, C) for b, k in enumerate(P) for e, i in enumerate(M)}
@obj(c[P[-1], M[-1]])
for a, j in enumerate(J):
    @add(@sum(x[j, k] for k in P) == 1, f"job_{a + 1}")
for b, k in enumerate(P):
    @add(@sum(x[j, k] for j in J) == 1, f"position_{b + 1}")
for b, k in enumerate(P):
    for e, i in enumerate(M):
        prev = c[k, M[e - 1]] if e > 0 else 0
        @add(c[k, i] - prev - @sum(p[j][i] * x[j, k] for j in J) >= 0, f"flow_{b + 1}_{e + 1}")
        if b > 0:
            @add(c[k, i] - c[P[b - 1], i] - @sum(p[j][i] * x[j, k] for j in J) >= 0, f"machine_{b + 1}_{e + 1}")
@add(c[P[-1], M[-1]] <= data["deadline"], "deadline")
)";
        f.var_docs = {{"x", {"jobs", "positions"}, "{0} in position {1}"},
                      {"c", {"positions", "machines"}, "completion time of the {0} {job} on {1}"}};
        f.con_docs = {{"job", {"jobs"}, "{0} takes one position"},
                      {"position", {"positions"}, "position {0} holds one {job}"},
                      {"flow", {"positions", "machines"}, "position {0} on {1} after the previous {machine}"},
                      {"machine", {"positions", "machines"}, "position {0} on {1} after the previous position"},
                      {"deadline", {}, "deadline"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
