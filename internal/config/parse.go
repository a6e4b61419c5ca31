package config

import (
	"errors"
	"strconv"
	"time"
)

// The parsers of environment values. Their errors say what a well-formed
// value looks like; Load adds the variable and the value.

func parseBool(s string) (bool, error) {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, errors.New("use true or false")
	}
	return v, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("use a duration with a unit, such as 90s, 15m or 24h")
	}
	return d, nil
}

func parseInt[T int | int64](s string) (T, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || int64(T(n)) != n {
		return 0, errors.New("use a whole number")
	}
	return T(n), nil
}
