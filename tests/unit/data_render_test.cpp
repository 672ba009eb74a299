// Rendering: no objective value or solution leaks into questions; DPS questions for code tasks carry no numbers
// inline; every representation and category renders for every family and re-executes.
#include <gtest/gtest.h>

#include <functional>
#include <regex>

#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"
#include "trex/optmodel/render/render.hpp"

using namespace trex::optmodel;

TEST(DataRender, NoObjectiveLeaksIntoQuestions) {
    int checked = 0;
    for (const family* f : all_families()) {
        for (int seed = 0; seed < 4; seed++) {
            gen_request rq;
            rq.seed = 500 + seed;
            rq.difficulty = 1 + seed % 3;
            const instance in = generate(*f, rq);
            const verification v = verify(in.m);
            if (v.status != solve_status::optimal) continue;
            const std::string obj = format_value(v.objective, 10);
            // a value that is itself part of the data cannot leak (e.g. one module bought at its listed price)
            bool in_data = false;
            std::function<void(const ojson&)> scan = [&](const ojson& j) {
                if (j.is_number() && format_value(j.get<double>(), 10) == obj) in_data = true;
                if (j.is_structured())
                    for (const auto& x : j) scan(x);
            };
            scan(in.data);
            if (in_data) continue;
            for (representation rep : {representation::dp, representation::dt, representation::dps}) {
                for (task t : {task::formulation, task::code, task::lp_file, task::benchmark}) {
                    const std::string q = render_question(*f, in, rep, t, dialect::pulp, 9);
                    EXPECT_EQ(q.find("ptimal objective value is"), std::string::npos) << f->name;
                    EXPECT_EQ(q.find('{'), q.find("```json") == std::string::npos ? std::string::npos : q.find('{'))
                        << f->name << ": unexpanded template in\n" << q;
                    // the objective as a whole number token (long enough not to be a data value by accident)
                    if (obj.size() >= 4) {
                        const std::regex tok("(^|[^0-9.])" + std::regex_replace(obj, std::regex("\\."), "\\.") +
                                             "([^0-9]|$)");
                        EXPECT_FALSE(std::regex_search(q, tok)) << f->name << " leaks " << obj << " in\n" << q;
                    }
                    checked++;
                }
            }
        }
    }
    EXPECT_GT(checked, 500);
}

TEST(DataRender, DpsCodeQuestionsHaveNoInlineNumbers) {
    for (const family* f : all_families()) {
        gen_request rq;
        rq.seed = 42;
        const instance in = generate(*f, rq);
        const std::string q = render_question(*f, in, representation::dps, task::code, dialect::pulp, 1);
        EXPECT_EQ(q.find("```json"), std::string::npos) << f->name;
        EXPECT_NE(q.find("data.json"), std::string::npos) << f->name;
        const std::string qf = render_question(*f, in, representation::dps, task::formulation, dialect::pulp, 1);
        EXPECT_NE(qf.find("```json"), std::string::npos) << f->name;  // formulation needs the numbers
    }
}

TEST(DataRender, EveryFamilyRepresentationAndCategoryReexecutes) {
    const std::string py_path = find_python_with_pulp();
    std::unique_ptr<python_runner> py;
    if (!py_path.empty()) py = std::make_unique<python_runner>(py_path);
    for (const family* f : all_families()) {
        gen_request rq;
        rq.seed = 8;
        const instance in = generate(*f, rq);
        const verification v = verify(in.m);
        int k = 0;
        for (representation rep : {representation::dp, representation::dt, representation::dps}) {
            for (task t : {task::formulation, task::formulation_code, task::code, task::lp_file}) {
                const bool code = t == task::code || t == task::formulation_code;
                if (code && !py) continue;
                if (code && (k++ % 2)) continue;  // half of the code cases keep the test quick
                const std::string a = render_answer(*f, in, rep, t, dialect::pulp, v, 4);
                const reexec_result r = reexec_answer(a, t, rep, in.data, v, py.get(), "/tmp/trex_render_reexec");
                EXPECT_TRUE(r.ok) << f->name << " " << representation_name(rep) << " " << task_name(t) << ": "
                                  << r.detail;
            }
        }
    }
}
