param cap := cap;
var x;
s.t. c: x <= cap;
end;
