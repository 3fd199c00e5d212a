package toolbus

import "github.com/cairn-agents/cairn/pkg/provision"

// DefaultAckWait is a [Worker]'s AckWait when it sets none.
const DefaultAckWait = provision.DefaultToolAckWait
