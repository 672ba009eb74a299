/* a transportation model with its data section */
set I;
set J;
param a{i in I} >= 0;
param b{j in J} >= 0;
param d{i in I, j in J};
param f := 90;
param c{i in I, j in J} := f * d[i,j] / 1000;
var x{i in I, j in J} >= 0;
minimize cost: sum{i in I, j in J} c[i,j] * x[i,j];
s.t. supply{i in I}: sum{j in J} x[i,j] <= a[i];
s.t. demand{j in J}: sum{i in I} x[i,j] >= b[j];
solve;
printf "cost %g\n", cost;
data;
set I := seattle san-diego;
set J := new-york chicago topeka;
param a := seattle 350 san-diego 600;
param b := new-york 325 chicago 300 topeka 275;
param d :    new-york  chicago  topeka :=
  seattle      2.5       1.7      1.8
  san-diego    2.5       1.8      1.4 ;
end;
