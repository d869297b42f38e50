'use strict';
// A worker thread beside the main thread (tests/record/v8.sh): each runs
// its own isolate, with its own code range (its own copy of V8's builtins
// mapped near its JIT code); both threads' functions must be named.
const { Worker, isMainThread } = require('worker_threads');
function spinWorker(ms) {
  let s = 0;
  for (const end = Date.now() + ms; Date.now() < end;)
    for (let i = 0; i < 1e5; i++) s += Math.sqrt(i);
  return s;
}
function spinMain(ms) {
  let s = 0;
  for (const end = Date.now() + ms; Date.now() < end;)
    for (let i = 0; i < 1e5; i++) s += Math.sqrt(i);
  return s;
}
if (isMainThread) {
  new Worker(__filename);
  spinMain(1500);
} else {
  spinWorker(1500);
}
