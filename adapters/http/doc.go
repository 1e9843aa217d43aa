// Package httpapi is corridor's REST interface: Huma operations under the
// versioned base path (BasePath), their wire models, and the HTTP concerns
// around them, kept out of core:
//
//   - authentication: every API operation takes a platform API credential
//     over HTTP Basic (auth.go); health, readiness, the OpenAPI document and
//     the docs page need none;
//   - one error body for every failure, whether core, Huma or the router
//     produced it (errors.go);
//   - Idempotency-Key handling for every POST, scoped to the credential,
//     replaying the first response byte for byte (idempotency.go);
//   - signed, opaque list cursors (cursor.go);
//   - request limits, request logging and panic recovery (server.go,
//     logging.go).
//
// Handlers are thin: decode, call a core service with the caller's platform
// id, encode. New wires it all into one http.Handler.
package httpapi
