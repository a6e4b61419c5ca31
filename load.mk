# make load: the agent load (cmd/loadgen) against the embedded default
# database, measured against the floor in the same run. The Makefile
# includes this file.
GO ?= go

.PHONY: load

## load: agents and frontends at 1, 8 and 32 clients; latency, CPU and statements per operation vs the floor (LOADFLAGS='-cpuprofile load.pprof');
## then the same on the grown database (-grown: half a million rows, ANALYZEd)
load:
	$(GO) run ./cmd/loadgen $(LOADFLAGS)
	$(GO) run ./cmd/loadgen -grown $(LOADFLAGS)
