// The hot loop at the top of a script (tests/record/v8.sh): V8 runs it in
// code compiled for on-stack replacement, not in the script function's own
// code, with topOsr, midOsr and leafOsr inlined into it.
function leafOsr(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i * 1.5) | 0;
  return s;
}
function midOsr(n) {
  return leafOsr(n) + leafOsr(n >> 1);
}
function topOsr(n) {
  return midOsr(n) ^ 1;
}
const end = Date.now() + 1000 * (+process.argv[2] || 1);
let acc = 0;
while (Date.now() < end) acc += topOsr(20000);
console.log(acc > 0 ? "done" : "done0");
