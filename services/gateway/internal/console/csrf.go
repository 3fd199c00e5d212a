package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
)

// CookieName is the cookie that carries a console login's credential.
const CookieName = "cairn_console"

// CSRFHeader is the header the console's script sends the CSRF token in
// with every unsafe /v1 request; console forms send it as the field csrf.
const CSRFHeader = "X-Cairn-CSRF"

// csrfContext separates the CSRF token's HMAC from any other use of the key.
const csrfContext = "cairn console csrf v1"

// CSRFToken is the CSRF token bound to credential: HMAC-SHA256 keyed with
// the credential. It reveals nothing of the credential, needs no state and
// is the same on every gateway.
func CSRFToken(credential string) string {
	m := hmac.New(sha256.New, []byte(credential))
	m.Write([]byte(csrfContext))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Token returns the credential of r's console cookie, if it has one.
func Token(r *http.Request) (string, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return "", false
	}
	return c.Value, true
}

// CSRFError is a request refused by the CSRF checks: 403, with this message.
type CSRFError struct{ Msg string }

func (e *CSRFError) Error() string { return e.Msg }

var (
	errCrossOrigin = &CSRFError{"cross-origin request refused: a console request must come from the console's own origin"}
	errNoCSRF      = &CSRFError{"missing CSRF token: a request authenticated by the console cookie must send " + CSRFHeader}
	errBadCSRF     = &CSRFError{"CSRF token does not match the console cookie"}
)

var crossOrigin = http.NewCrossOriginProtection()

// CheckOrigin refuses an unsafe request a browser says came from another
// origin (Sec-Fetch-Site, else Origin against Host). Safe methods pass.
func CheckOrigin(r *http.Request) error {
	if crossOrigin.Check(r) != nil {
		return errCrossOrigin
	}
	return nil
}

// CheckCSRF checks an unsafe request authenticated by the console cookie
// with credential: its origin, and got, the CSRF token it carried. Safe
// methods (GET, HEAD, OPTIONS) pass. The error is a *CSRFError.
func CheckCSRF(r *http.Request, credential, got string) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if err := CheckOrigin(r); err != nil {
		return err
	}
	if got == "" {
		return errNoCSRF
	}
	if !hmac.Equal([]byte(got), []byte(CSRFToken(credential))) {
		return errBadCSRF
	}
	return nil
}

// IsCSRF reports whether err is a CSRF refusal.
func IsCSRF(err error) bool {
	var ce *CSRFError
	return errors.As(err, &ce)
}
