function leafHot(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i * 1.5) | 0; return s; }
function midHot(n) { return leafHot(n) + leafHot(n >> 1); }
function topHot(n) { return midHot(n) ^ 1; }
// runs ARG ms of the process's CPU time, not of wall time: a busy machine
// makes the run longer, not poorer in samples (tests/record/jit.sh)
let acc = 0;
for (const c = process.cpuUsage(); process.cpuUsage(c).user < 1000 * (+process.argv[2] || 2000);)
  acc += topHot(20000);
console.log(acc > 0 ? "done" : "done0");
