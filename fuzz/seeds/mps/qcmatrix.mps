NAME qcp
OBJSENSE
    MAX
ROWS
 N obj
 L disc
 L skew
COLUMNS
 x obj 1
 y obj 1
RHS
 rhs disc 1
 rhs skew 10
BOUNDS
 FR bnd x
 FR bnd y
QCMATRIX disc
 x x 1
 y y 1
QCMATRIX   skew
 x x 1
 x y -1
 y x -1
 y y 3
ENDATA
