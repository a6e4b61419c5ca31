// Package model holds the GraphQL types gqlgen generates because no Go type
// is bound to them in gqlgen.yml.
package model
