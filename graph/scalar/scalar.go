// Package scalar marshals the custom GraphQL scalars: IDs and UUIDs as
// uuid.UUID, and StringMap as map[string]string.
package scalar

import (
	"fmt"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
)

// MarshalUUID writes a UUID as its canonical string.
func MarshalUUID(u uuid.UUID) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(u.String()))
	})
}

// UnmarshalUUID reads a UUID, saying what was wrong when it is not one.
func UnmarshalUUID(v any) (uuid.UUID, error) {
	s, ok := v.(string)
	if !ok {
		return uuid.Nil, fmt.Errorf("expected a UUID string, got %T", v)
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, fmt.Errorf("%q is not a UUID", s)
	}
	return u, nil
}

// MarshalStringMap writes a map of strings as a JSON object.
func MarshalStringMap(m map[string]string) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		if m == nil {
			m = map[string]string{}
		}
		graphql.MarshalMap(toAny(m)).MarshalGQL(w)
	})
}

// UnmarshalStringMap reads a JSON object whose values are all strings.
func UnmarshalStringMap(v any) (map[string]string, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected an object of strings, got %T", v)
	}
	out := make(map[string]string, len(obj))
	for k, val := range obj {
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("value of %q must be a string, got %T", k, val)
		}
		out[k] = s
	}
	return out, nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
