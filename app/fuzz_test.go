package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/externalfixture"
)

// The API fuzzer drives the whole handler (newHandler, every operation) in
// process with bodies mutated from a valid seed of every POST, PUT and PATCH
// operation, and checks on every input: no 5xx; every 4xx is the error body
// (status, code, message; 400s name their fields); a refused request writes
// nothing (every collection's row count is unchanged).

// fuzzOp is one operation under fuzz: its path (with fixture ids in place of
// the parameters) and its valid seed bodies.
type fuzzOp struct {
	method, pattern, path string
	contentType           string
	seeds                 []string
	// query is a valid query string (GET operations: every parameter).
	query string
}

func (o fuzzOp) name() string { return o.method + " " + o.pattern }

type fuzzEnv struct {
	t       testing.TB
	env     *apiEnv
	handler http.Handler
	auth    string
	ops     []fuzzOp
	// counts returns the number of rows of every table or collection.
	counts func() map[string]int
	// statuses counts the answers by operation and status (seeded runs).
	statuses map[string]int
	// ids are the fixtures' ids by path parameter name.
	ids map[string]string
	// agentAuth is a connected agent's Bearer credential, sent instead of
	// auth (when auth is the first platform's) on /agents/me/….
	agentAuth string
}

// newFuzzEnv opens a memory or PostgreSQL (scratch database) backend behind
// the real handler and creates the fixtures the seeds refer to.
func newFuzzEnv(t testing.TB, backendName string) *fuzzEnv {
	t.Helper()
	env := newAPIEnv(t, backendName)
	be, cfg, ctx := env.be, env.cfg, context.Background()
	e := &fuzzEnv{t: t, env: env, handler: env.handler, auth: env.auth}
	switch backendName {
	case "postgres":
		db, err := postgres.Open(ctx, cfg.DatabaseURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		e.counts = postgresCounts(t, db)
	default:
		st, led, idem := be.store.(*memory.Store), be.ledger.(*memory.Ledger), be.idem.(*memory.IdempotencyStore)
		e.counts = func() map[string]int {
			m := st.Counts()
			maps.Copy(m, led.Counts())
			m["idempotency_records"] = idem.Len()
			return m
		}
	}
	e.ids = map[string]string{}
	e.ops = e.fixtures(be, env.platformID)
	e.ops = append(e.ops, e.getOperations()...)
	return e
}

// postgresCounts counts the rows of every table in one statement.
func postgresCounts(t testing.TB, db *bun.DB) func() map[string]int {
	var tables []string
	if err := db.NewRaw(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`).Scan(context.Background(), &tables); err != nil {
		t.Fatal(err)
	}
	parts := make([]string, len(tables))
	for i, tb := range tables {
		parts[i] = fmt.Sprintf(`SELECT '%s' AS name, count(*) AS n FROM %q`, tb, tb)
	}
	query := strings.Join(parts, " UNION ALL ")
	return func() map[string]int {
		var rows []struct {
			Name string `bun:"name"`
			N    int    `bun:"n"`
		}
		if err := db.NewRaw(query).Scan(context.Background(), &rows); err != nil {
			t.Fatal(err)
		}
		m := make(map[string]int, len(rows))
		for _, r := range rows {
			m[r.Name] = r.N
		}
		return m
	}
}

// call sends one request through the handler in process.
func (e *fuzzEnv) call(method, path, contentType string, body []byte, header ...string) *httptest.ResponseRecorder {
	return e.callQuery(method, path, "", contentType, body, header...)
}

// callQuery is call with a raw query string (sent as it is, however bad).
func (e *fuzzEnv) callQuery(method, path, query, contentType string, body []byte, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://corridor.test"+BasePath+path, bytes.NewReader(body))
	if query != "" {
		req.URL.RawQuery = query
	}
	req.Header.Set("Authorization", e.auth)
	if e.agentAuth != "" && e.auth == e.env.auth && (path == "/agents/me" || strings.HasPrefix(path, "/agents/me/")) {
		req.Header.Set("Authorization", e.agentAuth)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return rec
}

// create sends a fixture's request, requires 200 or 201, and returns its id.
func (e *fuzzEnv) create(method, path, body string) string {
	e.t.Helper()
	rec := e.call(method, path, "application/json", []byte(body))
	if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
		e.t.Fatalf("fixture %s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		e.t.Fatal(err)
	}
	id, _ := m["id"].(string)
	return id
}

const fuzzBoundary = "fuzzboundary"

// fixtures creates what the seeds refer to (customers, accounts, an external
// account, a quote, a beneficial owner) and returns the operations.
func (e *fuzzEnv) fixtures(be *backend, platformID string) []fuzzOp {
	e.t.Helper()
	ctx := context.Background()
	cust := e.create("POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US","umaAddress":"$fuzz@sandbox.local"}`)
	biz := e.create("POST", "/customers", `{"customerType":"BUSINESS","businessInfo":{"legalName":"Fuzz Inc","country":"US","taxId":"12-3456789","incorporatedOn":"2019-01-01"}}`)
	rows, _, err := be.store.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: platformID, CustomerID: cust, Currency: "USD"}, ports.Page{Limit: 10})
	if err != nil {
		e.t.Fatal(err)
	}
	var acct string
	for _, a := range rows {
		if a.Type == "INTERNAL_FIAT" {
			acct = a.ID
		}
	}
	if acct == "" {
		e.t.Fatalf("no USD account among %d", len(rows))
	}
	fund := "/sandbox/internal-accounts/" + acct + "/fund"
	e.create("POST", fund, `{"amount":100000000}`)
	extBody := externalBody
	ext := e.create("POST", "/customers/external-accounts", extBody(cust, "USD_ACCOUNT", externalfixture.DefaultSuffix))
	quoteBody := fmt.Sprintf(`{"source":{"sourceType":"ACCOUNT","accountId":%q},"destination":{"destinationType":"ACCOUNT","accountId":%q},`+
		`"lockedCurrencySide":"SENDING","lockedCurrencyAmount":10000,"description":"fuzz"}`, acct, ext)
	quote := e.create("POST", "/quotes", quoteBody)
	funded := e.create("POST", "/quotes", fmt.Sprintf(`{"source":{"sourceType":"REALTIME_FUNDING","customerId":%q,"currency":"USD"},`+
		`"destination":{"destinationType":"ACCOUNT","accountId":%q},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":5000}`, cust, ext))
	ownerBody := fmt.Sprintf(`{"customerId":%q,"roles":["UBO","DIRECTOR"],"ownershipPercentage":10,"personalInfo":{"firstName":"Jane",`+
		`"lastName":"Smith","birthDate":"1978-06-15","nationality":"US","idType":"SSN","identifier":"123-45-6789",`+
		`"address":{"line1":"3 Oak Ave","city":"Austin","state":"TX","postalCode":"73301","country":"US"}}}`, biz)
	owner := e.create("POST", "/beneficial-owners", ownerBody)
	wallet, credential := e.walletCredential(be, platformID)
	session := e.create("POST", "/auth/credentials/"+credential+"/verify", `{"otp":"000000","clientPublicKey":"02f739f8c77b32f4d5f13265861febd76e7a9c61a1140d296b8c16302508870316"}`)
	maps.Copy(e.ids, map[string]string{"customerId": cust, "accountId": acct, "externalAccountId": ext, "quoteId": quote,
		"beneficialOwnerId": owner, "receiverUmaAddress": "$fuzz@sandbox.local", "id": credential,
		"tokenId": e.create("POST", "/tokens", `{"name":"fixture","permissions":["VIEW"]}`)})
	transfer := func(src, dst string) string {
		return fmt.Sprintf(`{"source":{"accountId":%q},"destination":{"accountId":%q},"amount":100}`, src, dst)
	}
	form := func(fields ...string) string {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		_ = mw.SetBoundary(fuzzBoundary)
		for i := 0; i+1 < len(fields); i += 2 {
			_ = mw.WriteField(fields[i], fields[i+1])
		}
		fw, _ := mw.CreateFormFile("file", "passport.pdf")
		_, _ = fw.Write([]byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"))
		_ = mw.Close()
		return b.String()
	}
	formType := "multipart/form-data; boundary=" + fuzzBoundary
	upload := form("documentHolder", cust, "documentType", "PASSPORT", "country", "US", "documentNumber", "X123")
	rec := e.call("POST", "/documents", formType, []byte(upload))
	var doc struct{ ID string }
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != http.StatusCreated {
		e.t.Fatalf("fixture document: %d %s", rec.Code, rec.Body)
	}
	e.ids["documentId"] = doc.ID
	// An invitation of the first platform (its code is shared by design:
	// any platform reads and claims it).
	e.create("POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US","umaAddress":"$inviter@sandbox.local"}`)
	rec = e.call("POST", "/invitations", "application/json", []byte(`{"inviterUma":"$inviter@sandbox.local","firstName":"Fuzz","amountToSend":500}`))
	var inv struct{ Code string }
	if err := json.Unmarshal(rec.Body.Bytes(), &inv); err != nil || rec.Code != http.StatusCreated {
		e.t.Fatalf("fixture invitation: %d %s", rec.Code, rec.Body)
	}
	e.ids["invitationCode"] = inv.Code
	// A webhook event of the first platform (its quote's transaction).
	evs, _, err := be.store.Read().Events().List(ctx, ports.EventFilter{PlatformID: platformID, Type: "OUTGOING_PAYMENT.PENDING"},
		ports.Page{Limit: 1})
	if err != nil || len(evs) == 0 {
		e.t.Fatalf("fixture webhook event: %v (%d)", err, len(evs))
	}
	e.ids["eventId"] = evs[0].ID
	// A webhook endpoint that takes everything (the test webhook's seed).
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	e.t.Cleanup(hooks.Close)
	if rec := e.call("PATCH", "/config", "application/json", []byte(`{"webhookEndpoint":"`+hooks.URL+`/hooks"}`)); rec.Code != http.StatusOK {
		e.t.Fatalf("fixture webhook endpoint: %d %s", rec.Code, rec.Body)
	}
	// A transfer-out on a batch rail, unsettled: cancellable.
	cancellable := e.create("POST", "/transfer-out", transfer(acct, ext))
	agent, code, action := e.agentFixture(be, cust)
	// An agent executes only the quotes it created.
	agentQuote := e.create("POST", "/agents/me/quotes", quoteBody)
	ct := "application/json"
	return []fuzzOp{
		{"POST", "/agents", "/agents", ct, []string{agentBody(cust)}, ""},
		{"PATCH", "/agents/{agentId}", "/agents/" + agent, ct, []string{`{"name":"renamed","isPaused":false}`}, ""},
		{"PATCH", "/agents/{agentId}/policy", "/agents/" + agent + "/policy", ct, []string{
			`{"defaultExecutionMode":"AUTO","spendingLimits":{"dailyLimit":null,"perTransactionLimit":5000},"approvalThresholds":{"currency":"USD","amount":2500}}`}, ""},
		{"POST", "/agents/device-codes/{code}/redeem", "/agents/device-codes/" + code + "/redeem", ct, []string{""}, ""},
		{"POST", "/agents/{agentId}/device-codes", "/agents/" + agent + "/device-codes", ct, []string{""}, ""},
		{"POST", "/agents/me/external-accounts", "/agents/me/external-accounts", ct, []string{extBody("", "USD_ACCOUNT", "460")}, ""},
		{"POST", "/agents/me/quotes", "/agents/me/quotes", ct, []string{quoteBody}, ""},
		{"POST", "/agents/me/quotes/{quoteId}/execute", "/agents/me/quotes/" + agentQuote + "/execute", ct, []string{""}, ""},
		{"POST", "/agents/me/transfer-in", "/agents/me/transfer-in", ct, []string{transfer(ext, acct)}, ""},
		{"POST", "/agents/me/transfer-out", "/agents/me/transfer-out", ct, []string{transfer(acct, ext)}, ""},
		{"POST", "/agents/{agentId}/actions/{actionId}/approve", "/agents/" + agent + "/actions/" + action + "/approve", ct, []string{""}, ""},
		{"POST", "/agents/{agentId}/actions/{actionId}/reject", "/agents/" + agent + "/actions/" + action + "/reject", ct,
			[]string{"", `{"reason":"too much"}`}, ""},
		{"POST", "/customers", "/customers", ct, []string{
			`{"customerType":"INDIVIDUAL","platformCustomerId":"fz-1","region":"US","email":"a@example.com","fullName":"Zoë Smith","birthDate":"1990-01-02","nationality":"US","address":{"line1":"1 Main St","city":"Springfield","state":"IL","postalCode":"62701","country":"US"}}`,
			`{"customerType":"BUSINESS","umaAddress":"$biz@sandbox.local","businessInfo":{"legalName":"A","country":"US","taxId":"1","incorporatedOn":"2019-01-01"}}`}, ""},
		{"PATCH", "/customers/{customerId}", "/customers/" + cust, ct, []string{`{"customerType":"INDIVIDUAL","email":"new@example.com","fullName":"Ann Other","address":{"line1":"2 Elm St","city":"Austin","state":"TX","postalCode":"73301","country":"US"}}`}, ""},
		{"POST", "/customers/external-accounts", "/customers/external-accounts", ct, []string{extBody(cust, "USD_ACCOUNT", "456"), extBody(cust, "EUR_ACCOUNT", "457"), extBody(cust, "MXN_ACCOUNT", "458")}, ""},
		{"POST", "/platform/external-accounts", "/platform/external-accounts", ct, []string{extBody("", "USD_ACCOUNT", "459")}, ""},
		{"POST", "/transfer-in", "/transfer-in", ct, []string{transfer(ext, acct)}, ""},
		{"POST", "/transfer-out", "/transfer-out", ct, []string{transfer(acct, ext)}, ""},
		{"POST", "/quotes", "/quotes", ct, []string{quoteBody,
			strings.Replace(quoteBody, `"description":"fuzz"`, `"immediatelyExecute":true`, 1)}, ""},
		{"POST", "/quotes/{quoteId}/execute", "/quotes/" + quote + "/execute", ct, []string{`{}`}, ""},
		{"POST", "/invitations", "/invitations", ct, []string{`{"inviterUma":"$inviter@sandbox.local","firstName":"Ann","amountToSend":1000,"expiresAt":"2099-01-01T00:00:00Z"}`}, ""},
		{"POST", "/invitations/{invitationCode}/cancel", "/invitations/" + inv.Code + "/cancel", ct, []string{""}, ""},
		{"POST", "/invitations/{invitationCode}/claim", "/invitations/" + inv.Code + "/claim", ct, []string{`{"inviteeUma":"$ben@other.example"}`}, ""},
		{"POST", "/webhooks/events/{eventId}/redeliver", "/webhooks/events/" + evs[0].ID + "/redeliver", ct, []string{""}, ""},
		{"POST", "/sandbox/webhooks/test", "/sandbox/webhooks/test", ct, []string{""}, ""},
		// The event's transaction takes no approval: 409 (or 404, 400).
		{"POST", "/transactions/{transactionId}/approve", "/transactions/" + evs[0].ResourceID + "/approve", ct,
			[]string{"", `{"receiverCustomerInfo":{"FULL_NAME":"Ann"}}`}, ""},
		{"POST", "/transactions/{transactionId}/reject", "/transactions/" + evs[0].ResourceID + "/reject", ct,
			[]string{"", `{"reason":"RESTRICTED_JURISDICTION"}`}, ""},
		{"POST", "/transactions/{transactionId}/cancel", "/transactions/" + cancellable + "/cancel", ct,
			[]string{"", `{"reason":"REQUESTED_AFTER_HOURS"}`}, ""},
		{"POST", "/sandbox/send", "/sandbox/send", ct, []string{fmt.Sprintf(`{"quoteId":%q,"currencyCode":"USD"}`, funded)}, ""},
		{"POST", "/sandbox/internal-accounts/{accountId}/fund", fund, ct, []string{`{"amount":100}`}, ""},
		{"POST", "/sandbox/uma/receive", "/sandbox/uma/receive", ct, []string{fmt.Sprintf(
			`{"senderUmaAddress":"$success.usd@sandbox.local","customerId":%q,"receivingCurrencyCode":"USD","receivingCurrencyAmount":1000}`, cust)}, ""},
		{"POST", "/beneficial-owners", "/beneficial-owners", ct, []string{ownerBody}, ""},
		{"PATCH", "/beneficial-owners/{beneficialOwnerId}", "/beneficial-owners/" + owner, ct, []string{`{"roles":["UBO"],"ownershipPercentage":20,"personalInfo":{"lastName":"Jones"}}`}, ""},
		{"POST", "/verifications", "/verifications", ct, []string{fmt.Sprintf(`{"customerId":%q}`, cust)}, ""},
		{"POST", "/documents", "/documents", formType, []string{upload}, ""},
		{"PUT", "/documents/{documentId}", "/documents/" + doc.ID, formType, []string{form("documentType", "DRIVERS_LICENSE", "side", "FRONT", "country", "CA")}, ""},
		{"POST", "/auth/credentials", "/auth/credentials", ct, []string{fmt.Sprintf(`{"type":"EMAIL_OTP","accountId":%q}`, wallet)}, ""},
		{"POST", "/auth/credentials/{id}/challenge", "/auth/credentials/" + credential + "/challenge", ct, []string{`{}`}, ""},
		{"POST", "/auth/credentials/{id}/verify", "/auth/credentials/" + credential + "/verify", ct, []string{
			`{"type":"EMAIL_OTP","otp":"000000","clientPublicKey":"04cf288fe433cc4e1aa0ce1632feac4ea26bf2f5a09dcfe5a42c398e06898710330f0572882f4dbdf0f5304b8fc8703acd69adca9a4bbf7f5d00d20a5e364b2569"}`,
			`{"otp":"000000","clientPublicKey":"02f739f8c77b32f4d5f13265861febd76e7a9c61a1140d296b8c16302508870316"}`}, ""},
		{"PATCH", "/internal-accounts/{id}", "/internal-accounts/" + wallet, ct, []string{`{"privateEnabled":true}`}, ""},
		{"PATCH", "/config", "/config", ct, []string{`{"umaDomain":"pay.example.com","webhookEndpoint":"https://hooks.example.com/corridor","embeddedWalletConfig":{"otpLength":8,"expirationSeconds":600},"supportedCurrencies":[{"currencyCode":"USD","minAmount":0,"maxAmount":1000000,"enabledTransactionTypes":["INCOMING","OUTGOING"],"requiredCounterpartyFields":[{"name":"FULL_NAME","mandatory":true}]}]}`}, ""},
		{"POST", "/internal-accounts/{id}/export", "/internal-accounts/" + wallet + "/export", ct, []string{
			`{"clientPublicKey":"04cf288fe433cc4e1aa0ce1632feac4ea26bf2f5a09dcfe5a42c398e06898710330f0572882f4dbdf0f5304b8fc8703acd69adca9a4bbf7f5d00d20a5e364b2569"}`}, ""},
		{"POST", "/tokens", "/tokens", ct, []string{`{"name":"fuzz","permissions":["VIEW","TRANSACT"]}`}, ""},
		{"POST", "/auth/sessions/{id}/refresh", "/auth/sessions/" + session + "/refresh", ct, []string{
			`{"clientPublicKey":"02f739f8c77b32f4d5f13265861febd76e7a9c61a1140d296b8c16302508870316"}`}, ""},
	}
}

// agentBody is a valid createAgent body for customer cust.
func agentBody(cust string) string {
	return fmt.Sprintf(`{"name":"Fuzz agent","customerId":%q,"policy":{"permissions":["VIEW_TRANSACTIONS","CREATE_TRANSFERS"],`+
		`"defaultExecutionMode":"APPROVAL_REQUIRED","spendingLimits":{"currency":"USD","perTransactionLimit":10000,"dailyLimit":50000}}}`, cust)
}

// agentFixture makes an agent of customer cust with a pending action, and
// returns its id, a live device code and the action's id. The ids the
// probe gets name the agent's first code, dead by then (so a second
// platform's redemption finds nothing).
func (e *fuzzEnv) agentFixture(be *backend, cust string) (agent, code, action string) {
	e.t.Helper()
	rec := e.call("POST", "/agents", "application/json", []byte(agentBody(cust)))
	var created struct {
		Agent      struct{ ID string }
		DeviceCode struct{ Code string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || rec.Code != http.StatusCreated {
		e.t.Fatalf("fixture agent: %d %s", rec.Code, rec.Body)
	}
	agent = created.Agent.ID
	rec = e.call("POST", "/agents/"+agent+"/device-codes", "", nil)
	var again struct{ Code string }
	if err := json.Unmarshal(rec.Body.Bytes(), &again); err != nil || rec.Code != http.StatusCreated {
		e.t.Fatalf("fixture device code: %d %s", rec.Code, rec.Body)
	}
	ctx := context.Background()
	a, err := be.store.Read().Agents().Get(ctx, e.env.platformID, agent)
	if err != nil {
		e.t.Fatal(err)
	}
	act := e.env.svc.agents.NewAction(a, "", "TRANSFER_OUT")
	act.Status, act.Amount, act.Currency = "PENDING_APPROVAL", 100, "USD"
	act.CreatedAt = time.Now().UTC()
	act.UpdatedAt = act.CreatedAt
	if err := be.store.InTx(ctx, func(tx ports.Tx) error { return e.env.svc.agents.Submit(ctx, tx, act) }); err != nil {
		e.t.Fatal(err)
	}
	maps.Copy(e.ids, map[string]string{"agentId": agent, "code": created.DeviceCode.Code, "actionId": act.ID})
	// A second agent, connected, that may manage external accounts: the
	// /agents/me operations run as it.
	rec = e.call("POST", "/agents", "application/json", []byte(strings.Replace(agentBody(cust), `"CREATE_TRANSFERS"`,
		`"CREATE_TRANSFERS","MANAGE_EXTERNAL_ACCOUNTS","CREATE_QUOTES","EXECUTE_QUOTES"`, 1)))
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || rec.Code != http.StatusCreated {
		e.t.Fatalf("fixture agent: %d %s", rec.Code, rec.Body)
	}
	rec = e.call("POST", "/agents/device-codes/"+created.DeviceCode.Code+"/redeem", "", nil)
	var redeemed struct{ AccessToken string }
	if err := json.Unmarshal(rec.Body.Bytes(), &redeemed); err != nil || rec.Code != http.StatusOK {
		e.t.Fatalf("fixture redeem: %d %s", rec.Code, rec.Body)
	}
	e.agentAuth = "Bearer " + redeemed.AccessToken
	return agent, again.Code, act.ID
}

// walletCredential makes a customer with an e-mail (so an embedded wallet
// with its EMAIL_OTP credential) and returns the wallet's and the
// credential's ids.
func (e *fuzzEnv) walletCredential(be *backend, platformID string) (wallet, credential string) {
	e.t.Helper()
	cust := e.create("POST", "/customers", `{"customerType":"INDIVIDUAL","region":"US","email":"wallet@example.com"}`)
	ctx := context.Background()
	rows, _, err := be.store.Read().InternalAccounts().List(ctx, ports.InternalAccountFilter{PlatformID: platformID, CustomerID: cust,
		Type: "EMBEDDED_WALLET"}, ports.Page{Limit: 10})
	if err != nil || len(rows) != 1 {
		e.t.Fatalf("wallet of %s: %v (%d)", cust, err, len(rows))
	}
	creds, err := be.store.Read().AuthMethods().ListByAccount(ctx, platformID, rows[0].ID)
	if err != nil || len(creds) != 1 {
		e.t.Fatalf("credential of %s: %v", rows[0].ID, err)
	}
	return rows[0].ID, creds[0].ID
}

// getOperations are the GET operations of the OpenAPI document, their path
// parameters set to fixtures and their query to a value for every
// parameter.
func (e *fuzzEnv) getOperations() []fuzzOp {
	e.t.Helper()
	rec := e.call("GET", "/openapi.json", "", nil)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name, In string
				Schema   struct {
					Type   any // a name, or a list of names
					Format string
					Enum   []any
				}
			}
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		e.t.Fatalf("openapi.json: %v", err)
	}
	var ops []fuzzOp
	for _, pattern := range slices.Sorted(maps.Keys(doc.Paths)) {
		get, ok := doc.Paths[pattern]["get"]
		if !ok {
			continue
		}
		path := paramRe.ReplaceAllStringFunc(pattern, func(p string) string {
			if id, ok := e.ids[strings.Trim(p, "{}")]; ok {
				return id
			}
			return "Unknown:0"
		})
		var q []string
		for _, p := range get.Parameters {
			if p.In != "query" || p.Name == "cursor" { // a cursor comes from a previous page
				continue
			}
			v, typ := e.ids[p.Name], fmt.Sprint(p.Schema.Type)
			switch {
			case v != "":
			case len(p.Schema.Enum) > 0:
				v = fmt.Sprint(p.Schema.Enum[0])
			case strings.Contains(typ, "integer") || strings.Contains(typ, "number"):
				v = "5"
			case strings.Contains(typ, "boolean"):
				v = "true"
			case p.Schema.Format == "date-time":
				v = "2025-01-01T00:00:00Z"
			case p.Schema.Format == "date":
				v = "2025-01-01"
			case p.Name == "currency":
				v = "USD"
			default:
				v = "x"
			}
			q = append(q, url.QueryEscape(p.Name)+"="+url.QueryEscape(v))
		}
		ops = append(ops, fuzzOp{method: "GET", pattern: pattern, path: path, query: strings.Join(q, "&"), seeds: []string{""}})
	}
	return ops
}

var paramRe = regexp.MustCompile(`\{[^}]+\}`)

// apiOperations lists the POST, PUT and PATCH operations of the OpenAPI
// document.
func (e *fuzzEnv) apiOperations() []string {
	var ops []string
	for _, op := range e.allOperations() {
		if m, _, _ := strings.Cut(op, " "); m == "POST" || m == "PUT" || m == "PATCH" {
			ops = append(ops, op)
		}
	}
	return ops
}

func TestFuzzSeedsCoverEveryPostPutAndPatch(t *testing.T) {
	e := newFuzzEnv(t, "memory")
	have := map[string]bool{}
	for _, o := range e.ops {
		have[o.name()] = true
	}
	ops := e.apiOperations()
	if len(ops) < 10 {
		t.Fatalf("only %d POST/PUT/PATCH operations in the OpenAPI document: %v", len(ops), ops)
	}
	for _, op := range ops {
		if !have[op] {
			t.Errorf("%s has no fuzz seed: add one to fuzzEnv.fixtures", op)
		}
	}
	// Every seed is valid: it succeeds (or, once its state has moved on, is
	// refused as a 4xx, never as malformed input).
	for _, o := range e.ops {
		if o.method == "GET" {
			continue // GET seeds are best effort: any answer but a 5xx
		}
		for _, s := range o.seeds {
			rec := e.call(o.method, o.path, o.contentType, []byte(s))
			if rec.Code >= 300 && (rec.Code != http.StatusConflict && rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), "INVALID_INPUT")) {
				t.Errorf("seed of %s: %d %s", o.name(), rec.Code, rec.Body)
			}
		}
	}
}

// check sends one fuzz input and reports a broken property.
func (e *fuzzEnv) check(op fuzzOp, body []byte, query string, header ...string) error {
	before := e.counts()
	rec := e.callQuery(op.method, op.path, query, op.contentType, body, header...)
	if e.statuses != nil {
		e.statuses[fmt.Sprintf("%s %d", op.name(), rec.Code)]++
	}
	if rec.Code >= 500 {
		return fmt.Errorf("%s answered %d: %s", op.name(), rec.Code, rec.Body)
	}
	if rec.Code < 400 {
		return nil
	}
	var eb struct {
		Status  int    `json:"status"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Details struct {
			Errors []struct {
				Field string `json:"field"`
			} `json:"errors"`
		} `json:"details"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil {
		return fmt.Errorf("%s %d body is not the error body: %v: %s", op.name(), rec.Code, err, rec.Body)
	}
	switch {
	case eb.Status != rec.Code || eb.Message == "" || !codeRe.MatchString(eb.Code):
		return fmt.Errorf("%s %d: bad error body %s", op.name(), rec.Code, rec.Body)
	case genericCodes[eb.Code] != 0 && genericCodes[eb.Code] != rec.Code:
		return fmt.Errorf("%s %d: code %s belongs to %d: %s", op.name(), rec.Code, eb.Code, genericCodes[eb.Code], rec.Body)
	case eb.Code == "INVALID_INPUT" && (len(eb.Details.Errors) == 0 || eb.Details.Errors[0].Field == ""):
		return fmt.Errorf("%s %d: INVALID_INPUT names no field: %s", op.name(), rec.Code, rec.Body)
	}
	if after := e.counts(); !maps.Equal(before, after) {
		return fmt.Errorf("%s refused with %d wrote: %v -> %v (%s)", op.name(), rec.Code, before, after, rec.Body)
	}
	return nil
}

var codeRe = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// genericCodes are the codes that name a status (domain codes such as
// INSUFFICIENT_BALANCE may go with several).
var genericCodes = map[string]int{
	"INVALID_INPUT": 400, "UNAUTHORIZED": 401, "FORBIDDEN": 403, "NOT_FOUND": 404, "METHOD_NOT_ALLOWED": 405,
	"CONFLICT": 409, "GONE": 410, "PAYLOAD_TOO_LARGE": 413, "UNSUPPORTED_MEDIA_TYPE": 415, "UNPROCESSABLE_ENTITY": 422,
}

// fuzzTarget runs the native fuzz target on backendName: the corpus is
// every seed, raw and with one mutation of each kind.
func fuzzTarget(f *testing.F, backendName string) {
	e := newFuzzEnv(f, backendName)
	for i, o := range e.ops {
		for _, s := range o.seeds {
			f.Add(uint8(i), []byte(s), o.query)
			for k := range mutators {
				rng := rand.New(rand.NewPCG(uint64(i), uint64(k)))
				if o.method == "GET" {
					f.Add(uint8(i), []byte(s), mutateQuery(rng, o.query))
				} else {
					f.Add(uint8(i), mutators[k](rng, []byte(s)), o.query)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, opIndex uint8, body []byte, query string) {
		op := e.ops[int(opIndex)%len(e.ops)]
		if op.method == "GET" {
			body = nil
		}
		if err := e.check(op, body, query); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzAPIMemory fuzzes every POST, PUT and PATCH body and every GET query on
// the memory backend.
func FuzzAPIMemory(f *testing.F) { fuzzTarget(f, "memory") }

// FuzzAPIPostgres is FuzzAPIMemory on PostgreSQL.
func FuzzAPIPostgres(f *testing.F) { fuzzTarget(f, "postgres") }

// seededMutations runs n deterministic mutations of the seeds (one to three
// mutations each, some with a bad header), failing on the first broken
// property.
func seededMutations(t *testing.T, backendName string, n int) {
	e := newFuzzEnv(t, backendName)
	e.statuses = map[string]int{}
	defer func() {
		for _, k := range slices.Sorted(maps.Keys(e.statuses)) {
			t.Logf("%-60s %5d", k, e.statuses[k])
		}
	}()
	rng := rand.New(rand.NewPCG(13, 13))
	for i := 0; i < n; i++ {
		op := e.ops[rng.IntN(len(e.ops))]
		body, query := []byte(op.seeds[rng.IntN(len(op.seeds))]), op.query
		for k := rng.IntN(3); k >= 0; k-- {
			if op.method == "GET" {
				query = mutateQuery(rng, query)
			} else {
				body = mutators[rng.IntN(len(mutators))](rng, body)
			}
		}
		var header []string
		if rng.IntN(20) == 0 {
			header = []string{badHeaders[rng.IntN(len(badHeaders))], badTexts[rng.IntN(len(badTexts))]}
		}
		if err := e.check(op, body, query, header...); err != nil {
			t.Fatalf("mutation %d: %v\nbody: %q\nquery: %q", i, err, body, query)
		}
	}
}

func TestAPISeededMutationsMemory(t *testing.T) { seededMutations(t, "memory", 5000) }

func TestAPISeededMutationsPostgres(t *testing.T) { seededMutations(t, "postgres", 1000) }

// queryValues replace a query value or are added as one.
var queryValues = []string{"%00", "a%00b", "%ff", "%ed%a0%80", "%C3", "", "-1", "0", "1.5", "99999999999999999999", "1e400",
	"9223372036854775808", "2025-02-30T00:00:00Z", "not-a-date", "BOGUS", "Customer:nope", "%22%7B%7D", "x%20y", strings.Repeat("z", 5000)}

// mutateQuery changes one parameter's value, repeats one, or adds a bad
// parameter (name or value).
func mutateQuery(rng *rand.Rand, q string) string {
	params := strings.Split(q, "&")
	v := queryValues[rng.IntN(len(queryValues))]
	i := rng.IntN(len(params))
	name, _, _ := strings.Cut(params[i], "=")
	switch rng.IntN(4) {
	case 0: // another value
		params[i] = name + "=" + v
	case 1: // the parameter twice
		params = append(params, name+"="+v)
	case 2: // a bad name
		params = append(params, v+"=1")
	default: // truncated
		params[i] = params[i][:rng.IntN(len(params[i])+1)]
	}
	return strings.Join(params, "&")
}

// badHeaders are headers the API reads; badTexts are what the boundary
// refuses.
var (
	badHeaders = []string{"Idempotency-Key", "Content-Type", "Authorization", "Corridor-Operator-Token"}
	badTexts   = []string{"a\x00b", "\xff\xfe", "k\xed\xa0\x80"}
)

// Mutators: each takes a body and returns a changed copy.
var mutators = []func(*rand.Rand, []byte) []byte{
	insertInString, replaceNumber, replaceValue, duplicateKey, dropKey, deepNest, truncate, flipByte, unknownField,
}

// insertions go inside a string: NUL (raw and escaped), invalid UTF-8,
// lone and reversed surrogates, escapes, long and non-ASCII text.
var insertions = []string{`\u0000`, "\x00", "\xff", "\xc3", "\xed\xa0\x80", `\ud800`, `\udc00`, `\udc00\ud800`,
	`\ud83d\ude00`, `\"`, `\\`, `\n`, "Zoë 中文 😀", strings.Repeat("x", 300), strings.Repeat("y", 70000), `\u202e`, " "}

// stringStarts returns the offsets just after each opening quote.
func stringStarts(b []byte) []int {
	var out []int
	in := false
	for i := 0; i < len(b); i++ {
		switch {
		case in && b[i] == '\\':
			i++
		case b[i] == '"':
			if !in {
				out = append(out, i+1)
			}
			in = !in
		}
	}
	return out
}

func insertInString(rng *rand.Rand, b []byte) []byte {
	starts := stringStarts(b)
	if len(starts) == 0 {
		return b
	}
	at := starts[rng.IntN(len(starts))]
	ins := insertions[rng.IntN(len(insertions))]
	if rng.IntN(2) == 0 { // replace the whole string
		end := at
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' {
				end++
			}
			end++
		}
		return slices.Concat(b[:at], []byte(ins), b[min(end, len(b)):])
	}
	return slices.Concat(b[:at], []byte(ins), b[at:])
}

var numberRe = regexp.MustCompile(`-?\b\d+(\.\d+)?([eE][+-]?\d+)?\b`)

var numbers = []string{"0", "-1", "-0", "1.5", "100.5", "0.001", "1e2", "1E400", "-1e400", "1e-400", "99999999999999999999999999",
	"9223372036854775807", "9223372036854775808", "-9223372036854775809", "4294967296", "9000000000000001", "100000000001", "1.0", "101", "007"}

func replaceNumber(rng *rand.Rand, b []byte) []byte {
	locs := numberRe.FindAllIndex(b, -1)
	n := numbers[rng.IntN(len(numbers))]
	if len(locs) == 0 {
		return replaceValue(rng, b)
	}
	l := locs[rng.IntN(len(locs))]
	return slices.Concat(b[:l[0]], []byte(n), b[l[1]:])
}

var valueRe = regexp.MustCompile(`:\s*("(\\.|[^"\\])*"|-?\d[\d.eE+-]*|true|false|null|\{\}|\[\])`)

var values = []string{`{}`, `[]`, `[[]]`, `[{},null]`, `[[],[]]`, `null`, `true`, `false`, `"BOGUS"`, `"UNKNOWN_ENUM"`, `123`, `-5`, `""`, `" "`,
	`"x"`, `1.5`, `1e400`, `{"a":1}`, `["UBO","UBO"]`, `[1,2]`, `"2025-02-30"`, `"9999-12-31"`, `"Customer:nope"`, `"InternalAccount:x"`, `"$a@b"`,
	`"\u0000"`, `"\ud800"`, "\"\xff\"", `"ZZ"`, `"usd"`}

func replaceValue(rng *rand.Rand, b []byte) []byte {
	locs := valueRe.FindAllSubmatchIndex(b, -1)
	if len(locs) == 0 {
		return b
	}
	l := locs[rng.IntN(len(locs))]
	return slices.Concat(b[:l[2]], []byte(values[rng.IntN(len(values))]), b[l[3]:])
}

var keyValueRe = regexp.MustCompile(`"([A-Za-z]+)"\s*:\s*("(\\.|[^"\\])*"|-?\d[\d.eE+-]*|true|false|null)`)

// duplicateKey repeats a key of the same object with another value.
func duplicateKey(rng *rand.Rand, b []byte) []byte {
	locs := keyValueRe.FindAllSubmatchIndex(b, -1)
	if len(locs) == 0 {
		return b
	}
	l := locs[rng.IntN(len(locs))]
	key := string(b[l[2]:l[3]])
	dup := fmt.Sprintf(`,"%s":%s`, key, values[rng.IntN(len(values))])
	if rng.IntN(2) == 0 {
		dup = `,` + string(b[l[0]:l[1]])
	}
	return slices.Concat(b[:l[1]], []byte(dup), b[l[1]:])
}

// dropKey removes a key and its value (wherever it sits).
func dropKey(rng *rand.Rand, b []byte) []byte {
	locs := keyValueRe.FindAllIndex(b, -1)
	if len(locs) == 0 {
		return b
	}
	l := locs[rng.IntN(len(locs))]
	start, end := l[0], l[1]
	switch {
	case end < len(b) && b[end] == ',':
		end++
	case start > 0 && b[start-1] == ',':
		start--
	}
	return slices.Concat(b[:start], b[end:])
}

func deepNest(rng *rand.Rand, b []byte) []byte {
	depth := []int{10, 63, 64, 65, 200, 5000}[rng.IntN(6)]
	open, shut := "[", "]"
	if rng.IntN(2) == 0 {
		open, shut = `{"a":`, "}"
	}
	v := strings.Repeat(open, depth) + "1" + strings.Repeat(shut, depth)
	locs := valueRe.FindAllSubmatchIndex(b, -1)
	if len(locs) == 0 {
		return []byte(v)
	}
	l := locs[rng.IntN(len(locs))]
	return slices.Concat(b[:l[2]], []byte(v), b[l[3]:])
}

func truncate(rng *rand.Rand, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	return slices.Clone(b[:rng.IntN(len(b))])
}

func flipByte(rng *rand.Rand, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	c := slices.Clone(b)
	c[rng.IntN(len(c))] = byte(rng.IntN(256))
	return c
}

func unknownField(rng *rand.Rand, b []byte) []byte {
	i := bytes.IndexByte(b, '{')
	if i < 0 {
		return b
	}
	f := []string{`"unknownField":1,`, `"CustomerType":"INDIVIDUAL",`, `"":"",`, `"a\u0000":1,`, "\"\xff\":1,"}[rng.IntN(5)]
	return slices.Concat(b[:i+1], []byte(f), b[i+1:])
}
