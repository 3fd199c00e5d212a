// Package console is Cairn's web console (DESIGN §14): server-rendered
// pages (html/template) and one small vanilla script, embedded in the
// binary and served by the gateway at "/". It has no build step and loads
// nothing from anywhere but its own origin.
//
// # Data path
//
// The console has no data of its own and no private route to any. Every
// page is a shell; the script reads and writes through the public /v1 API
// (fetch and EventSource) with the cookie the login form set, and the
// gateway authenticates that cookie exactly as it does a bearer token: the
// same principal, role checks and tenancy. The one thing done on the
// server, the audit verification of a session's hash chain, reads GET
// /v1/sessions/{id}/records through the gateway's own handler with the
// caller's credential and checks it with pkg/client's Verify, the code
// `cairn audit verify` runs.
//
// # Login and CSRF
//
// POST /login takes an API key (or an OIDC token), checks it with the
// gateway's authenticator and keeps it in the cookie [CookieName]:
// HttpOnly, SameSite=Strict, Path=/, Secure when the request came over TLS.
// POST /logout clears it. Every unsafe request authenticated by that
// cookie, console forms and /v1 calls alike, must pass [CheckCSRF]: the
// browser's Fetch Metadata or Origin must say it came from this origin
// (net/http's CrossOriginProtection) and it must carry the CSRF token,
// an HMAC of the cookie's credential ([CSRFToken]): bound to it, the
// same on every gateway of a cluster, and of no use without the cookie.
// The login form itself, which has no cookie yet, is checked for origin.
//
// # Headers
//
// Every console response carries a strict Content-Security-Policy
// (default-src 'self', no inline script or style, frame-ancestors 'none'),
// X-Frame-Options DENY, X-Content-Type-Options nosniff and Referrer-Policy
// no-referrer. Pages are not cached.
//
// # Roles
//
// A page renders only the actions the principal's role allows: a viewer
// sees no prompt box, no navigate, fork, approve or deny. The API refuses
// them anyway; hiding them keeps the page honest.
//
// # Concurrency
//
// A Console is immutable after New and serves requests concurrently.
package console
