// Workforce shift scheduling (cyclic cover): shifts start at any period and last L consecutive periods; staff
// needed r_t in each period; cost per person per shift c_s by start; integer head counts. MILP.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace shift_scheduling_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int T = g.req.difficulty <= 2 ? 6 : 8, L = 2 + (g.req.difficulty >= 4);
    strings P;
    if (T == 6) P = {"00-04", "04-08", "08-12", "12-16", "16-20", "20-24"};
    else P = {"00-03", "03-06", "06-09", "09-12", "12-15", "15-18", "18-21", "21-24"};
    std::vector<double> req(T), cost(T);
    for (int t = 0; t < T; t++) {
        req[t] = g.r.int_in(2, 6 + 3 * g.req.difficulty);
        cost[t] = 10 * g.r.int_in(8, 14) + ((t == 0 || t == T - 1) ? 30 : 0);  // night shifts cost more
    }
    ojson& data = g.inst.data;
    data["periods"] = list(P);
    data["required"] = map1(P, req);
    data["shift_cost"] = map1(P, cost);
    data["shift_length"] = L;
    model& m = g.inst.m;
    std::vector<int> n(T);
    for (int s = 0; s < T; s++) n[s] = m.add_var(nm("n", s), var_type::integer, 0, inf, cost[s]);
    for (int t = 0; t < T; t++) {
        std::vector<term> tm;
        for (int s = 0; s < T; s++)
            if ((t - s + T) % T < L) tm.push_back({n[s], 1});
        m.add_con(nm("cover", t), tm, row_sense::ge, req[t]);
    }
}

}  // namespace shift_scheduling_impl

TREX_FAMILY(shift_scheduling) {
    static const family f = [] {
        family f;
        f.name = "shift_scheduling";
        f.title = "Workforce shift scheduling";
        f.milp = true;
        f.generate = shift_scheduling_impl::generate;
        f.scenarios = {
            {"healthcare", {{"org", "a hospital emergency department"}, {"staff", "nurses"}, {"person", "nurse"}}},
            {"retail", {{"org", "a 24-hour supermarket"}, {"staff", "cashiers"}, {"person", "cashier"}}},
            {"logistics", {{"org", "a distribution center"}, {"staff", "warehouse operators"},
                           {"person", "operator"}}},
            {"energy", {{"org", "a power-plant control room"}, {"staff", "operators"}, {"person", "operator"}}},
            {"generic", {{"org", "a call center"}, {"staff", "agents"}, {"person", "agent"}}},
        };
        f.intro =
            "[{Org} operates around the clock; the day is divided into {n_periods} periods.|{Org} staffs {staff} over "
            "a day split into {n_periods} periods that repeat every day.|[Working|Open] around the clock, {org} "
            "[divides|splits] its day into {n_periods} periods [and must|and has to] [plan|schedule] how many {staff} "
            "[start work|begin a shift] in each.|[The day at|At] {org}[, which never closes,|, which runs day and "
            "night,] [is divided|is split] into {n_periods} periods, [and the same schedule repeats|with the same "
            "schedule repeating] every day.]";
        f.params = {
            {"periods", {}, "[periods of the day|periods in the day|daily periods]", "", true},
            {"required", {"periods"},
             "[minimum number of {staff} on duty|fewest {staff} allowed on duty|minimum {staff} head count on "
             "duty]",
             ""},
            {"shift_cost", {"periods"},
             "[cost of one {person} whose shift starts in the period|cost per {person} starting a shift in the "
             "period|cost of each {person} whose shift begins in the period]",
             "$"},
            {"shift_length", {},
             "[shift length in consecutive periods (wrapping past midnight)|length of a shift in consecutive "
             "periods (continuing past midnight)|number of consecutive periods a shift lasts (wrapping past "
             "midnight)]",
             ""},
        };
        f.constraints = {
            "[A shift can start at the beginning of any period and covers that many consecutive periods; in every "
            "period the {staff} on duty must meet the requirement.|In each period, the number of {staff} whose shift "
            "covers it must be at least the requirement.|[Shifts|Every shift] [may|can] [begin|start] at the start of "
            "any period and [last|run for] the shift length in consecutive periods[, wrapping past midnight|, "
            "continuing into the next day if needed]; [in each period|for every period], the {staff} on duty "
            "[must|have to] [number at least|be no fewer than] the minimum.|[No|Not a single] period [may|can] have "
            "fewer {staff} on duty than [its minimum|required], counting [each|every] {person} as on duty in "
            "[each|every one] of the consecutive periods of their shift, [wrapping|continuing] past "
            "midnight.|[If|When] the {staff} [whose shifts|with a shift that] [cover|include] a period are counted, "
            "[the count|their number] [must|has to] [reach|be at least] that period's minimum.]"};
        f.objective =
            "[Minimize the total daily staffing cost.|Find the cheapest staffing plan.|The [goal|aim|objective] is to "
            "[reach|achieve] the [lowest|smallest|least] [total|overall|combined] daily cost of the shifts "
            "[started|scheduled].|[Decide|Choose|Determine] how many {staff} start in each period so that the "
            "[total|overall|combined] daily cost is [as low as possible|minimized].|Which [staffing plan|schedule] "
            "[meets|covers] every period's requirement at the [lowest|least|smallest] [total|overall] daily cost?]";
        f.integrality =
            "[The number of {staff} per shift must be a whole number.|Only whole {staff} can be scheduled.|[Head "
            "counts|The numbers of {staff}] [starting|beginning] [each|in each] period [must|have to] be [whole "
            "numbers|integers].|[No|Not a] fraction of a {person} [may|can] be [scheduled|assigned to a "
            "shift].|[Each|Every] shift [is staffed|gets staffed] by a whole number of {staff}.]";
        f.decisions = "how many {staff} start a shift in each period (integer)";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{s\\in T} c_s\\,n_s \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{s:\\ (t - s) \\bmod |T| < L} n_s \\ge r_t && \\forall t\\in T "
                  "\\quad\\text{(cover)} \\\\\n"
                  "& n_s \\in \\mathbb{Z}_{\\ge 0}\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$T$: periods (cyclic); $L$: shift length", "$r_t$: requirement; $c_s$: cost per "
                           "{person} starting in $s$", "$n_s$: {staff} starting in period $s$"};
        f.code = R"(P = data["periods"]
T = len(P)
L = data["shift_length"]
n = {s: @var(f"n_{a + 1}", 0, None, I) for a, s in enumerate(P)}
@obj(@sum(data["shift_cost"][s] * n[s] for s in P))
for t in range(T):
    @add(@sum(n[P[s]] for s in range(T) if (t - s) % T < L) >= data["required"][P[t]], f"cover_{t + 1}")
)";
        f.var_docs = {{"n", {"periods"}, "{staff} starting at {0}"}};
        f.con_docs = {{"cover", {"periods"}, "staffing requirement in {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
