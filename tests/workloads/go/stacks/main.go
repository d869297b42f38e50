// SPDX-License-Identifier: Apache-2.0
// gostacks: a Go program of a known shape for tests/report/go_stacks.sh
// (built there by go build, plain and with -ldflags="-s -w"):
//
//	runtime.goexit -> runtime.main -> main.main -> main.mid -> main.leafHot -> main.mix (inlined)
//	runtime.goexit -> runtime.main -> main.main -> main.mid2 -> main.leafBare
//
// leafHot keeps a frame (its array); mix is small enough for the compiler
// to inline into leafHot; leafBare has no frame at all (no calls, no
// locals): a frame-pointer walk from it skips mid2, Go's pcsp table does
// not.  About two thirds of the time in leafHot, one third in leafBare.
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

func mix(a, b int) int {
	a ^= b >> 3
	a *= 0x9e3779b1
	return a ^ (a >> 15)
}

//go:noinline
func leafHot(n int) int {
	var buf [16]int
	s := 0
	for i := 0; i < n; i++ {
		s += mix(i, s)
		buf[i&15] ^= s
	}
	return s + buf[n&15]
}

//go:noinline
func mid(n int) int { return leafHot(n) + 1 }

//go:noinline
func leafBare(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i ^ (s >> 3)
	}
	return s
}

//go:noinline
func mid2(n int) int { return leafBare(n) + 2 }

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	// the process's CPU time, not wall time: a busy machine makes the run
	// longer, not poorer in samples (the sampler counts CPU time)
	var ru syscall.Rusage
	cpu := func() time.Duration {
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	end := cpu() + time.Duration(secs*float64(time.Second))
	s := 0
	for cpu() < end {
		s += mid(100000)
		s += mid2(100000)
	}
	fmt.Fprintln(os.Stderr, s)
}
