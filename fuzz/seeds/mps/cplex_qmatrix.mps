NAME          problem
ROWS
 N  obj
 G  c1
COLUMNS
    a         obj                  1   c1                   1
    b         obj                  1   c1                   1
RHS
    rhs       c1                  10
QMATRIX
    a         a                    1
    a         b                    2
    b         a                    2
    b         b                    7
ENDATA
