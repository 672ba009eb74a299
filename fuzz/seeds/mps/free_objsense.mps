NAME          seed_free
OBJSENSE
    MAX
ROWS
 N  profit
 L  labour
 G  wood
 E  balance
COLUMNS
    MARKER    'MARKER'    'INTORG'
    x    profit    3    labour    1
    x    wood    3
    MARKER    'MARKER'    'INTEND'
    y    profit    5    labour    2
    y    balance    1
    w    balance    -1
RHS
    RHS    labour    40    wood    6
    RHS    profit    -2
RANGES
    RNG    wood    10
BOUNDS
 UP BND w 20
 UP BND y 30
 MI BND y
 BV BND x
ENDATA
