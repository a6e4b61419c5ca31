package config_test

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/config"
)

func env(vars map[string]string) config.Lookup {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestDefaultsAreWhatNoFlagAndNoVariableGive(t *testing.T) {
	d := config.Defaults()
	assert.Equal(t, config.Settings{
		Listen: "127.0.0.1:8080", DataDir: ".data/postgres", LogLevel: "info", LogFormat: "json",
		SlowRequest: time.Second, DefaultTTL: 24 * time.Hour, DefaultDomain: "kitchen",
		ShutdownTimeout: 15 * time.Second, ReapInterval: time.Minute, Retention: 7 * 24 * time.Hour,
		MaxBodyBytes: 2 << 20, ReadTimeout: 10 * time.Second, RequestTimeout: 30 * time.Second, QueryTimeout: 10 * time.Second, MutationTimeout: 20 * time.Second, TokenLimit: 15000,
		Limits:         config.Limits{MaxDepth: 15, MaxAliases: 30, MaxRootFields: 20, MaxComplexity: 50000},
		Subscriptions:  config.SubscriptionLimits{PerSocket: 100, PerKey: 1000, PerReplica: 10000},
		Fairness:       config.Fairness{KeyRate: 500, KeyBurst: 1000, KeyInFlight: 32, TenantRate: 1000, TenantBurst: 2000, TenantInFlight: 64, KeyPoolShare: 50, TenantPoolShare: 75},
		DomainCacheTTL: 10 * time.Second, TenantLinger: time.Second, PageDefault: 20, PageMax: 100, CompiledReads: true,
	}, d)

	loaded, rest, err := config.Load("sessiongraph", nil, env(nil), io.Discard, nil)
	require.NoError(t, err)
	assert.Empty(t, rest)
	assert.Equal(t, d, loaded)
}

func TestVariablesSetAndFlagsWin(t *testing.T) {
	s, rest, err := config.Load("sessiongraph", []string{"-max-depth", "9", "-allowed-origins", "a.example, b.example", "more"},
		env(map[string]string{"MAX_DEPTH": "7", "SESSION_TTL": "90m", "INTROSPECTION": "true", "DATABASE_URL": "postgres://db/x"}),
		io.Discard, nil)
	require.NoError(t, err)
	assert.Equal(t, 9, s.Limits.MaxDepth, "the flag wins over MAX_DEPTH")
	assert.Equal(t, 90*time.Minute, s.DefaultTTL)
	assert.True(t, s.Introspection)
	assert.Equal(t, "postgres://db/x", s.DatabaseURL)
	assert.Equal(t, []string{"a.example", "b.example"}, s.AllowedOrigins)
	assert.Equal(t, []string{"more"}, rest)
}

func TestMalformedVariablesStopTheStartNamingVariableAndValue(t *testing.T) {
	_, _, err := config.Load("sessiongraph", nil, env(map[string]string{
		"SESSION_TTL": "24", "MAX_DEPTH": "abc", "INTROSPECTION": "maybe", "LOG_FORMAT": "yaml",
	}), io.Discard, nil)
	require.Error(t, err)
	assert.Equal(t, `environment variable LOG_FORMAT="yaml": use json, text
environment variable INTROSPECTION="maybe": use true or false
environment variable SESSION_TTL="24": use a duration with a unit, such as 90s, 15m or 24h
environment variable MAX_DEPTH="abc": use a whole number`, err.Error())
}

func TestOutOfRangeValuesAreRefused(t *testing.T) {
	_, _, err := config.Load("sessiongraph", []string{"-request-timeout", "0s"},
		env(map[string]string{"MAX_BODY_BYTES": "-1"}), io.Discard, nil)
	assert.EqualError(t, err, "-max-body-bytes (MAX_BODY_BYTES) must be above zero\n-request-timeout (REQUEST_TIMEOUT) must be above zero")

	// 0 connections sizes the pool from the machine; fewer is refused.
	s, _, err := config.Load("sessiongraph", []string{"-max-open-conns", "0"}, env(nil), io.Discard, nil)
	require.NoError(t, err)
	assert.Zero(t, s.MaxOpenConns)
	_, _, err = config.Load("sessiongraph", nil, env(map[string]string{"MAX_OPEN_CONNS": "-2"}), io.Discard, nil)
	assert.EqualError(t, err, "-max-open-conns (MAX_OPEN_CONNS) must be zero or above")

	_, _, err = config.Load("sessiongraph", []string{"-log-level", "loud"}, env(nil), io.Discard, nil)
	assert.EqualError(t, err, `invalid value "loud" for flag -log-level: use debug, info, warn, error`)
}

// Which builds are recorded names nodes: a misspelt one stops the start
// instead of recording nothing; a negative retention is refused.
func TestReceiptSettingsAreChecked(t *testing.T) {
	s, _, err := config.Load("sessiongraph", []string{"-receipt-text-retention", "72h"},
		env(map[string]string{"RECORD_CONTEXTS": "THINK, ACT"}), io.Discard, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"THINK", "ACT"}, s.RecordContexts)
	assert.Equal(t, 72*time.Hour, s.ReceiptTextRetention)

	_, _, err = config.Load("sessiongraph", nil, env(map[string]string{"RECORD_CONTEXTS": "THINK,think"}), io.Discard, nil)
	assert.EqualError(t, err, `environment variable RECORD_CONTEXTS="THINK,think": "think" is not one of UNDERSTAND, THINK, ACT, REPLY, MESSAGES`)
	_, _, err = config.Load("sessiongraph", []string{"-receipt-text-retention", "-1h"}, env(nil), io.Discard, nil)
	assert.EqualError(t, err, "-receipt-text-retention (RECEIPT_TEXT_RETENTION) must be zero or above")

	d := config.Defaults()
	assert.Empty(t, d.RecordContexts, "nothing is recorded unless asked")
	assert.Zero(t, d.ReceiptTextRetention, "text is kept as long as its session")
}
