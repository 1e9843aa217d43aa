package memory

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"
)

// Store is the in-memory ports.Store: the embedded default and the fast test
// backend. It keeps values, never pointers handed in by callers, and copies
// every value in and out.
//
// InTx runs one unit of work at a time: it buffers the unit's writes, lets
// the unit read its own writes, and applies them on commit (or drops them
// when fn fails). Ledger accounts created through the unit are passed to the
// LedgerStore at commit, before the business records are applied, so a
// refused ledger write rolls the whole unit back. InTx must not be nested:
// fn calling InTx on the same Store deadlocks.
type Store struct {
	writer sync.Mutex   // one writing unit of work at a time
	mu     sync.RWMutex // guards state
	state  storeState
	ledger ports.LedgerStore
	// eventSeq numbers recorded events (ports.Event.Seq).
	eventSeq atomic.Int64
}

var _ ports.Store = (*Store)(nil)

// errStoreReadOnly is returned by writes made through Read().
var errStoreReadOnly = errors.New("memory store: write outside InTx (Read() is read-only)")

// errStoreTxDone is returned by a Tx used after its InTx returned.
var errStoreTxDone = errors.New("memory store: transaction already finished")

type storeState struct {
	platforms   map[string]ports.Platform
	credentials map[string]ports.APICredential // by client id (the Basic user name)
	customers   map[string]ports.Customer
	accounts    map[string]ports.InternalAccount
	authMethods map[string]ports.AuthMethod
	authRevoked map[string]time.Time           // revoked auth methods (kept, no longer seen)
	sessions    map[string]ports.WalletSession // wallet_sessions.go
	secrets     map[string]ports.WalletSecret  // by account id (wallet_sessions.go)
	externals   map[string]ports.ExternalAccount
	txns        map[string]ports.Transaction
	// jobs holds queued jobs by id; jobKeys maps a non-empty Key to the id
	// of the queued job holding it (de-duplication).
	jobs    map[string]storeJob
	jobKeys map[string]string
	// due orders the jobs for Claim (jobs.go).
	due     storeDue
	lookups map[string]ports.Lookup // receiver lookups (lookup.go)
	quotes  map[string]ports.Quote  // quotes.go
	kyc     storeKYC                // owners, verifications, documents, events (kyc.go)
	// invitations by code (invitations.go)
	invitations map[string]ports.Invitation
	// agents by id, their device codes by hex code hash, their actions
	// by id (agents.go)
	agents       map[string]ports.Agent
	deviceCodes  map[string]storeDeviceCode
	agentActions map[string]ports.AgentAction
}

func newStoreState() storeState {
	return storeState{
		platforms:   map[string]ports.Platform{},
		credentials: map[string]ports.APICredential{},
		customers:   map[string]ports.Customer{},
		accounts:    map[string]ports.InternalAccount{},
		authMethods: map[string]ports.AuthMethod{},
		authRevoked: map[string]time.Time{},
		sessions:    map[string]ports.WalletSession{},
		secrets:     map[string]ports.WalletSecret{},
		externals:   map[string]ports.ExternalAccount{},
		txns:        map[string]ports.Transaction{},
		jobs:        map[string]storeJob{},
		jobKeys:     map[string]string{},
		due:         newStoreDue(),
		lookups:     map[string]ports.Lookup{},
		quotes:      map[string]ports.Quote{},
		kyc:         newStoreKYC(),
		invitations: map[string]ports.Invitation{},

		agents:       map[string]ports.Agent{},
		deviceCodes:  map[string]storeDeviceCode{},
		agentActions: map[string]ports.AgentAction{},
	}
}

// NewStore returns an empty store whose units of work create ledger
// accounts in ledger (which may be nil if no unit ever creates one).
func NewStore(ledger ports.LedgerStore) *Store {
	s := &Store{state: newStoreState(), ledger: ledger}
	if l, ok := ledger.(*Ledger); ok {
		// The ledger writes PostWith's records through this store.
		l.attach(s)
	}
	return s
}

// InTx runs fn as one unit of work; see Store.
func (s *Store) InTx(ctx context.Context, fn func(tx ports.Tx) error) error {
	s.writer.Lock()
	defer s.writer.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	tx := &storeTx{s: s, w: &storeWrites{state: newStoreState()}}
	defer func() {
		tx.mu.Lock()
		tx.done = true
		tx.mu.Unlock()
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return tx.commit(ctx)
}

// Read returns a view of the committed state; its writes fail.
func (s *Store) Read() ports.Tx { return &storeTx{s: s} }

// storeWrites is a unit of work's buffer.
type storeWrites struct {
	state  storeState
	ledger []ledger.Account
	// post, when set, records the ledger entry the unit's records go
	// with (Ledger.PostWith): run at commit, after the ledger accounts are
	// created and before the state is copied; a refusal fails the commit,
	// so the entry is posted if and only if the unit commits.
	post func() error
	// jobOps are job completions and retries made inside the unit, applied
	// to the committed queue at commit (in order).
	jobOps []func(*storeState)
}

// storeTx implements ports.Tx and every repository over the committed state
// plus, inside InTx, the unit's buffered writes (w).
type storeTx struct {
	s    *Store
	mu   sync.Mutex // guards w and done
	w    *storeWrites
	done bool
}

func (tx *storeTx) commit(ctx context.Context) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if len(tx.w.ledger) > 0 {
		if tx.s.ledger == nil {
			return errors.New("memory store: commit: no ledger store to create ledger accounts in")
		}
		if err := tx.s.ledger.CreateAccounts(ctx, tx.w.ledger...); err != nil {
			return fmt.Errorf("memory store: commit ledger accounts: %w", err)
		}
	}
	if tx.w.post != nil {
		if err := tx.w.post(); err != nil {
			return err
		}
	}
	tx.s.mu.Lock()
	defer tx.s.mu.Unlock()
	maps.Copy(tx.s.state.platforms, tx.w.state.platforms)
	maps.Copy(tx.s.state.credentials, tx.w.state.credentials)
	maps.Copy(tx.s.state.customers, tx.w.state.customers)
	maps.Copy(tx.s.state.accounts, tx.w.state.accounts)
	maps.Copy(tx.s.state.authMethods, tx.w.state.authMethods)
	maps.Copy(tx.s.state.authRevoked, tx.w.state.authRevoked)
	maps.Copy(tx.s.state.sessions, tx.w.state.sessions)
	maps.Copy(tx.s.state.secrets, tx.w.state.secrets)
	maps.Copy(tx.s.state.externals, tx.w.state.externals)
	maps.Copy(tx.s.state.txns, tx.w.state.txns)
	maps.Copy(tx.s.state.lookups, tx.w.state.lookups)
	maps.Copy(tx.s.state.quotes, tx.w.state.quotes)
	maps.Copy(tx.s.state.invitations, tx.w.state.invitations)
	maps.Copy(tx.s.state.agents, tx.w.state.agents)
	maps.Copy(tx.s.state.deviceCodes, tx.w.state.deviceCodes)
	maps.Copy(tx.s.state.agentActions, tx.w.state.agentActions)
	commitKYC(&tx.s.state.kyc, &tx.w.state.kyc)
	storeCommitJobs(&tx.s.state, &tx.w.state, tx.w.jobOps)
	return nil
}

// begin locks the tx and the committed state for a read (write=false) or a
// buffered write (write=true). The returned func undoes it.
func (tx *storeTx) begin(write bool) (func(), error) {
	tx.mu.Lock()
	if tx.done {
		tx.mu.Unlock()
		return nil, errStoreTxDone
	}
	if write && tx.w == nil {
		tx.mu.Unlock()
		return nil, errStoreReadOnly
	}
	tx.s.mu.RLock()
	return func() {
		tx.s.mu.RUnlock()
		tx.mu.Unlock()
	}, nil
}

// overlay returns the buffered map of a kind, or nil outside a unit of work.
func storeOverlay[V any](tx *storeTx, pick func(*storeState) map[string]V) map[string]V {
	if tx.w == nil {
		return nil
	}
	return pick(&tx.w.state)
}

// storeLookup finds id in the buffer, then in the committed state.
func storeLookup[V any](tx *storeTx, pick func(*storeState) map[string]V, id string) (V, bool) {
	if over := storeOverlay(tx, pick); over != nil {
		if v, ok := over[id]; ok {
			return v, true
		}
	}
	v, ok := pick(&tx.s.state)[id]
	return v, ok
}

// storeAll returns every value visible to tx that keep accepts.
func storeAll[V any](tx *storeTx, pick func(*storeState) map[string]V, keep func(V) bool) []V {
	over := storeOverlay(tx, pick)
	var out []V
	for id, v := range pick(&tx.s.state) {
		if o, ok := over[id]; ok {
			v = o
		}
		if keep(v) {
			out = append(out, v)
		}
	}
	for id, v := range over {
		if _, seen := pick(&tx.s.state)[id]; !seen && keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// storePage sorts rows by (CreatedAt, ID), and returns up to Limit+1 of
// them after page.After (all of them when Limit <= 0) with the total.
func storePage[V any](rows []V, key func(V) (time.Time, string), page ports.Page) ([]V, int) {
	slices.SortFunc(rows, func(a, b V) int {
		at, aid := key(a)
		bt, bid := key(b)
		if c := at.Compare(bt); c != 0 {
			return c
		}
		return cmp.Compare(aid, bid)
	})
	total := len(rows)
	if page.After != nil {
		after := ports.Stored(page.After.CreatedAt)
		i, _ := slices.BinarySearchFunc(rows, struct{}{}, func(v V, _ struct{}) int {
			t, id := key(v)
			if c := t.Compare(after); c != 0 {
				return c
			}
			if id <= page.After.ID {
				return -1
			}
			return 1
		})
		rows = rows[i:]
	}
	if page.Limit > 0 && len(rows) > page.Limit+1 {
		rows = rows[:page.Limit+1]
	}
	return rows, total
}

// storeListCopies is a List: the rows keep accepts, in key order (creation
// time, id), one page, each copied out by cp.
func storeListCopies[V any](tx *storeTx, pick func(*storeState) map[string]V, keep func(V) bool,
	key func(V) (time.Time, string), cp func(V) V, page ports.Page) ([]V, int, error) {
	done, err := tx.begin(false)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	rows, total := storePage(storeAll(tx, pick, keep), key, page)
	for i := range rows {
		rows[i] = cp(rows[i])
	}
	return rows, total, nil
}

// storeOwnerMatches applies a list's owner filter to a row owned by
// customerID: one customer's rows, the platform's own rows (no customer),
// or, with neither, every customer's rows.
func storeOwnerMatches(customerID, wantCustomer string, platformOnly bool) bool {
	switch {
	case wantCustomer != "":
		return customerID == wantCustomer
	case platformOnly:
		return customerID == ""
	default:
		return customerID != ""
	}
}

func storeConflict(constraint string) error {
	return &ports.ConflictError{Constraint: constraint}
}

func (tx *storeTx) Platforms() ports.PlatformRepo               { return storePlatforms{tx} }
func (tx *storeTx) Customers() ports.CustomerRepo               { return storeCustomers{tx} }
func (tx *storeTx) InternalAccounts() ports.InternalAccountRepo { return storeAccounts{tx} }
func (tx *storeTx) AuthMethods() ports.AuthMethodRepo           { return storeAuthMethods{tx} }
func (tx *storeTx) LedgerAccounts() ports.LedgerAccountCreator  { return storeLedgerAccounts{tx} }
func (tx *storeTx) ExternalAccounts() ports.ExternalAccountRepo { return storeExternals{tx} }
func (tx *storeTx) Parties() ports.PartyReader                  { return storeParties{tx} }
func (tx *storeTx) Transactions() ports.TransactionRepo         { return storeTxns{tx} }
func (tx *storeTx) Jobs() ports.JobQueue                        { return storeJobs{tx} }

func pickPlatforms(s *storeState) map[string]ports.Platform        { return s.platforms }
func pickCredentials(s *storeState) map[string]ports.APICredential { return s.credentials }
func pickCustomers(s *storeState) map[string]ports.Customer        { return s.customers }
func pickAccounts(s *storeState) map[string]ports.InternalAccount  { return s.accounts }
func pickAuthMethods(s *storeState) map[string]ports.AuthMethod    { return s.authMethods }
func pickAuthRevoked(s *storeState) map[string]time.Time           { return s.authRevoked }
func pickExternals(s *storeState) map[string]ports.ExternalAccount { return s.externals }
func pickTxns(s *storeState) map[string]ports.Transaction          { return s.txns }

// ---- platforms ----

type storePlatforms struct{ tx *storeTx }

func (r storePlatforms) Create(_ context.Context, p ports.Platform) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickPlatforms, p.ID); ok {
		return storeConflict("platforms_pkey")
	}
	r.tx.w.state.platforms[p.ID] = storeCopyPlatform(p)
	return nil
}

func (r storePlatforms) Get(_ context.Context, id string) (ports.Platform, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Platform{}, err
	}
	defer done()
	p, ok := storeLookup(r.tx, pickPlatforms, id)
	if !ok {
		return ports.Platform{}, fmt.Errorf("platform %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyPlatform(p), nil
}

// GetForUpdate is Get: a unit of work already excludes every other writer.
func (r storePlatforms) GetForUpdate(ctx context.Context, id string) (ports.Platform, error) {
	return r.Get(ctx, id)
}

func (r storePlatforms) Update(_ context.Context, p ports.Platform) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	old, ok := storeLookup(r.tx, pickPlatforms, p.ID)
	if !ok {
		return fmt.Errorf("platform %s: %w", p.ID, ports.ErrNotFound)
	}
	p.Name, p.CreatedAt = old.Name, old.CreatedAt
	r.tx.w.state.platforms[p.ID] = storeCopyPlatform(p)
	return nil
}

func (r storePlatforms) List(_ context.Context) ([]ports.Platform, error) {
	rows, _, err := storeListCopies(r.tx, pickPlatforms, func(ports.Platform) bool { return true },
		func(p ports.Platform) (time.Time, string) { return p.CreatedAt, p.ID }, storeCopyPlatform, ports.Page{})
	return rows, err
}

func (r storePlatforms) CreateCredential(_ context.Context, c ports.APICredential) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickCredentials, c.ClientID); ok {
		return storeConflict(ports.UniqueCredentialClientID)
	}
	r.tx.w.state.credentials[c.ClientID] = storeCopyCredential(c)
	return nil
}

func (r storePlatforms) CredentialByClientID(_ context.Context, clientID string) (ports.APICredential, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.APICredential{}, err
	}
	defer done()
	c, ok := storeLookup(r.tx, pickCredentials, clientID)
	if !ok {
		return ports.APICredential{}, fmt.Errorf("credential %s: %w", clientID, ports.ErrNotFound)
	}
	return storeCopyCredential(c), nil
}

// liveCredentials are the platform's live tokens that keep accepts.
func (r storePlatforms) liveCredentials(platformID string, keep func(ports.APICredential) bool) []ports.APICredential {
	return storeAll(r.tx, pickCredentials, func(c ports.APICredential) bool {
		return c.PlatformID == platformID && c.DeletedAt == nil && keep(c)
	})
}

func (r storePlatforms) Credential(_ context.Context, platformID, id string) (ports.APICredential, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.APICredential{}, err
	}
	defer done()
	found := r.liveCredentials(platformID, func(c ports.APICredential) bool { return c.ID == id })
	if len(found) == 0 {
		return ports.APICredential{}, fmt.Errorf("token %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyCredential(found[0]), nil
}

func (r storePlatforms) ListCredentials(_ context.Context, f ports.CredentialFilter, page ports.Page) ([]ports.APICredential, int, error) {
	return storeListCopies(r.tx, pickCredentials, func(c ports.APICredential) bool {
		return c.PlatformID == f.PlatformID && c.DeletedAt == nil && storeCredentialMatches(c, f)
	}, credentialKey, storeCopyCredential, page)
}

func storeCredentialMatches(c ports.APICredential, f ports.CredentialFilter) bool {
	return (f.Name == "" || c.Name == f.Name) &&
		storeInTimeBounds(c.CreatedAt, c.UpdatedAt, f.CreatedAfter, f.CreatedBefore, f.UpdatedAfter, f.UpdatedBefore)
}

// LiveCredentialsForUpdate needs no lock: units of work run one at a time.
func (r storePlatforms) LiveCredentialsForUpdate(_ context.Context, platformID string) ([]ports.APICredential, error) {
	done, err := r.tx.begin(true)
	if err != nil {
		return nil, err
	}
	defer done()
	rows, _ := storePage(r.liveCredentials(platformID, func(ports.APICredential) bool { return true }),
		credentialKey, ports.Page{})
	for i := range rows {
		rows[i] = storeCopyCredential(rows[i])
	}
	return rows, nil
}

func (r storePlatforms) DeleteCredential(_ context.Context, platformID, id string, at time.Time) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	found := r.liveCredentials(platformID, func(c ports.APICredential) bool { return c.ID == id })
	if len(found) == 0 {
		return fmt.Errorf("token %s: %w", id, ports.ErrNotFound)
	}
	c := storeCopyCredential(found[0])
	at = ports.Stored(at)
	c.UpdatedAt, c.DeletedAt = at, &at
	r.tx.w.state.credentials[c.ClientID] = c
	return nil
}

func credentialKey(c ports.APICredential) (time.Time, string) { return c.CreatedAt, c.ID }

// ---- customers ----

type storeCustomers struct{ tx *storeTx }

// checkUnique enforces the customer uniqueness rules against every other
// customer visible to the unit of work.
func (r storeCustomers) checkUnique(c ports.Customer) error {
	var err error
	storeAll(r.tx, pickCustomers, func(o ports.Customer) bool {
		if err != nil || o.ID == c.ID || o.PlatformID != c.PlatformID {
			return false
		}
		if c.UmaAddress != "" && o.UmaAddress == c.UmaAddress {
			err = storeConflict(ports.UniqueUmaAddress)
		} else if c.PlatformCustomerID != "" && !c.IsDeleted && !o.IsDeleted && o.PlatformCustomerID == c.PlatformCustomerID {
			err = storeConflict(ports.UniquePlatformCustomerID)
		}
		return false
	})
	return err
}

func (r storeCustomers) Create(_ context.Context, c ports.Customer) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickCustomers, c.ID); ok {
		return storeConflict("customers_pkey")
	}
	if err := r.checkUnique(c); err != nil {
		return err
	}
	r.tx.w.state.customers[c.ID] = storeCopyCustomer(c)
	return nil
}

func (r storeCustomers) get(platformID, id string) (ports.Customer, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Customer{}, err
	}
	defer done()
	c, ok := storeLookup(r.tx, pickCustomers, id)
	if !ok || c.PlatformID != platformID {
		return ports.Customer{}, fmt.Errorf("customer %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyCustomer(c), nil
}

func (r storeCustomers) Get(_ context.Context, platformID, id string) (ports.Customer, error) {
	return r.get(platformID, id)
}

// GetForUpdate is Get: a unit of work already excludes every other writer.
func (r storeCustomers) GetForUpdate(_ context.Context, platformID, id string) (ports.Customer, error) {
	return r.get(platformID, id)
}

func (r storeCustomers) Update(_ context.Context, c ports.Customer) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	old, ok := storeLookup(r.tx, pickCustomers, c.ID)
	if !ok || old.PlatformID != c.PlatformID {
		return fmt.Errorf("customer %s: %w", c.ID, ports.ErrNotFound)
	}
	if err := r.checkUnique(c); err != nil {
		return err
	}
	r.tx.w.state.customers[c.ID] = storeCopyCustomer(c)
	return nil
}

func (r storeCustomers) List(_ context.Context, f ports.CustomerFilter, page ports.Page) ([]ports.Customer, int, error) {
	return storeListCopies(r.tx, pickCustomers, func(c ports.Customer) bool { return storeCustomerMatches(c, f) },
		func(c ports.Customer) (time.Time, string) { return c.CreatedAt, c.ID }, storeCopyCustomer, page)
}

func storeCustomerMatches(c ports.Customer, f ports.CustomerFilter) bool {
	switch {
	case c.PlatformID != f.PlatformID,
		!f.IncludeDeleted && c.IsDeleted,
		f.PlatformCustomerID != "" && c.PlatformCustomerID != f.PlatformCustomerID,
		f.CustomerType != "" && c.CustomerType != f.CustomerType,
		f.Region != "" && c.Region != f.Region,
		f.UmaAddress != "" && c.UmaAddress != f.UmaAddress,
		f.Currency != "" && !slices.Contains(c.Currencies, f.Currency):
		return false
	}
	return storeInTimeBounds(c.CreatedAt, c.UpdatedAt, f.CreatedAfter, f.CreatedBefore, f.UpdatedAfter, f.UpdatedBefore)
}

// storeInTimeBounds applies a list's inclusive creation and update time
// bounds (nil: unbounded) to a row.
func storeInTimeBounds(created, updated time.Time, createdAfter, createdBefore, updatedAfter, updatedBefore *time.Time) bool {
	switch {
	case createdAfter != nil && created.Before(ports.Stored(*createdAfter)),
		createdBefore != nil && created.After(ports.Stored(*createdBefore)),
		updatedAfter != nil && updated.Before(ports.Stored(*updatedAfter)),
		updatedBefore != nil && updated.After(ports.Stored(*updatedBefore)):
		return false
	}
	return true
}

// ---- internal accounts ----

type storeAccounts struct{ tx *storeTx }

func (r storeAccounts) Create(_ context.Context, a ports.InternalAccount) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickAccounts, a.ID); ok {
		return storeConflict("internal_accounts_pkey")
	}
	r.tx.w.state.accounts[a.ID] = storeCopyAccount(a)
	return nil
}

func (r storeAccounts) Update(_ context.Context, a ports.InternalAccount) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	old, ok := storeLookup(r.tx, pickAccounts, a.ID)
	if !ok || old.PlatformID != a.PlatformID {
		return fmt.Errorf("internal account %s: %w", a.ID, ports.ErrNotFound)
	}
	old.Status, old.PrivateEnabled, old.UpdatedAt = a.Status, a.PrivateEnabled, a.UpdatedAt
	r.tx.w.state.accounts[a.ID] = storeCopyAccount(old)
	return nil
}

func (r storeAccounts) Get(_ context.Context, platformID, id string) (ports.InternalAccount, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.InternalAccount{}, err
	}
	defer done()
	a, ok := storeLookup(r.tx, pickAccounts, id)
	if !ok || a.PlatformID != platformID {
		return ports.InternalAccount{}, fmt.Errorf("internal account %s: %w", id, ports.ErrNotFound)
	}
	return a, nil
}

func (r storeAccounts) List(_ context.Context, f ports.InternalAccountFilter, page ports.Page) ([]ports.InternalAccount, int, error) {
	return storeListCopies(r.tx, pickAccounts, func(a ports.InternalAccount) bool {
		switch {
		case a.PlatformID != f.PlatformID,
			!storeOwnerMatches(a.CustomerID, f.CustomerID, f.PlatformOnly),
			f.Currency != "" && a.Currency != f.Currency,
			f.Type != "" && a.Type != f.Type:
			return false
		}
		return true
	}, func(a ports.InternalAccount) (time.Time, string) { return a.CreatedAt, a.ID }, storeCopyAccount, page)
}

// ---- auth methods ----

type storeAuthMethods struct{ tx *storeTx }

func (r storeAuthMethods) Create(_ context.Context, m ports.AuthMethod) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickAuthMethods, m.ID); ok {
		return storeConflict("auth_methods_pkey")
	}
	if err := r.checkUnique(m); err != nil {
		return err
	}
	r.tx.w.state.authMethods[m.ID] = storeCopyAuthMethod(m)
	return nil
}

// checkUnique allows one EMAIL_OTP per account, one PASSKEY per account
// and credential id, and one OAUTH per account and identity.
func (r storeAuthMethods) checkUnique(m ports.AuthMethod) error {
	rules := map[string]struct {
		constraint string
		same       func(o ports.AuthMethod) bool
	}{
		storeEmailOTP: {ports.UniqueEmailOTPPerAccount, func(ports.AuthMethod) bool { return true }},
		"PASSKEY":     {ports.UniquePasskeyPerAccount, func(o ports.AuthMethod) bool { return o.CredentialID == m.CredentialID }},
		"OAUTH": {ports.UniqueOAuthPerAccount, func(o ports.AuthMethod) bool {
			return o.Issuer == m.Issuer && o.Subject == m.Subject
		}},
	}
	rule, ok := rules[m.Type]
	if !ok {
		return nil
	}
	taken := storeAll(r.tx, pickAuthMethods, func(o ports.AuthMethod) bool {
		return o.ID != m.ID && o.Type == m.Type && o.AccountID == m.AccountID && !r.revoked(o.ID) && rule.same(o)
	})
	if len(taken) > 0 {
		return storeConflict(rule.constraint)
	}
	return nil
}

func (r storeAuthMethods) Update(_ context.Context, m ports.AuthMethod) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	old, ok := storeLookup(r.tx, pickAuthMethods, m.ID)
	if !ok || old.PlatformID != m.PlatformID || r.revoked(m.ID) {
		return fmt.Errorf("auth method %s: %w", m.ID, ports.ErrNotFound)
	}
	if err := r.checkUnique(m); err != nil {
		return err
	}
	m.SignCount = old.SignCount // moved by AdvanceSignCount only
	r.tx.w.state.authMethods[m.ID] = storeCopyAuthMethod(m)
	return nil
}

func (r storeAuthMethods) AdvanceSignCount(_ context.Context, platformID, id string, count uint32, at time.Time) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	m, ok := storeLookup(r.tx, pickAuthMethods, id)
	if !ok || m.PlatformID != platformID || r.revoked(id) {
		return fmt.Errorf("auth method %s: %w", id, ports.ErrNotFound)
	}
	if count <= m.SignCount && (count != 0 || m.SignCount != 0) {
		return storeConflict(ports.ConflictSignCount)
	}
	m.SignCount, m.UpdatedAt = count, at
	r.tx.w.state.authMethods[id] = storeCopyAuthMethod(m)
	return nil
}

// storeEmailOTP is the auth method type limited to one per account.
const storeEmailOTP = "EMAIL_OTP"

func (r storeAuthMethods) Get(_ context.Context, platformID, id string) (ports.AuthMethod, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.AuthMethod{}, err
	}
	defer done()
	m, ok := storeLookup(r.tx, pickAuthMethods, id)
	if !ok || m.PlatformID != platformID || r.revoked(id) {
		return ports.AuthMethod{}, fmt.Errorf("auth method %s: %w", id, ports.ErrNotFound)
	}
	return m, nil
}

// revoked reports whether the auth method id was revoked (tx's view).
func (r storeAuthMethods) revoked(id string) bool {
	_, gone := storeLookup(r.tx, pickAuthRevoked, id)
	return gone
}

func (r storeAuthMethods) Revoke(_ context.Context, platformID, id string, at time.Time) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	m, ok := storeLookup(r.tx, pickAuthMethods, id)
	if !ok || m.PlatformID != platformID || r.revoked(id) {
		return fmt.Errorf("auth method %s: %w", id, ports.ErrNotFound)
	}
	r.tx.w.state.authRevoked[id] = ports.Stored(at)
	return nil
}

func (r storeAuthMethods) ListByAccount(_ context.Context, platformID, accountID string) ([]ports.AuthMethod, error) {
	rows, _, err := storeListCopies(r.tx, pickAuthMethods, func(m ports.AuthMethod) bool {
		return m.PlatformID == platformID && m.AccountID == accountID && !r.revoked(m.ID)
	}, func(m ports.AuthMethod) (time.Time, string) { return m.CreatedAt, m.ID }, storeCopyAuthMethod, ports.Page{})
	return rows, err
}

// ---- ledger accounts ----

type storeLedgerAccounts struct{ tx *storeTx }

// Create buffers the accounts; they are created in the LedgerStore at commit.
func (r storeLedgerAccounts) Create(_ context.Context, accts ...ledger.Account) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if r.tx.s.ledger == nil {
		return errors.New("memory store: no ledger store to create ledger accounts in")
	}
	for _, a := range accts {
		a.CreatedAt = ports.Stored(a.CreatedAt)
		r.tx.w.ledger = append(r.tx.w.ledger, a)
	}
	return nil
}

// ---- copies: values in, values out, times in UTC to the microsecond ----

func storeCopyPlatform(p ports.Platform) ports.Platform {
	p.Currencies = slices.Clone(p.Currencies)
	if p.CurrencySettings != nil {
		settings := make([]ports.CurrencySetting, len(p.CurrencySettings))
		for i, c := range p.CurrencySettings {
			c.RequiredCounterpartyFields = slices.Clone(c.RequiredCounterpartyFields)
			c.EnabledTransactionTypes = slices.Clone(c.EnabledTransactionTypes)
			settings[i] = c
		}
		p.CurrencySettings = settings
	}
	p.CreatedAt = ports.Stored(p.CreatedAt)
	p.UpdatedAt = ports.Stored(p.UpdatedAt)
	return p
}

func storeCopyCredential(c ports.APICredential) ports.APICredential {
	c.SecretHash = slices.Clone(c.SecretHash)
	c.Permissions = slices.Clone(c.Permissions)
	c.CreatedAt = ports.Stored(c.CreatedAt)
	c.UpdatedAt = ports.Stored(c.UpdatedAt)
	if c.DeletedAt != nil {
		d := ports.Stored(*c.DeletedAt)
		c.DeletedAt = &d
	}
	return c
}

func storeCopyCustomer(c ports.Customer) ports.Customer {
	c.Currencies = slices.Clone(c.Currencies)
	if c.Address != nil {
		a := *c.Address
		c.Address = &a
	}
	if c.EndUserTermsConsent != nil {
		e := *c.EndUserTermsConsent
		e.AcceptedAt = ports.Stored(e.AcceptedAt)
		c.EndUserTermsConsent = &e
	}
	if c.Individual != nil {
		in := *c.Individual
		in.SourceOfFundsCategories = slices.Clone(in.SourceOfFundsCategories)
		in.SourceOfWealthCategories = slices.Clone(in.SourceOfWealthCategories)
		c.Individual = &in
	}
	if c.Business != nil {
		b := *c.Business
		b.CountriesOfOperation = slices.Clone(b.CountriesOfOperation)
		b.ExpectedRecipientJurisdictions = slices.Clone(b.ExpectedRecipientJurisdictions)
		b.SourceOfFundsCategories = slices.Clone(b.SourceOfFundsCategories)
		b.ExpectedCounterpartyCountries = slices.Clone(b.ExpectedCounterpartyCountries)
		c.Business = &b
	}
	c.CreatedAt = ports.Stored(c.CreatedAt)
	c.UpdatedAt = ports.Stored(c.UpdatedAt)
	return c
}

func storeCopyAccount(a ports.InternalAccount) ports.InternalAccount {
	a.CreatedAt = ports.Stored(a.CreatedAt)
	a.UpdatedAt = ports.Stored(a.UpdatedAt)
	return a
}

func storeCopyAuthMethod(m ports.AuthMethod) ports.AuthMethod {
	m.Passkey = bytes.Clone(m.Passkey)
	m.CreatedAt = ports.Stored(m.CreatedAt)
	m.UpdatedAt = ports.Stored(m.UpdatedAt)
	return m
}

// storeParties reads the parties through each repository (memory reads
// cost no round trip).
type storeParties struct{ tx *storeTx }

func (r storeParties) Get(ctx context.Context, platformID, internalID, externalID string, sessionsAt time.Time) (ports.Parties, error) {
	var p ports.Parties
	var err error
	absent := func(err error) bool { return errors.Is(err, ports.ErrNotFound) }
	if p.Internal, err = r.tx.InternalAccounts().Get(ctx, platformID, internalID); err != nil && !absent(err) {
		return ports.Parties{}, err
	}
	if p.External, err = r.tx.ExternalAccounts().Get(ctx, platformID, externalID); err != nil && !absent(err) {
		return ports.Parties{}, err
	}
	if p.Internal.CustomerID != "" {
		if p.Customer, err = r.tx.Customers().Get(ctx, platformID, p.Internal.CustomerID); err != nil && !absent(err) {
			return ports.Parties{}, err
		}
	}
	if p.Internal.ID != "" {
		pl, err := r.tx.Platforms().Get(ctx, platformID)
		if err != nil && !absent(err) {
			return ports.Parties{}, err
		}
		for _, c := range pl.CurrencySettings {
			if c.Code == p.Internal.Currency {
				p.Currency = c
			}
		}
	}
	if p.Internal.Type == storeEmbeddedWallet && !sessionsAt.IsZero() {
		if p.Sessions, err = r.tx.WalletSessions().Active(ctx, platformID, internalID, sessionsAt); err != nil {
			return ports.Parties{}, err
		}
	}
	return p, nil
}

func (r storeParties) OfQuote(ctx context.Context, platformID, quoteID string, sessionsAt time.Time) (ports.Quote, ports.Parties, error) {
	q, err := r.tx.Quotes().Get(ctx, platformID, quoteID)
	if err != nil {
		return ports.Quote{}, ports.Parties{}, err
	}
	p, err := r.Get(ctx, platformID, q.SourceAccountID, q.DestinationAccountID, sessionsAt)
	if err != nil {
		return ports.Quote{}, ports.Parties{}, err
	}
	return q, p, nil
}

// storeEmbeddedWallet is the account type whose parties carry sessions.
const storeEmbeddedWallet = "EMBEDDED_WALLET"
