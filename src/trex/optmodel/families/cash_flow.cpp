// Short-term cash management: periods t with net operating cash flows c_t (some
// negative), an opening cash balance, a credit line (borrow b_t up to L at rate
// r_b per period, repaid with interest the next period) and one-period
// investments i_t earning r_i; the cash balance s_t must stay at or above a
// minimum. Maximize the wealth at the end of the horizon (final cash plus
// maturing investments minus the credit to repay). LP. Infeasible design: an
// early outflow so large that the minimum balance cannot be kept even with the
// full credit line.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace cash_flow_impl {  // named, not anonymous: the families build as one
                            // unity translation unit

// A rate with `decimals` places whose 1 + rate prints without binary noise (the
// model uses 1 + rate).
double clean_rate(rng& r, double lo, double hi) {
    for (;;) {
        const double rate = r.real_in(lo, hi, 3);
        if (fmt::format("{}", 1.0 + rate).size() <= 5 && fmt::format("{}", rate).size() <= 5) return rate;
    }
}

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int T = std::vector<int>{3, 4, 6, 9, 12}[(size_t)d - 1];
    const strings P = g.names("period", T);
    const double rb = clean_rate(g.r, 0.01, 0.03), ri = clean_rate(g.r, 0.002, 0.009);
    const double minc = 10 * g.r.int_in(2, 6), open = 10 * g.r.int_in(4, 12);
    double limit = 10 * g.r.int_in(6, 15);
    std::vector<double> flow(T);
    for (int t = 0; t < T; t++) flow[t] = g.r.chance(0.4) ? -g.r.int_in(20, 120) : g.r.int_in(20, 160);
    flow[(size_t)g.r.int_in(0, T - 1)] = -g.r.int_in(80, 160);  // at least one period that needs credit
    if (g.req.want == design::infeasible) {
        flow[0] = minc - open - limit - 10 * g.r.int_in(1, 5);
    } else {
        // the greedy plan (invest every surplus, borrow only the shortfall) is
        // optimal: size the line to cover it
        double s = open, b = 0, i = 0, most = 0;
        for (int t = 0; t < T; t++) {
            const double avail = s + flow[t] - (1 + rb) * b + (1 + ri) * i;
            b = std::max(0.0, minc - avail);
            i = std::max(0.0, avail - minc);
            s = minc;
            most = std::max(most, b);
        }
        if (most > limit) limit = 10 * std::ceil(most / 10) + 10 * g.r.int_in(0, 2);
    }
    ojson& data = g.inst.data;
    data["periods"] = list(P);
    data["net_flow"] = map1(P, flow);
    data["opening_cash"] = num(open);
    data["min_cash"] = num(minc);
    data["credit_limit"] = num(limit);
    data["credit_rate"] = num(rb);
    data["invest_rate"] = num(ri);
    model& m = g.inst.m;
    m.sense = obj_sense::maximize;
    std::vector<int> s(T), b(T), iv(T);
    for (int t = 0; t < T; t++) {
        const bool last = t == T - 1;
        s[t] = m.add_var(nm("s", t), var_type::continuous, minc, inf, last ? 1 : 0);
        b[t] = m.add_var(nm("b", t), var_type::continuous, 0, limit, last ? -(1 + rb) : 0);
        iv[t] = m.add_var(nm("i", t), var_type::continuous, 0, inf, last ? 1 + ri : 0);
    }
    for (int t = 0; t < T; t++) {
        std::vector<term> tm = {{s[t], 1}, {b[t], -1}, {iv[t], 1}};
        if (t > 0) {
            tm.push_back({s[t - 1], -1});
            tm.push_back({b[t - 1], 1 + rb});
            tm.push_back({iv[t - 1], -(1 + ri)});
        }
        m.add_con(nm("cash", t), tm, row_sense::eq, t == 0 ? open + flow[t] : flow[t]);
    }
}

}  // namespace cash_flow_impl

TREX_FAMILY(cash_flow) {
    static const family f = [] {
        family f;
        f.name = "cash_flow";
        f.title = "Short-term cash-flow financing";
        f.can_infeasible = true;
        f.generate = cash_flow_impl::generate;
        f.scenarios = {
            {"finance",
             {{"org", "the treasurer of a machine-tool maker"},
              {"money", "thousand dollars"},
              {"invest", "money-market deposits"},
              {"period_pool", "periods"}}},
            {"retail",
             {{"org", "the finance manager of a toy retailer"},
              {"money", "thousand dollars"},
              {"invest", "short-term treasury bills"},
              {"period_pool", "periods"}}},
            {"healthcare",
             {{"org", "the controller of a private clinic"},
              {"money", "thousand euros"},
              {"invest", "overnight deposits"},
              {"period_pool", "weeks"}}},
            {"education",
             {{"org", "the bursar of a college"},
              {"money", "thousand pounds"},
              {"invest", "short-term deposits"},
              {"period_pool", "periods"}}},
        };
        f.intro =
            "[{Org} is planning the cash position for the next {n_periods} periods.|{Org} must cover the cash needs "
            "of the next {n_periods} periods using a credit line and short-term investments.|[Over|For] the "
            "[next|coming] {n_periods} periods, {org} [has to|must|needs to] [manage|plan] the cash position, "
            "[using|with] a credit line and {invest}.|The cash needs of the [next|coming] {n_periods} periods "
            "[have to|must] be [covered|met] by {org}, [who|which] [can draw on|has access to] a credit line and "
            "{invest}.]";
        f.params = {
            {"periods", {}, "periods", "", true},
            {"net_flow", {"periods"}, "[net operating cash flow (negative: an outflow)|net cash flow from operations "
             "(negative: an outflow)|operating net cash flow (a negative value is an outflow)]", "{money}"},
            {"opening_cash", {}, "[cash on hand before the first period|opening cash balance before the first "
             "period|cash available before the first period]", "{money}"},
            {"min_cash", {}, "[minimum cash balance to keep at the end of every period|lowest cash balance allowed "
             "at the end of any period|required minimum cash balance at the end of each period]", "{money}"},
            {"credit_limit", {}, "[most that can be drawn on the credit line in a period|credit limit per "
             "period|largest draw allowed on the credit line in one period]", "{money}"},
            {"credit_rate",
             {},
             "[interest rate on the credit line per period, as a fraction (a draw is repaid with interest in the "
             "next period)|per-period interest rate of the credit line, as a fraction (each draw is repaid with "
             "interest in the next period)|interest charged per period on credit, as a fraction (a draw is paid "
             "back with interest one period later)]",
             ""},
            {"invest_rate",
             {},
             "[return of {invest} per period, as a fraction (money invested comes back with the return in the "
             "next period)|per-period return on {invest}, as a fraction (the money invested and its return come "
             "back in the next period)|return earned per period by {invest}, as a fraction (money invested is "
             "paid back with the return one period later)]",
             ""},
        };
        f.constraints = {
            "[The cash at the end of a period is the previous cash (the opening cash for the first period) plus "
            "the net flow, plus new credit and maturing {invest} with their return, minus the repayment of last "
            "period's credit with interest and minus new {invest}.|Cash balances carry over: each period adds its "
            "net flow, the new draw on the credit line and the {invest} maturing with their return, and subtracts "
            "the repayment of the previous draw with interest and the money newly invested.|[A period's closing "
            "cash|The cash left at the end of a period] [equals|is] the [previous|preceding] period's closing cash "
            "(the opening cash [for|in] the first period), [plus|with] the period's net flow, [plus|and] [the new "
            "credit drawn|this period's draw on the credit line], [plus|and] the {invest} [coming due|maturing] "
            "with their return, [minus|less] [last period's draw repaid with interest|the repayment, with "
            "interest, of the previous draw] and [minus|less] the money [newly|freshly] put into {invest}.|[Starting "
            "from|Beginning with] the opening cash, [each|every] period's closing balance [is obtained|follows] by "
            "adding the net flow, the [new|fresh] credit draw and the [maturing|returning] {invest} with "
            "their return, then subtracting the [previous draw|last period's draw] with [its] interest and the "
            "amount newly invested.]",
            "[The cash balance may never fall below the minimum.|At the end of every period the cash on hand must "
            "be at least the required minimum.|No period may [end|close] with [less cash than|a balance below] the "
            "[required|stated] minimum.|The [closing|end-of-period] [cash|balance] [has to|must] [stay|remain] [at "
            "or above|no lower than] the minimum [in every period|each period].]",
            "[Each draw on the credit line is limited to the credit limit.|A period's draw may not exceed the "
            "credit limit.|In [any|each] period, [at most|no more than] the credit limit [can|may] be "
            "drawn.|The credit [drawn|taken] [per period|in a period] [is capped at|may not go above] the credit "
            "limit.|[Borrowing|Drawing] more than the credit limit in [one|a single] period is [not "
            "allowed|forbidden].]"};
        f.objective =
            "[Maximize the wealth at the end of the last period: final cash plus the {invest} with their return, "
            "minus the last draw on the credit line with its interest.|Find the plan that leaves the most money at "
            "the end of the horizon, counting the last period's {invest} with their return and the last credit "
            "draw with its interest.|The [goal|aim] is the [largest|highest] [final wealth|wealth at the end of "
            "the horizon]: the cash at the end of the last period, [plus|and] the last period's {invest} [with "
            "their return|including their return], [minus|less] the last [draw|credit drawn] [with|including] its "
            "interest.|[Plan|Choose] the [borrowing|credit draws] and [investments|{invest}] so that [the final "
            "cash|the closing cash of the last period], plus the last period's {invest} with their return and "
            "minus the last period's draw with its interest, is as [large|high] as possible.]";
        f.decisions =
            "the cash balance, the draw on the credit line and the "
            "amount invested in each period";
        f.latex =
            "\\begin{aligned}\n"
            "\\max\\;& s_{|T|} + (1 + r_i)\\,i_{|T|} - (1 + r_b)\\,b_{|T|} \\\\\n"
            "\\text{s.t.}\\;& s_t - b_t + i_t - s_{t-1} + (1 + r_b)\\,b_{t-1} - (1 "
            "+ r_i)\\,i_{t-1} = c_t && "
            "\\forall t\\in T,\\ s_0 = C_0,\\ b_0 = i_0 = 0 \\quad\\text{(cash)} "
            "\\\\\n"
            "& s_t \\ge m,\\ 0 \\le b_t \\le L,\\ i_t \\ge 0 && \\forall t\\in T\n"
            "\\end{aligned}";
        f.latex_symbols = {
            "$T = \\{1, \\dots, |T|\\}$: periods; $c_t$: net cash flow; $C_0$: "
            "opening cash",
            "$m$: minimum balance; $L$: credit limit; $r_b$, $r_i$: credit and "
            "investment rates",
            "$s_t$: cash balance; $b_t$: credit drawn; $i_t$: amount invested"};
        f.code = R"(T = data["periods"]
rb = data["credit_rate"]
ri = data["invest_rate"]
s = {t: @var(f"s_{a + 1}", data["min_cash"], None, C) for a, t in enumerate(T)}
b = {t: @var(f"b_{a + 1}", 0, data["credit_limit"], C) for a, t in enumerate(T)}
i = {t: @var(f"i_{a + 1}", 0, None, C) for a, t in enumerate(T)}
last = T[-1]
@obj(s[last] - (1 + rb) * b[last] + (1 + ri) * i[last])
for a, t in enumerate(T):
    if a == 0:
        @add(s[t] - b[t] + i[t] == data["opening_cash"] + data["net_flow"][t], f"cash_{a + 1}")
    else:
        p = T[a - 1]
        @add(s[t] - b[t] + i[t] - s[p] + (1 + rb) * b[p] - (1 + ri) * i[p] == data["net_flow"][t], f"cash_{a + 1}")
)";
        f.var_docs = {{"s", {"periods"}, "cash balance at the end of {0}"},
                      {"b", {"periods"}, "credit drawn in {0}"},
                      {"i", {"periods"}, "amount invested in {0}"}};
        f.con_docs = {{"cash", {"periods"}, "cash balance of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
