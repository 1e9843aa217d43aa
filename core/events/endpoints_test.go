package events

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/coretest"
)

// changeEndpoint sets the platform's endpoint as PATCH /config does.
func (e *env) changeEndpoint(url string) {
	e.t.Helper()
	e.storeEndpoint(url, true)
}

// endpointJobs runs the due KindEndpointSet jobs on a runner of their
// own (another instance, or this one after a restart), and says how many
// ran.
func (e *env) endpointJobs() int {
	e.t.Helper()
	r := jobs.NewRunner(e.b.Store.Read().Jobs(), e.b.Clock, coretest.QuietLog(),
		jobs.WithKinds(ports.JobKinds{Only: []string{KindEndpointSet}}))
	e.svc.Register(r)
	n, err := r.RunAll(context.Background(), 10)
	require.NoError(e.t, err)
	return n
}

// tests lists the platform's TEST events.
func (e *env) tests() []ports.Event {
	e.t.Helper()
	p, err := e.svc.List(context.Background(), ports.EventFilter{PlatformID: e.pid, Type: TypeTest}, ports.Page{})
	require.NoError(e.t, err)
	return p.Rows
}

// A new endpoint's backlog and TEST event are a job queued in the unit of
// work that sets it: nothing is lost if the process stops right after the
// change, and nothing is sent before the job runs.
func TestEndpointSetIsAJobOfTheChange(t *testing.T) {
	onStores(t, "", true, func(t *testing.T, e *env) {
		e.setEndpoint("")
		a := e.record("CUSTOMER.KYC_APPROVED", "Customer:1")
		b := e.record("CUSTOMER.KYB_APPROVED", "Customer:2")
		e.run()
		assert.Zero(t, e.recv.answers, "no endpoint: the events wait")

		// The change commits; the process "stops" before any job runs.
		e.changeEndpoint("https://hooks.example/new")
		e.run()
		assert.Zero(t, e.recv.answers, "the backlog is the job's, not the request's")
		assert.Empty(t, e.tests())

		// Another instance, or this one restarted, runs the job.
		assert.Equal(t, 1, e.endpointJobs())
		e.run()
		require.Len(t, e.tests(), 1, "one TEST event")
		var types []string
		for _, got := range e.recv.got {
			types = append(types, got.Type)
		}
		assert.ElementsMatch(t, []string{"CUSTOMER.KYC_APPROVED", "CUSTOMER.KYB_APPROVED", TypeTest}, types)
		for _, id := range []string{a.ID, b.ID} {
			stored, _ := e.event(id)
			assert.Equal(t, ports.EventDelivered, stored.Status, id)
		}
		assert.Zero(t, e.endpointJobs(), "the job ended with its work")
	})
}

// A job whose endpoint is no longer the platform's does nothing: the
// newer endpoint's own job sends its TEST event and the backlog, and an
// endpoint removed since (a 410) waits for the next one.
func TestEndpointSetJobOfAnOlderEndpoint(t *testing.T) {
	onStores(t, "", true, func(t *testing.T, e *env) {
		e.setEndpoint("")
		a := e.record("CUSTOMER.KYC_APPROVED", "Customer:1")
		e.changeEndpoint("https://hooks.example/first")
		e.changeEndpoint("https://hooks.example/second")
		assert.Equal(t, 2, e.endpointJobs())
		e.run()
		require.Len(t, e.tests(), 1, "the TEST event of the second endpoint only")
		stored, _ := e.event(a.ID)
		assert.Equal(t, ports.EventDelivered, stored.Status)

		b := e.record("CUSTOMER.KYB_APPROVED", "Customer:2")
		e.setEndpoint("")
		e.changeEndpoint("https://hooks.example/third")
		e.setEndpoint("") // a 410 before the job ran
		assert.Equal(t, 1, e.endpointJobs())
		e.run()
		assert.Len(t, e.tests(), 1, "no TEST event for an endpoint that is gone")
		stored, _ = e.event(b.ID)
		assert.Equal(t, ports.EventPending, stored.Status, "it waits for the next endpoint")
	})
}
