package apperr

// Operation is an operation of the API as a message names it, in a hint of
// what to call ("end it (endTurn)"). Its value is the GraphQL field, which
// Message shows; another door shows its own name for it (MessageNaming):
// MCP the tool that runs it. A message names one with %s.
type Operation string

// The operations that messages name or that MCP tools run.
const (
	OpOpenSession      Operation = "openSession"
	OpBeginTurn        Operation = "beginTurn"
	OpEndTurn          Operation = "endTurn"
	OpFailTurn         Operation = "failTurn"
	OpRecordExchange   Operation = "recordExchange"
	OpRecordItems      Operation = "recordItems"
	OpRecordStepResult Operation = "recordStepResult"
	OpRecordRead       Operation = "recordRead"
	OpRecordUpdated    Operation = "recordUpdated"
	OpRecordGenerated  Operation = "recordGenerated"
	OpRecordCreated    Operation = "recordCreated"
	OpRecordDeleted    Operation = "recordDeleted"
	OpRetainRef        Operation = "retainRef"
	OpReleaseRef       Operation = "releaseRef"
	OpResolveRefs      Operation = "resolveRefs"
	OpTranslatePayload Operation = "translatePayload"
	OpTranslateFilters Operation = "translateFilters"
	OpReadRefs         Operation = "readRefs"
	OpContext          Operation = "context"
	OpWorkingMemory    Operation = "workingMemory"
	OpUpsertEntityType Operation = "upsertEntityType"
	OpRecordModelCall  Operation = "recordModelCall"
	OpRecordContext    Operation = "recordContext"
)
