// SPDX-License-Identifier: Apache-2.0
// gowork: a Go program for tests/export/pprof_go.sh (built there by go build).
package main

import (
	"fmt"
	"os"
	"time"
)

//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i ^ (s >> 3)
	}
	return s
}

func main() {
	end := time.Now().Add(2 * time.Second)
	s := 0
	for time.Now().Before(end) {
		s += spin(100000)
	}
	fmt.Fprintln(os.Stderr, s)
}
