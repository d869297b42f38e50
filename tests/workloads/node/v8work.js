'use strict';
// A Node.js program of known shape for the V8 frames test (tests/record/v8.sh):
// each function's callers are fixed (v8check.py holds the call graph), so
// every JavaScript frame of a sample can be checked by function and line.
// Phases: a hot chain (outer -> middle -> leaf, too large for TurboFan to
// inline: each keeps a frame of its own), recursion (fib, which TurboFan
// inlines into itself a few levels deep), a chain TurboFan inlines
// (driver -> chainA -> chainB -> chainC), an allocation-heavy loop (alloc),
// and a function deoptimized and optimized again mid-run (poly: numbers,
// then strings, then numbers).
function leaf(n) {
  let s = 0;
  for (let i = 0; i < n; i++) {
    s += Math.sqrt(i) * 1.0001; s ^= i & 7; s += (i % 3) ? 1 : 2; s -= (i % 5) ? 0 : 1;
    s += Math.sqrt(i) * 1.0002; s ^= i & 5; s += (i % 7) ? 1 : 2; s -= (i % 11) ? 0 : 1;
    s += Math.sqrt(i) * 1.0003; s ^= i & 3; s += (i % 13) ? 1 : 2; s -= (i % 17) ? 0 : 1;
    s += Math.sqrt(i) * 1.0004; s ^= i & 9; s += (i % 19) ? 1 : 2; s -= (i % 23) ? 0 : 1;
    s += Math.sqrt(i) * 1.0005; s ^= i & 6; s += (i % 29) ? 1 : 2; s -= (i % 31) ? 0 : 1;
    s += Math.sqrt(i) * 1.0006; s ^= i & 4; s += (i % 37) ? 1 : 2; s -= (i % 41) ? 0 : 1;
    s += Math.sqrt(i) * 1.0007; s ^= i & 2; s += (i % 43) ? 1 : 2; s -= (i % 47) ? 0 : 1;
    s += Math.sqrt(i) * 1.0008; s ^= i & 1; s += (i % 53) ? 1 : 2; s -= (i % 59) ? 0 : 1;
  }
  return s;
}
function middle(n) {
  let t = 0;
  for (let k = 0; k < 3; k++) {
    t += leaf(n + k); t ^= k & 7; t += (k % 3) ? 1 : 2; t -= (k % 5) ? 0 : 1;
    t += (k % 7) ? 3 : 4; t ^= k & 5; t += (k % 11) ? 1 : 2; t -= (k % 13) ? 0 : 1;
    t += (k % 17) ? 3 : 4; t ^= k & 3; t += (k % 19) ? 1 : 2; t -= (k % 23) ? 0 : 1;
    t += (k % 29) ? 3 : 4; t ^= k & 9; t += (k % 31) ? 1 : 2; t -= (k % 37) ? 0 : 1;
    t += (k % 41) ? 3 : 4; t ^= k & 6; t += (k % 43) ? 1 : 2; t -= (k % 47) ? 0 : 1;
    t += (k % 53) ? 3 : 4; t ^= k & 4; t += (k % 59) ? 1 : 2; t -= (k % 61) ? 0 : 1;
    t += (k % 67) ? 3 : 4; t ^= k & 2; t += (k % 71) ? 1 : 2; t -= (k % 73) ? 0 : 1;
  }
  return t;
}
function outer(n) {
  let u = 0;
  for (let k = 0; k < 2; k++) {
    u += middle(n - k); u ^= k & 7; u += (k % 3) ? 1 : 2; u -= (k % 5) ? 0 : 1;
    u += (k % 7) ? 3 : 4; u ^= k & 5; u += (k % 11) ? 1 : 2; u -= (k % 13) ? 0 : 1;
    u += (k % 17) ? 3 : 4; u ^= k & 3; u += (k % 19) ? 1 : 2; u -= (k % 23) ? 0 : 1;
    u += (k % 29) ? 3 : 4; u ^= k & 9; u += (k % 31) ? 1 : 2; u -= (k % 37) ? 0 : 1;
    u += (k % 41) ? 3 : 4; u ^= k & 6; u += (k % 43) ? 1 : 2; u -= (k % 47) ? 0 : 1;
    u += (k % 53) ? 3 : 4; u ^= k & 4; u += (k % 59) ? 1 : 2; u -= (k % 61) ? 0 : 1;
    u += (k % 67) ? 3 : 4; u ^= k & 2; u += (k % 71) ? 1 : 2; u -= (k % 73) ? 0 : 1;
  }
  return u;
}
function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
function alloc(n) {
  const a = [];
  for (let i = 0; i < n; i++)
    a.push({ i, s: 'x' + i, v: [i, i + 1, i + 2] });
  return a.length;
}
function poly(x) {
  let r = x, c = 0;
  for (let i = 0; i < 20; i++) {
    r = r + x; c += (i % 3) ? 1 : 2; c ^= i & 1; c -= (i % 5) ? 0 : 1;
    r = r + x; c += (i % 4) ? 1 : 2; c ^= i & 2; c -= (i % 6) ? 0 : 1;
    r = r + x; c += (i % 5) ? 1 : 2; c ^= i & 3; c -= (i % 7) ? 0 : 1;
    r = r + x; c += (i % 6) ? 1 : 2; c ^= i & 4; c -= (i % 8) ? 0 : 1;
    r = r + x; c += (i % 7) ? 1 : 2; c ^= i & 5; c -= (i % 9) ? 0 : 1;
    r = r + x; c += (i % 8) ? 1 : 2; c ^= i & 6; c -= (i % 10) ? 0 : 1;
    r = r + x; c += (i % 9) ? 1 : 2; c ^= i & 7; c -= (i % 11) ? 0 : 1;
    r = r + x; c += (i % 10) ? 1 : 2; c ^= i & 8; c -= (i % 12) ? 0 : 1;
    r = r + x; c += (i % 11) ? 1 : 2; c ^= i & 9; c -= (i % 13) ? 0 : 1;
    r = r + x; c += (i % 12) ? 1 : 2; c ^= i & 10; c -= (i % 14) ? 0 : 1;
    r = r + x; c += (i % 13) ? 1 : 2; c ^= i & 11; c -= (i % 15) ? 0 : 1;
    r = r + x; c += (i % 14) ? 1 : 2; c ^= i & 12; c -= (i % 16) ? 0 : 1;
  }
  return (typeof r === 'string' ? r.length : r) + c;
}
function phaseNumbers(ms) {
  let t = 0;
  for (const end = Date.now() + ms, c = process.cpuUsage(); Date.now() < end || process.cpuUsage(c).user < ms * 1e3;)
    t += poly(3);
  return t;
}
function phaseStrings(ms) {
  let t = 0;
  for (const end = Date.now() + ms, c = process.cpuUsage(); Date.now() < end || process.cpuUsage(c).user < ms * 1e3;)
    t += poly('ab');
  return t;
}
// A chain TurboFan inlines: chainA -> chainB -> chainC are small, and run
// inside driver's optimized code (driver is too large to be inlined into
// main, and called often enough to be optimized as a whole, not on stack):
// their frames are named from driver's code (SPEC.md 6.17, inlined frames).
function chainC(x) {
  let s = 0;
  for (let i = 0; i < 50; i++) s += Math.sqrt(x + i);
  return s;
}
function chainB(x) {
  return chainC(x) + 1;
}
function chainA(x) {
  return chainB(x) * 2;
}
function driver(n) {
  let t = 0;
  for (let i = 0; i < n; i++) {
    t += chainA(i + 0); t ^= i & 1; t += (i % 3) ? 1 : 2; t -= (i % 5) ? 0 : 1;
    t += chainA(i + 1); t ^= i & 2; t += (i % 4) ? 1 : 2; t -= (i % 6) ? 0 : 1;
    t += chainA(i + 2); t ^= i & 3; t += (i % 5) ? 1 : 2; t -= (i % 7) ? 0 : 1;
    t += chainA(i + 3); t ^= i & 4; t += (i % 6) ? 1 : 2; t -= (i % 8) ? 0 : 1;
    t += chainA(i + 4); t ^= i & 5; t += (i % 7) ? 1 : 2; t -= (i % 9) ? 0 : 1;
    t += chainA(i + 5); t ^= i & 6; t += (i % 8) ? 1 : 2; t -= (i % 10) ? 0 : 1;
    t += chainA(i + 6); t ^= i & 7; t += (i % 9) ? 1 : 2; t -= (i % 11) ? 0 : 1;
    t += chainA(i + 7); t ^= i & 8; t += (i % 10) ? 1 : 2; t -= (i % 12) ? 0 : 1;
    t += chainA(i + 8); t ^= i & 9; t += (i % 11) ? 1 : 2; t -= (i % 13) ? 0 : 1;
    t += chainA(i + 9); t ^= i & 10; t += (i % 12) ? 1 : 2; t -= (i % 14) ? 0 : 1;
  }
  return t;
}
// Each phase lasts its time of the wall and, on a busy machine where the
// wall runs faster than the process, until the process has had that much CPU
// time too (process.cpuUsage, read only once the wall time is up: called in
// every turn, it made main's optimized code and its lines differ, 91 % right
// by line against 100 %).  The sampler counts CPU time, so a phase gets as
// many samples on a loaded machine as on an idle one.
function main(scale) {
  let t = 0;
  for (const end = Date.now() + 1500 * scale, c = process.cpuUsage(); Date.now() < end || process.cpuUsage(c).user < 1500e3 * scale;)
    t += outer(2000);
  for (const end = Date.now() + 700 * scale, c = process.cpuUsage(); Date.now() < end || process.cpuUsage(c).user < 700e3 * scale;)
    t += fib(22);
  for (const end = Date.now() + 700 * scale, c = process.cpuUsage(); Date.now() < end || process.cpuUsage(c).user < 700e3 * scale;)
    t += driver(3);
  for (const end = Date.now() + 700 * scale, c = process.cpuUsage(); Date.now() < end || process.cpuUsage(c).user < 700e3 * scale;)
    t += alloc(5000);
  t += phaseNumbers(400 * scale);
  t += phaseStrings(400 * scale);
  t += phaseNumbers(400 * scale);
  return t;
}
console.log(main(Number(process.argv[2] || 1)) !== 0);
