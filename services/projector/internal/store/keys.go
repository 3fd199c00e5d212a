package store

import (
	"encoding/binary"
	"encoding/hex"
	"math"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Key prefixes. Every key of the database starts with one of them; see
// docs/read-models.md for the full layout. <ref> is a session's
// <tenant>.<sid> (events.SessionRef.String; neither part holds a dot or a
// slash), so a session's keys are its tenant's; the indexes a query lists
// (sessions by activity, tool calls by tool and by time, usage) begin with
// the tenant, so a query for one tenant reads only that tenant's keys.
const (
	pMeta         = "meta/"
	pSession      = "s/"       // s/<ref>
	pActivity     = "sa/"      // sa/<tenant>/<inverted ms:16 hex>/<sid>
	pEntry        = "e/"       // e/<ref>/<seq:16 hex>
	pEntryID      = "ei/"      // ei/<ref>/<entry id>
	pCall         = "tc/"      // tc/<ref>/<call id>
	pByTool       = "tx/tool/" // tx/tool/<tenant>/<tool>\x00<ms:16 hex>/<sid>/<call id>
	pBySession    = "tx/sess/" // tx/sess/<ref>/<ms:16 hex>/<call id>
	pByTime       = "tx/time/" // tx/time/<tenant>/<ms:16 hex>/<sid>/<call id>
	pUsage        = "u/"       // u/<tenant>/<YYYY-MM-DD>/<model>
	pBad          = "bad/"     // bad/<seq:16 hex>
	keyApplied    = pMeta + "applied"
	keyLayout     = pMeta + "layout"
	layoutVersion = "3" // 2: no n/ keys; the tree is read from e/. 3: keys carry the tenant
)

func hex16(v uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return hex.EncodeToString(b[:])
}

func appendHex16(dst []byte, v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return hex.AppendEncode(dst, b[:])
}

func parseHex16(s string) (uint64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	var b [8]byte
	if _, err := hex.Decode(b[:], []byte(s)); err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[:]), true
}

// ms keys sort by time; negative times (before 1970) clamp to zero.
func msKey(ms int64) string {
	if ms < 0 {
		ms = 0
	}
	return hex16(uint64(ms))
}

func sessionKey(r events.SessionRef) string { return pSession + r.String() }

// activityPrefix is where tenant's sessions are listed by activity.
func activityPrefix(tenant string) string { return pActivity + tenant + "/" }

func activityKey(ms int64, r events.SessionRef) string {
	if ms < 0 {
		ms = 0
	}
	return activityPrefix(r.Tenant) + hex16(math.MaxUint64-uint64(ms)) + "/" + r.ID
}

func entryPrefix(r events.SessionRef) string            { return pEntry + r.String() + "/" }
func entryKey(r events.SessionRef, seq uint64) string   { return entryPrefix(r) + hex16(seq) }
func entryIDKey(r events.SessionRef, id string) string  { return pEntryID + r.String() + "/" + id }
func callKey(r events.SessionRef, callID string) string { return pCall + r.String() + "/" + callID }
func usagePrefix(tenant string) string                  { return pUsage + tenant + "/" }
func usageKey(tenant, day, model string) string         { return usagePrefix(tenant) + day + "/" + model }
func badKey(seq uint64) string                          { return pBad + hex16(seq) }
func byToolPrefix(tenant, tool string) string           { return pByTool + tenant + "/" + tool + "\x00" }
func bySessionPrefix(r events.SessionRef) string        { return pBySession + r.String() + "/" }
func byTimePrefix(tenant string) string                 { return pByTime + tenant + "/" }
func byToolKey(tool string, ms int64, r events.SessionRef, id string) string {
	return byToolPrefix(r.Tenant, tool) + msKey(ms) + "/" + r.ID + "/" + id
}
func bySessionKey(r events.SessionRef, ms int64, id string) string {
	return bySessionPrefix(r) + msKey(ms) + "/" + id
}
func byTimeKey(ms int64, r events.SessionRef, id string) string {
	return byTimePrefix(r.Tenant) + msKey(ms) + "/" + r.ID + "/" + id
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p string) []byte {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return b[:i+1]
		}
	}
	return nil
}
