package graph_test

import "runtime"

func runtimeGoroutines() int { return runtime.NumGoroutine() }
