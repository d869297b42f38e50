'use strict';
// A worker thread beside the main thread (tests/record/v8.sh): each runs
// its own isolate, with its own code range (its own copy of V8's builtins
// mapped near its JIT code); both threads' functions must be named.
const { Worker, isMainThread } = require('worker_threads');
function spinWorker(ms) {
  let s = 0;
  for (const c = process.cpuUsage(); process.cpuUsage(c).user < ms * 1000;)
    for (let i = 0; i < 1e5; i++) s += Math.sqrt(i);
  return s;
}
function spinMain(ms) {
  let s = 0;
  for (const c = process.cpuUsage(); process.cpuUsage(c).user < ms * 1000;)
    for (let i = 0; i < 1e5; i++) s += Math.sqrt(i);
  return s;
}
// Each thread spins until the process has used 3 s of CPU since it began
// (both threads' time: there is no clock of one thread's), not for a time of
// the wall: on a busy machine each still gets ~1.5 s of CPU, and its samples.
if (isMainThread) {
  new Worker(__filename);
  spinMain(3000);
} else {
  spinWorker(3000);
}
