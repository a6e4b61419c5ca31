package engine

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
	"sessiongraph/internal/tokenizer"
)

// Limits on session input; each is checked with a message naming the field.
const (
	maxExternalKeyLen = 500
	maxTTLSeconds     = 365 * 24 * 60 * 60
	maxMetadataKeys   = 256
	maxMetadataValue  = 4000
)

// Sessions opens, reads, updates, expires and deletes sessions, and runs
// the reaper that purges expired ones.
type Sessions struct {
	client   *ent.Client
	store    *store.Store
	cfg      Config
	domains  *Domains
	receipts *Receipts
}

// OpenSessionInput opens a session, or finds the live one of its key.
type OpenSessionInput struct {
	Tenant       string
	ExternalKey  string
	Domain       *string
	UserID       *string
	SystemPrompt *string
	TTLSeconds   *int
	Metadata     map[string]string
	// Tokenizer counts the session's tokens; default cl100k_base.
	Tokenizer *string
}

// OpenSessionResult is the session opened or found.
type OpenSessionResult struct {
	Session *ent.Session
	// Created is false when a live session with the key already existed.
	Created bool
	// ReplacedSessionID names the expired session whose key the new one took.
	ReplacedSessionID *uuid.UUID
}

// OpenSession gets or creates the live session of a tenant's external key.
// Opening an existing session changes nothing, so it is not activity.
func (ss *Sessions) OpenSession(ctx context.Context, in OpenSessionInput) (*OpenSessionResult, error) {
	if err := access.CheckName("tenant", in.Tenant); err != nil {
		return nil, err
	}
	if err := requireText("externalKey", in.ExternalKey, maxExternalKeyLen); err != nil {
		return nil, err
	}
	if err := access.RequireTenant(ctx, in.Tenant); err != nil {
		return nil, err
	}
	ttl, err := ss.ttl(in.TTLSeconds)
	if err != nil {
		return nil, err
	}
	if err := checkMetadata(in.Metadata); err != nil {
		return nil, err
	}
	domain := ss.cfg.DefaultDomain
	if in.Domain != nil {
		if err := requireText("domain", *in.Domain, 200); err != nil {
			return nil, err
		}
		domain = *in.Domain
		if err := ss.domains.requireDomain(ctx, domain); err != nil {
			return nil, err
		}
	}
	counter := tokenizer.Default
	if in.Tokenizer != nil {
		if counter, err = tokenizer.Parse(*in.Tokenizer); err != nil {
			return nil, apperr.Invalid("tokenizer", "%v", err)
		}
	}
	opened, err := ss.store.Open(ctx, in.Tenant, in.ExternalKey, func(c *ent.SessionCreate) {
		c.SetDomain(domain).SetTTLSeconds(ttl).SetTokenizer(string(counter)).
			SetNillableUserID(in.UserID).SetNillableSystemPrompt(in.SystemPrompt)
		if in.Metadata != nil {
			c.SetMetadata(in.Metadata)
		}
	})
	if err != nil {
		return nil, err
	}
	return &OpenSessionResult{Session: opened.Session, Created: opened.Created, ReplacedSessionID: opened.Replaced}, nil
}

// UpdateSessionInput changes a session's state; nil fields stay as they are.
type UpdateSessionInput struct {
	ID                        uuid.UUID
	Focus                     *schematype.Focus
	ClearFocus                *bool
	EngagementSummary         *string
	HistorySummary            *string
	ReasoningSummary          *string
	PendingClarification      map[string]any
	ClearPendingClarification *bool
	SystemPrompt              *string
	UserID                    *string
	TTLSeconds                *int
	Metadata                  map[string]string
	RemoveMetadata            []string
}

// UpdateSession applies every given field in one commit. Metadata is merged
// into what the session has, under the session lock, so that concurrent
// merges never lose a key.
func (ss *Sessions) UpdateSession(ctx context.Context, in UpdateSessionInput) (*ent.Session, error) {
	if err := checkMetadata(in.Metadata); err != nil {
		return nil, err
	}
	var ttl *int
	if in.TTLSeconds != nil {
		v, err := ss.ttl(in.TTLSeconds)
		if err != nil {
			return nil, err
		}
		ttl = &v
	}
	if in.Focus != nil && in.Focus.Type == "" {
		return nil, apperr.Invalid("focus.type", "focus.type must name an entity type")
	}
	w, err := ss.store.Begin(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	defer w.Rollback()
	u := w.Update()
	if in.Focus != nil {
		u.SetFocus(in.Focus)
	} else if isTrue(in.ClearFocus) {
		u.ClearFocus()
	}
	if in.PendingClarification != nil {
		u.SetPendingClarification(in.PendingClarification)
	} else if isTrue(in.ClearPendingClarification) {
		u.ClearPendingClarification()
	}
	u.SetNillableEngagementSummary(in.EngagementSummary).SetNillableHistorySummary(in.HistorySummary).
		SetNillableReasoningSummary(in.ReasoningSummary).SetNillableSystemPrompt(in.SystemPrompt).
		SetNillableUserID(in.UserID).SetNillableTTLSeconds(ttl)
	if in.Metadata != nil || len(in.RemoveMetadata) > 0 {
		merged := maps.Clone(w.Session.Metadata)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, in.Metadata)
		for _, k := range in.RemoveMetadata {
			delete(merged, k)
		}
		if len(merged) > maxMetadataKeys {
			return nil, apperr.TooLarge("metadata", "metadata would hold %d keys; at most %d are allowed", len(merged), maxMetadataKeys)
		}
		u.SetMetadata(merged)
	}
	// The mutation knows what was given; the activity stamps come later.
	changed := append(u.Mutation().Fields(), u.Mutation().ClearedFields()...)
	if len(changed) == 0 {
		return nil, apperr.Invalid("input", "nothing to update: give at least one field besides id")
	}
	updated := store.Event{Kind: KindSessionUpdated, Payload: map[string]any{"fields": changed}}
	return w.Commit(ctx, store.Mutation{Events: []store.Event{updated}, ReadBack: true})
}

// Session returns a session by id, or a NOT_FOUND error.
func (ss *Sessions) Session(ctx context.Context, id uuid.UUID) (*ent.Session, error) {
	return sessionByID(ctx, ss.client, id)
}

// sessionByID reads a session by id, or answers NOT_FOUND.
func sessionByID(ctx context.Context, client *ent.Client, id uuid.UUID) (*ent.Session, error) {
	s, err := client.Session.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "session %s not found", id)
	}
	return s, err
}

// SessionByKey returns the live session of a tenant's external key, or nil.
func (ss *Sessions) SessionByKey(ctx context.Context, tenant, key string) (*ent.Session, error) {
	s, err := store.Keyed(ctx, ss.client.SessionKey, ss.client.Session, tenant, key, session.StatusEQ(session.StatusActive))
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return s, err
}

func (ss *Sessions) ttl(seconds *int) (int, error) {
	if seconds == nil {
		return int(ss.cfg.DefaultTTL / time.Second), nil
	}
	// Compared as seconds, before any arithmetic: a huge value multiplied
	// into a Duration overflows and would pass as a negative one.
	if *seconds <= 0 || *seconds > maxTTLSeconds {
		return 0, apperr.Invalid("ttlSeconds", "ttlSeconds must be between 1 and %d (one year), got %d", maxTTLSeconds, *seconds)
	}
	return *seconds, nil
}

func requireText(field, v string, maxLen int) error {
	if v == "" {
		return apperr.Invalid(field, "%s must not be empty", field)
	}
	if len(v) > maxLen {
		return apperr.TooLarge(field, "%s is %d bytes long; at most %d are allowed", field, len(v), maxLen)
	}
	return nil
}

func checkMetadata(m map[string]string) error {
	if len(m) > maxMetadataKeys {
		return apperr.TooLarge("metadata", "metadata has %d keys; at most %d are allowed", len(m), maxMetadataKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "" {
			return apperr.Invalid("metadata", "metadata keys must not be empty")
		}
		if len(m[k]) > maxMetadataValue {
			return apperr.TooLarge("metadata", "metadata value of %q is %d bytes; at most %d are allowed", k, len(m[k]), maxMetadataValue)
		}
	}
	return nil
}

func isTrue(b *bool) bool { return b != nil && *b }
