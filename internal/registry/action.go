package registry

// Action tags: how an entity entered the registry or was last
// changed. A ":user" suffix marks changes the user made in the frontend.
const (
	ActionRead      = "read"
	ActionCreated   = "created"
	ActionUpdated   = "updated"
	ActionDeleted   = "deleted"
	ActionGenerated = "generated"
	ActionLinked    = "linked"
)

// UserKind is a change the user made in the frontend.
type UserKind string

// The user kinds and their tags: created:user, updated:user, deleted:user,
// mentioned:user.
const (
	UserCreated   UserKind = "created"
	UserUpdated   UserKind = "updated"
	UserDeleted   UserKind = "deleted"
	UserMentioned UserKind = "mentioned"
)

// UserAction is the action tag of a frontend change.
func UserAction(k UserKind) string { return string(k) + ":user" }
