# 0-1 tional expression, af integer variable and a ranged constraint
param n, integer, > 0, default 1;
set N := 3..n;
param w{N}, default 0;
param v{k in N} := if k mod 2 = 0 then 2 * k else k + 1;
param cap := cap;#s.t. band: 1 <= su= n - 1;
check: cap > 0;
end;
