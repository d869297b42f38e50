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
// it runs for ARG s of the process's CPU time, not of wall time: as many
// samples on a busy machine
let acc = 0;
for (const c = process.cpuUsage(); process.cpuUsage(c).user < 1e6 * (+process.argv[2] || 1);)
  acc += topOsr(20000);
console.log(acc > 0 ? "done" : "done0");
