package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuSplit is one phase's CPU time as the profile's labels divide it. The
// server's request goroutines carry op=<operation>; its other goroutines
// (connection reading, the event hub, the reaper) carry only side=server;
// the load's own goroutines carry side=client; the runtime's (GC workers,
// scheduler) carry nothing.
type cpuSplit struct {
	process     time.Duration            // getrusage over the window: the truth
	byOp        map[string]time.Duration // server request goroutines, by operation
	serverOther time.Duration
	client      time.Duration
	runtime     time.Duration
}

// profiled is the CPU time the profile's samples add up to.
func (c cpuSplit) profiled() time.Duration {
	total := c.serverOther + c.client + c.runtime
	for _, d := range c.byOp {
		total += d
	}
	return total
}

// perOperation attributes the process CPU to one request of op, given how
// many requests of op and of all operations the server served in the
// window. It is the op's own samples per request, plus an equal share per
// request of the server's samples outside any handler; the runtime's samples
// are spread over server and client in proportion to theirs; and the whole is
// scaled so that the profile adds up to getrusage.
func (c cpuSplit) perOperation(op string, count, requests int) time.Duration {
	profiled := c.profiled()
	if count == 0 || requests == 0 || profiled == 0 {
		return 0
	}
	own := float64(c.byOp[op])/float64(count) + float64(c.serverOther)/float64(requests)
	labelled := float64(profiled - c.runtime)
	withRuntime := own * float64(profiled) / labelled
	return time.Duration(withRuntime * float64(c.process) / float64(profiled))
}

// share returns part as a fraction of all profiled time.
func (c cpuSplit) share(part time.Duration) float64 {
	if p := c.profiled(); p > 0 {
		return float64(part) / float64(p)
	}
	return 0
}

// splitProfile reads a gzipped CPU profile (runtime/pprof's protobuf) and
// adds up its CPU time by the labels side and op.
func splitProfile(gz []byte, process time.Duration) (cpuSplit, error) {
	split := cpuSplit{process: process, byOp: map[string]time.Duration{}}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return split, err
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return split, err
	}
	p, err := parseProfile(raw)
	if err != nil {
		return split, err
	}
	cpu := -1
	for i, t := range p.sampleTypes {
		if p.str(t) == "cpu" {
			cpu = i
		}
	}
	if cpu < 0 {
		return split, errors.New("profile has no cpu sample type")
	}
	for _, s := range p.samples {
		if cpu >= len(s.values) {
			continue
		}
		d := time.Duration(s.values[cpu])
		labels := map[string]string{}
		for _, l := range s.labels {
			labels[p.str(l[0])] = p.str(l[1])
		}
		switch {
		case labels["op"] != "" && labels["side"] == "server":
			split.byOp[labels["op"]] += d
		case labels["side"] == "server":
			split.serverOther += d
		case labels["side"] == "client":
			split.client += d
		default:
			split.runtime += d
		}
	}
	return split, nil
}

// profile is the part of pprof's protobuf the split needs.
type profile struct {
	sampleTypes []int64 // string table index of each value's type
	samples     []profileSample
	strings     []string
}

type profileSample struct {
	values []int64
	labels [][2]int64 // key and string value, as string table indices
}

func (p *profile) str(i int64) string {
	if i < 0 || int(i) >= len(p.strings) {
		return ""
	}
	return p.strings[i]
}

// Field numbers of perftools.profiles.Profile and its messages.
const (
	fieldSampleType  = 1
	fieldSample      = 2
	fieldStringTable = 6
	valueTypeType    = 1
	sampleValue      = 2
	sampleLabel      = 3
	labelKey         = 1
	labelStr         = 2
)

func parseProfile(b []byte) (*profile, error) {
	p := &profile{}
	err := eachField(b, func(num int, v uint64, data []byte) error {
		switch num {
		case fieldSampleType:
			return eachField(data, func(num int, v uint64, _ []byte) error {
				if num == valueTypeType {
					p.sampleTypes = append(p.sampleTypes, int64(v))
				}
				return nil
			})
		case fieldSample:
			s, err := parseSample(data)
			p.samples = append(p.samples, s)
			return err
		case fieldStringTable:
			p.strings = append(p.strings, string(data))
		}
		return nil
	})
	return p, err
}

func parseSample(b []byte) (profileSample, error) {
	var s profileSample
	err := eachField(b, func(num int, v uint64, data []byte) error {
		switch num {
		case sampleValue:
			if data == nil { // one unpacked value
				s.values = append(s.values, int64(v))
				return nil
			}
			for len(data) > 0 {
				x, n := binary.Uvarint(data)
				if n <= 0 {
					return errors.New("profile: bad packed value")
				}
				s.values = append(s.values, int64(x))
				data = data[n:]
			}
		case sampleLabel:
			var l [2]int64
			err := eachField(data, func(num int, v uint64, _ []byte) error {
				switch num {
				case labelKey:
					l[0] = int64(v)
				case labelStr:
					l[1] = int64(v)
				}
				return nil
			})
			s.labels = append(s.labels, l)
			return err
		}
		return nil
	})
	return s, err
}

// eachField calls f with every field of a protobuf message: varints in v,
// length-delimited fields in data (nil for other wire types).
func eachField(b []byte, f func(num int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errors.New("profile: bad field key")
		}
		b = b[n:]
		num, wire := int(key>>3), key&7
		var v uint64
		var data []byte
		switch wire {
		case 0:
			if v, n = binary.Uvarint(b); n <= 0 {
				return errors.New("profile: bad varint")
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return errors.New("profile: short fixed64")
			}
			b = b[8:]
		case 2:
			size, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < size {
				return errors.New("profile: bad length")
			}
			data = b[n : n+int(size)]
			if data == nil {
				data = []byte{}
			}
			b = b[n+int(size):]
		case 5:
			if len(b) < 4 {
				return errors.New("profile: short fixed32")
			}
			b = b[4:]
		default:
			return fmt.Errorf("profile: wire type %d", wire)
		}
		if err := f(num, v, data); err != nil {
			return err
		}
	}
	return nil
}
