package app

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// encodeUUIDs teaches a connection's type map to send github.com/google/uuid's
// UUID as the 16 bytes it is. Without it pgx takes the UUID for a
// driver.Valuer: it calls Value, which formats a string, fails to encode
// that string as a binary uuid (building an error with fmt.Errorf), parses
// the string back and encodes the result: for every UUID argument, in
// arrays one element at a time. Under the agent load that was a tenth of
// the server's CPU.
func encodeUUIDs(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryWrapUUID}, m.TryWrapEncodePlanFuncs...)
}

// tryWrapUUID wraps a uuid.UUID as a pgtype.UUIDValuer, which pgx's uuid
// codec encodes directly; any other value is left to pgx's own plans.
func tryWrapUUID(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if u, ok := value.(uuid.UUID); ok {
		return &uuidEncodePlan{}, uuidValue(u), true
	}
	return nil, nil, false
}

type uuidValue uuid.UUID

func (u uuidValue) UUIDValue() (pgtype.UUID, error) { return pgtype.UUID{Bytes: u, Valid: true}, nil }

type uuidEncodePlan struct{ next pgtype.EncodePlan }

func (p *uuidEncodePlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *uuidEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode(uuidValue(value.(uuid.UUID)), buf)
}
