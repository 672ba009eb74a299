# 0-1 knapsack with a conditional expression, an integer variable and a ranged constraint
param n, integer, > 0, default 4;
set N := 1..n;
param w{N}, default 1;
param v{k in N} := if k mod 2 = 0 then 2 * k else k + 1;
param cap := 5;
var take{N}, binary;
var extra integer, >= 0, <= 3;
maximize value: sum{k in N} v[k] * take[k] + extra;
s.t. weight: sum{k in N} w[k] * take[k] + extra <= cap;
s.t. band: 1 <= sum{k in N: k > 1} take[k] <= n - 1;
check: cap > 0;
end;
