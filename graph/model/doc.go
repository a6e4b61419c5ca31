// Package model holds the GraphQL types gqlgen generates because no Go type
// is bound to them in gqlgen.yml (models_gen.go), and the few payloads that
// several mutation payload types share (payloads.go).
package model
