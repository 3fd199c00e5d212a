package store

import (
	"encoding/binary"
	"encoding/hex"
	"math"
)

// Key prefixes. Every key of the database starts with one of them; see
// docs/read-models.md for the full layout.
const (
	pMeta         = "meta/"
	pSession      = "s/"       // s/<sid>
	pActivity     = "sa/"      // sa/<inverted ms:16 hex>/<sid>
	pEntry        = "e/"       // e/<sid>/<seq:16 hex>
	pEntryID      = "ei/"      // ei/<sid>/<entry id>
	pCall         = "tc/"      // tc/<sid>/<call id>
	pByTool       = "tx/tool/" // tx/tool/<tool>\x00<ms:16 hex>/<sid>/<call id>
	pBySession    = "tx/sess/" // tx/sess/<sid>/<ms:16 hex>/<call id>
	pByTime       = "tx/time/" // tx/time/<ms:16 hex>/<sid>/<call id>
	pUsage        = "u/"       // u/<YYYY-MM-DD>/<model>
	pTenantUsage  = "ut/"      // ut/<tenant>/<YYYY-MM-DD>/<model>
	pBad          = "bad/"     // bad/<seq:16 hex>
	keyApplied    = pMeta + "applied"
	keyLayout     = pMeta + "layout"
	layoutVersion = "3" // 2: no n/ keys; the tree is read from e/. 3: ut/ keys
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

func sessionKey(sid string) string { return pSession + sid }

func activityKey(ms int64, sid string) string {
	if ms < 0 {
		ms = 0
	}
	return pActivity + hex16(math.MaxUint64-uint64(ms)) + "/" + sid
}

func entryKey(sid string, seq uint64) string { return pEntry + sid + "/" + hex16(seq) }
func entryIDKey(sid, id string) string       { return pEntryID + sid + "/" + id }
func callKey(sid, callID string) string      { return pCall + sid + "/" + callID }
func usageKey(day, model string) string      { return pUsage + day + "/" + model }
func tenantUsageKey(tenant, day, model string) string {
	return pTenantUsage + tenant + "/" + day + "/" + model
}
func badKey(seq uint64) string { return pBad + hex16(seq) }
func byToolKey(tool string, ms int64, sid, id string) string {
	return pByTool + tool + "\x00" + msKey(ms) + "/" + sid + "/" + id
}
func bySessionKey(sid string, ms int64, id string) string {
	return pBySession + sid + "/" + msKey(ms) + "/" + id
}
func byTimeKey(ms int64, sid, id string) string {
	return pByTime + msKey(ms) + "/" + sid + "/" + id
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
