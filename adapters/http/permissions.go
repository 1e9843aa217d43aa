package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/platforms"
)

// What each operation needs of the API token that calls it. The rule:
//
//   - reading (GET) needs VIEW, which TRANSACT and MANAGE include;
//   - moving money needs TRANSACT: the operations below, which place,
//     execute, simulate, approve or cancel payments, and the embedded-wallet
//     session steps that authorise them (challenge, verify, refresh,
//     revoke);
//   - every other write needs MANAGE: customers and their data, external
//     accounts, tokens, wallet credentials, privacy and export.
//
// A new write is MANAGE until it is listed here, so it is never more open
// than it should be; the permission test lists every operation and fails
// on one it does not know.
var transactOperations = map[string]bool{
	"createQuote":                true,
	"executeQuote":               true,
	"createTransferIn":           true,
	"createTransferOut":          true,
	"sandboxFundInternalAccount": true,
	"sandboxSend":                true,
	"sandboxReceive":             true,
	"challengeAuthCredential":    true,
	"verifyAuthCredential":       true,
	"refreshAuthSession":         true,
	"revokeAuthSession":          true,
	"approvePendingPayment":      true,
	"rejectPendingPayment":       true,
	"cancelTransaction":          true,
	"approveAgentAction":         true,
	"rejectAgentAction":          true,
}

// permissionExtension names an operation's required permission in the
// OpenAPI document.
const permissionExtension = "x-corridor-permission"

// requiredPermission is what op needs (see the rule above).
func requiredPermission(op *huma.Operation) string {
	switch {
	case op.Method == http.MethodGet:
		return platforms.PermissionView
	case transactOperations[op.OperationID]:
		return platforms.PermissionTransact
	default:
		return platforms.PermissionManage
	}
}

// notePermission records op's required permission: in the document, and
// under its route (method and path, as the mux names it) for checkPermission.
func (s *server) notePermission(op *huma.Operation) {
	if agentOperation(op) {
		// An agent's operations need its access token; its policy decides
		// what it may do. The redemption needs no credential.
		return
	}
	need := requiredPermission(op)
	if op.Extensions == nil {
		op.Extensions = map[string]any{}
	}
	op.Extensions[permissionExtension] = need
	op.Description = strings.TrimSpace(op.Description + " Needs an API token with " + need + ".")
	s.permissions[op.Method+" "+op.Path] = need
}

// checkPermission refuses, with 403 FORBIDDEN, a platform's request whose
// token lacks what the operation (route is "METHOD /path" without the base
// path) needs. It runs before the body is read into a model or an
// Idempotency-Key is claimed, so a refused request leaves nothing behind.
func (s *server) checkPermission(r *http.Request, route string) *Error {
	p := principal(r.Context())
	if p.AgentID != "" {
		// An agent's token reaches its own operations only (a management
		// route whose {agentId} matched "me" included).
		if _, path, _ := strings.Cut(route, " "); !agentPath(BasePath + path) {
			return statusError(http.StatusNotFound, "no such route: "+r.URL.Path)
		}
		return nil
	}
	need, ok := s.permissions[route]
	if p.PlatformID == "" || !ok || platforms.Allows(p.Permissions, need) {
		return nil
	}
	e := fromFault(fault.New(fault.KindForbidden, "FORBIDDEN",
		fmt.Sprintf("this API token lacks the %s permission, which %s needs", need, route)))
	e.Details = map[string]any{"requiredPermission": need, "tokenPermissions": p.Permissions}
	return e
}
