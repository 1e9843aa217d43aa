package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/corridorpay/corridor/ports"
)

// ---- KYC: beneficial owners, verifications, documents, events ----

// storeKYC is the KYC part of storeState (kept in its own struct so the
// shared state lists one line for it).
type storeKYC struct {
	owners        map[string]ports.BeneficialOwner
	verifications map[string]ports.Verification
	// documents keeps a deleted document as a tombstone (deleted set), so
	// a unit of work's delete overrides the committed row at commit.
	documents map[string]storeDocument
	events    map[string]ports.Event
	attempts  map[string][]ports.EventAttempt // by event id
	// byResource lists, in the committed state only, the ids of each
	// resource's events (key eventResourceKey) in the order they were
	// recorded: delivery asks for one resource's pending events with every
	// batch, and a scan of every event made that grow with the store.
	byResource map[string][]string
	// pending holds, in the committed state only, each resource's PENDING
	// events (id → seq): what PendingHeads asks, without walking an
	// account's every balance event.
	pending map[string]map[string]int64
}

type storeDocument struct {
	doc     ports.Document
	deleted bool
}

func newStoreKYC() storeKYC {
	return storeKYC{
		owners:        map[string]ports.BeneficialOwner{},
		verifications: map[string]ports.Verification{},
		documents:     map[string]storeDocument{},
		events:        map[string]ports.Event{},
		attempts:      map[string][]ports.EventAttempt{},
		byResource:    map[string][]string{},
		pending:       map[string]map[string]int64{},
	}
}

// commitKYC applies a unit's buffered KYC writes to the committed state.
func commitKYC(to, from *storeKYC) {
	maps.Copy(to.owners, from.owners)
	maps.Copy(to.verifications, from.verifications)
	maps.Copy(to.documents, from.documents)
	var added []ports.Event
	for id, e := range from.events {
		if _, ok := to.events[id]; !ok {
			added = append(added, e)
		}
	}
	slices.SortFunc(added, func(a, b ports.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, e := range added {
		k := eventResourceKey(e.PlatformID, e.ResourceID)
		to.byResource[k] = append(to.byResource[k], e.ID)
	}
	for id, e := range from.events {
		k := eventResourceKey(e.PlatformID, e.ResourceID)
		switch set := to.pending[k]; {
		case e.Status == ports.EventPending && set == nil:
			to.pending[k] = map[string]int64{id: e.Seq}
		case e.Status == ports.EventPending:
			set[id] = e.Seq
		case set != nil:
			delete(set, id)
			if len(set) == 0 {
				delete(to.pending, k)
			}
		}
	}
	maps.Copy(to.events, from.events)
	maps.Copy(to.attempts, from.attempts)
}

func (tx *storeTx) BeneficialOwners() ports.BeneficialOwnerRepo { return storeOwners{tx} }
func (tx *storeTx) Verifications() ports.VerificationRepo       { return storeVerifications{tx} }
func (tx *storeTx) Documents() ports.DocumentRepo               { return storeDocuments{tx} }
func (tx *storeTx) Events() ports.EventRepo                     { return storeEvents{tx} }

func pickOwners(s *storeState) map[string]ports.BeneficialOwner { return s.kyc.owners }
func pickVerifications(s *storeState) map[string]ports.Verification {
	return s.kyc.verifications
}
func pickDocuments(s *storeState) map[string]storeDocument { return s.kyc.documents }
func pickEvents(s *storeState) map[string]ports.Event      { return s.kyc.events }
func pickAttempts(s *storeState) map[string][]ports.EventAttempt {
	return s.kyc.attempts
}

// ---- beneficial owners ----

type storeOwners struct{ tx *storeTx }

func (r storeOwners) Create(_ context.Context, o ports.BeneficialOwner) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickOwners, o.ID); ok {
		return storeConflict("beneficial_owners_pkey")
	}
	r.tx.w.state.kyc.owners[o.ID] = storeCopyOwner(o)
	return nil
}

func (r storeOwners) Get(_ context.Context, platformID, id string) (ports.BeneficialOwner, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.BeneficialOwner{}, err
	}
	defer done()
	o, ok := storeLookup(r.tx, pickOwners, id)
	if !ok || o.PlatformID != platformID {
		return ports.BeneficialOwner{}, fmt.Errorf("beneficial owner %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyOwner(o), nil
}

// Update stores o's mutable fields; id, platform, customer and creation
// time are fixed at Create (as in the PostgreSQL store).
func (r storeOwners) Update(_ context.Context, o ports.BeneficialOwner) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	old, ok := storeLookup(r.tx, pickOwners, o.ID)
	if !ok || old.PlatformID != o.PlatformID {
		return fmt.Errorf("beneficial owner %s: %w", o.ID, ports.ErrNotFound)
	}
	o.CustomerID, o.CreatedAt = old.CustomerID, old.CreatedAt
	r.tx.w.state.kyc.owners[o.ID] = storeCopyOwner(o)
	return nil
}

func (r storeOwners) List(_ context.Context, f ports.BeneficialOwnerFilter, page ports.Page) ([]ports.BeneficialOwner, int, error) {
	return storeListCopies(r.tx, pickOwners, func(o ports.BeneficialOwner) bool {
		return o.PlatformID == f.PlatformID && (f.CustomerID == "" || o.CustomerID == f.CustomerID) &&
			(len(f.CustomerIDs) == 0 || slices.Contains(f.CustomerIDs, o.CustomerID))
	}, func(o ports.BeneficialOwner) (time.Time, string) { return o.CreatedAt, o.ID }, storeCopyOwner, page)
}

func storeCopyOwner(o ports.BeneficialOwner) ports.BeneficialOwner {
	o.Roles = slices.Clone(o.Roles)
	if o.PersonalInfo.Address != nil {
		a := *o.PersonalInfo.Address
		o.PersonalInfo.Address = &a
	}
	o.CreatedAt = ports.Stored(o.CreatedAt)
	o.UpdatedAt = ports.Stored(o.UpdatedAt)
	return o
}

// ---- verifications ----

type storeVerifications struct{ tx *storeTx }

func (r storeVerifications) Create(_ context.Context, v ports.Verification) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickVerifications, v.ID); ok {
		return storeConflict("verifications_pkey")
	}
	r.tx.w.state.kyc.verifications[v.ID] = storeCopyVerification(v)
	return nil
}

func (r storeVerifications) Get(_ context.Context, platformID, id string) (ports.Verification, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Verification{}, err
	}
	defer done()
	v, ok := storeLookup(r.tx, pickVerifications, id)
	if !ok || v.PlatformID != platformID {
		return ports.Verification{}, fmt.Errorf("verification %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyVerification(v), nil
}

func (r storeVerifications) Latest(_ context.Context, platformID, customerID string) (ports.Verification, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Verification{}, err
	}
	defer done()
	rows := storeAll(r.tx, pickVerifications, func(v ports.Verification) bool {
		return v.PlatformID == platformID && v.CustomerID == customerID
	})
	if len(rows) == 0 {
		return ports.Verification{}, fmt.Errorf("verification of %s: %w", customerID, ports.ErrNotFound)
	}
	rows, _ = storePage(rows, func(v ports.Verification) (time.Time, string) { return v.CreatedAt, v.ID }, ports.Page{})
	return storeCopyVerification(rows[len(rows)-1]), nil
}

// Update stores v's mutable fields (status, errors, submission and update
// times).
func (r storeVerifications) Update(_ context.Context, v ports.Verification) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	old, ok := storeLookup(r.tx, pickVerifications, v.ID)
	if !ok || old.PlatformID != v.PlatformID {
		return fmt.Errorf("verification %s: %w", v.ID, ports.ErrNotFound)
	}
	v.CustomerID, v.CreatedAt = old.CustomerID, old.CreatedAt
	r.tx.w.state.kyc.verifications[v.ID] = storeCopyVerification(v)
	return nil
}

func (r storeVerifications) List(_ context.Context, f ports.VerificationFilter, page ports.Page) ([]ports.Verification, int, error) {
	return storeListCopies(r.tx, pickVerifications, func(v ports.Verification) bool {
		switch {
		case v.PlatformID != f.PlatformID,
			f.CustomerID != "" && v.CustomerID != f.CustomerID,
			f.Status != "" && v.Status != f.Status:
			return false
		}
		return true
	}, func(v ports.Verification) (time.Time, string) { return v.CreatedAt, v.ID }, storeCopyVerification, page)
}

func storeCopyVerification(v ports.Verification) ports.Verification {
	errs := make([]ports.VerificationError, len(v.Errors))
	for i, e := range v.Errors {
		e.AcceptedDocumentTypes = slices.Clone(e.AcceptedDocumentTypes)
		errs[i] = e
	}
	v.Errors = errs
	if v.SubmittedAt != nil {
		t := ports.Stored(*v.SubmittedAt)
		v.SubmittedAt = &t
	}
	v.CreatedAt = ports.Stored(v.CreatedAt)
	v.UpdatedAt = ports.Stored(v.UpdatedAt)
	return v
}

// ---- documents ----

type storeDocuments struct{ tx *storeTx }

// live finds a document that is not deleted.
func (r storeDocuments) live(platformID, id string) (ports.Document, bool) {
	d, ok := storeLookup(r.tx, pickDocuments, id)
	if !ok || d.deleted || d.doc.PlatformID != platformID {
		return ports.Document{}, false
	}
	return d.doc, true
}

func (r storeDocuments) Create(_ context.Context, d ports.Document) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := storeLookup(r.tx, pickDocuments, d.ID); ok {
		return storeConflict("documents_pkey")
	}
	r.tx.w.state.kyc.documents[d.ID] = storeDocument{doc: storeCopyDocument(d, true)}
	return nil
}

func (r storeDocuments) Get(_ context.Context, platformID, id string) (ports.Document, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return ports.Document{}, err
	}
	defer done()
	d, ok := r.live(platformID, id)
	if !ok {
		return ports.Document{}, fmt.Errorf("document %s: %w", id, ports.ErrNotFound)
	}
	return storeCopyDocument(d, false), nil
}

func (r storeDocuments) Content(_ context.Context, platformID, id string) ([]byte, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return nil, err
	}
	defer done()
	d, ok := r.live(platformID, id)
	if !ok {
		return nil, fmt.Errorf("document %s: %w", id, ports.ErrNotFound)
	}
	return slices.Clone(d.Content), nil
}

// Update replaces the metadata, and the content (with its size, type and
// checksum) when d.Content is not nil. Holder, customer and creation time
// are fixed at Create.
func (r storeDocuments) Update(_ context.Context, d ports.Document) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	old, ok := r.live(d.PlatformID, d.ID)
	if !ok {
		return fmt.Errorf("document %s: %w", d.ID, ports.ErrNotFound)
	}
	d.HolderID, d.CustomerID, d.CreatedAt = old.HolderID, old.CustomerID, old.CreatedAt
	if d.Content == nil {
		d.Content, d.ContentType, d.Size, d.SHA256 = old.Content, old.ContentType, old.Size, old.SHA256
	}
	r.tx.w.state.kyc.documents[d.ID] = storeDocument{doc: storeCopyDocument(d, true)}
	return nil
}

func (r storeDocuments) MarkSubmitted(_ context.Context, platformID, customerID string, at time.Time) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	rows := storeAll(r.tx, pickDocuments, func(d storeDocument) bool {
		return !d.deleted && !d.doc.Submitted && d.doc.PlatformID == platformID && d.doc.CustomerID == customerID
	})
	for _, d := range rows {
		d.doc.Submitted, d.doc.UpdatedAt = true, ports.Stored(at)
		r.tx.w.state.kyc.documents[d.doc.ID] = d
	}
	return nil
}

func (r storeDocuments) Delete(_ context.Context, platformID, id string) error {
	done, err := r.tx.begin(true)
	if err != nil {
		return err
	}
	defer done()
	d, ok := r.live(platformID, id)
	if !ok {
		return fmt.Errorf("document %s: %w", id, ports.ErrNotFound)
	}
	r.tx.w.state.kyc.documents[id] = storeDocument{doc: ports.Document{ID: d.ID, PlatformID: d.PlatformID}, deleted: true}
	return nil
}

func (r storeDocuments) List(_ context.Context, f ports.DocumentFilter, page ports.Page) ([]ports.Document, int, error) {
	done, err := r.tx.begin(false)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	kept := storeAll(r.tx, pickDocuments, func(d storeDocument) bool {
		switch {
		case d.deleted, d.doc.PlatformID != f.PlatformID,
			f.HolderID != "" && d.doc.HolderID != f.HolderID,
			f.CustomerID != "" && d.doc.CustomerID != f.CustomerID:
			return false
		}
		return true
	})
	rows := make([]ports.Document, len(kept))
	for i, d := range kept {
		rows[i] = d.doc
	}
	rows, total := storePage(rows, func(d ports.Document) (time.Time, string) { return d.CreatedAt, d.ID }, page)
	for i := range rows {
		rows[i] = storeCopyDocument(rows[i], false)
	}
	return rows, total, nil
}

// storeCopyDocument copies d, with its content or (withContent false)
// without, as Get and List return it.
func storeCopyDocument(d ports.Document, withContent bool) ports.Document {
	if withContent {
		d.Content = slices.Clone(d.Content)
	} else {
		d.Content = nil
	}
	d.CreatedAt = ports.Stored(d.CreatedAt)
	d.UpdatedAt = ports.Stored(d.UpdatedAt)
	return d
}

// ---- events (outbox) ----
