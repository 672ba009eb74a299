NAME qo1
ROWS
 N obj
 G c1
COLUMNS
 x1 c1 1.0
 x2 obj -1.0
 x2 c1 1.0
 x3 c1 1.0
RHS
 rhs c1 1.0
QSECTION obj
 x1 x1 2.0
 x1 x3 -1.0
 x2 x2 0.2
 x3 x3 2.0
ENDATA
