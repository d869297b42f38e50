// SPDX-License-Identifier: Apache-2.0
// cgo stacks (tests/report/go_cgo.sh): Go calling C (main.viaC -> c_hot) and
// C calling Go back (main.viaCBack -> c_calls_go -> main.goLeaf), on the
// system stack runtime.asmcgocall switches to.
package main

/*
#include <stdint.h>
extern int64_t goLeaf(int64_t n);
static __attribute__((noinline)) int64_t c_hot(int64_t n) {
	int64_t s = 0;
	for (int64_t i = 0; i < n; i++) s += i ^ (s >> 3);
	return s;
}
static __attribute__((noinline)) int64_t c_calls_go(int64_t n) {
	return goLeaf(n) + 1;
}
*/
import "C"

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

//export goLeaf
func goLeaf(n C.int64_t) C.int64_t {
	s := int64(0)
	for i := int64(0); i < int64(n); i++ {
		s += i ^ (s >> 3)
	}
	return C.int64_t(s)
}

//go:noinline
func viaC(n int) int64 { return int64(C.c_hot(C.int64_t(n))) }

//go:noinline
func viaCBack(n int) int64 { return int64(C.c_calls_go(C.int64_t(n))) }

func main() {
	// 2 s of the process's CPU time, not of wall time: a busy machine makes
	// the run longer, not poorer in samples (the sampler counts CPU time)
	var ru syscall.Rusage
	cpu := func() time.Duration {
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	end := cpu() + 2*time.Second
	s := int64(0)
	for cpu() < end {
		s += viaC(200000)
		s += viaCBack(200000)
	}
	fmt.Fprintln(os.Stderr, s)
}
