// Deterministic random draws and text templates shared by the generators and the renderers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trex::optmodel {

// A random stream: value k depends only on (seed, stream, k), never on thread count or timing.
class rng {
   public:
    rng(uint64_t seed, uint64_t stream) : seed_(seed), stream_(stream) {}
    double uniform();                                    // (0, 1)
    int int_in(int lo, int hi);                          // uniform integer in [lo, hi]
    double real_in(double lo, double hi, int decimals);  // uniform, rounded to `decimals` places
    bool chance(double p);
    template <typename T>
    const T& pick(const std::vector<T>& v) {
        return v[(size_t)int_in(0, (int)v.size() - 1)];
    }
    // A random permutation of 0..n-1.
    std::vector<int> permutation(int n);

   private:
    uint64_t seed_, stream_, index_ = 0;
};

using vocab = std::map<std::string, std::string>;

// Expands a template:
//   {key}    -> vocab[key]; {Key} (first letter upper case, key absent as spelled) -> vocab[key] capitalised
//   [a|b|c]  -> one alternative, chosen by r (alternatives may contain {keys} and nested [..|..])
// Unknown keys are left as "{key}" so tests can detect them. The result is tidy_words'.
std::string expand(const std::string& tmpl, const vocab& v, rng& r);

// English agreement that template joins break: the article before a word ("a analyzer" -> "an analyzer", "an
// pallet" -> "a pallet"; "unit", "one", "hour" and their kind read as they sound) and the unit after "per" ("$ per
// liters" -> "$ per liter", "per batches" -> "per batch"; "per thousand barrels" stays).
std::string tidy_words(const std::string& text);

std::string capitalise(std::string s);
// "a, b and c"
std::string join_and(const std::vector<std::string>& items, const std::string& conj = "and");

// Named pools of entity names ("cities", "products", ...): the first n names of a seeded shuffle of the pool
// (calendar pools "periods", "weeks", "slots" in order), numbered ("Site 21") past its end. Throws for an unknown pool.
std::vector<std::string> pool_names(const std::string& pool, int n, rng& r);

}  // namespace trex::optmodel
