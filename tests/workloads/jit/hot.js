function leafHot(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i * 1.5) | 0; return s; }
function midHot(n) { return leafHot(n) + leafHot(n >> 1); }
function topHot(n) { return midHot(n) ^ 1; }
const end = Date.now() + (+process.argv[2] || 2000);
let acc = 0;
while (Date.now() < end) acc += topHot(20000);
console.log(acc > 0 ? "done" : "done0");
