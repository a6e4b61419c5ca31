package model

import "sessiongraph/ent"

// The payloads below are shared: every mutation returns its own payload
// type (the API style), and gqlgen.yml binds the types of the same shape to
// one of these, so Go stays small.

// TurnPayload is the turn a turn mutation opened, changed or closed.
type TurnPayload struct {
	Turn *ent.Turn
}

// SessionPayload is the session a mutation changed.
type SessionPayload struct {
	Session *ent.Session
}

// CountPayload is how many sessions a bulk mutation changed.
type CountPayload struct {
	Count int
}

// Turn wraps a turn mutation's result in its payload.
func Turn(t *ent.Turn, err error) (*TurnPayload, error) {
	if err != nil {
		return nil, err
	}
	return &TurnPayload{Turn: t}, nil
}

// Session wraps a session mutation's result in its payload.
func Session(s *ent.Session, err error) (*SessionPayload, error) {
	if err != nil {
		return nil, err
	}
	return &SessionPayload{Session: s}, nil
}

// Count wraps a bulk mutation's count in its payload.
func Count(n int, err error) (*CountPayload, error) {
	if err != nil {
		return nil, err
	}
	return &CountPayload{Count: n}, nil
}

// StepResult wraps recordStepResult's result in its payload.
func StepResult(r *ent.StepResult, err error) (*RecordStepResultPayload, error) {
	if err != nil {
		return nil, err
	}
	return &RecordStepResultPayload{StepResult: r}, nil
}

// ModelCall wraps recordModelCall's result in its payload.
func ModelCall(c *ent.ModelCall, err error) (*RecordModelCallPayload, error) {
	if err != nil {
		return nil, err
	}
	return &RecordModelCallPayload{ModelCall: c}, nil
}
