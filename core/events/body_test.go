package events

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
)

// encodedEnvelope is the envelope as the JSON encoder writes it (HTML
// characters left as they are), the rendered data in it: what Body sends.
func encodedEnvelope(t *testing.T, env Envelope) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(env))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Body puts the rendered data into the envelope as it is; the bytes are
// those of the encoded Envelope, for data with escaped and unescaped HTML
// characters, non-ASCII text and nesting, and for TEST (no data).
func TestBodyIsTheEncodedEnvelope(t *testing.T) {
	clock := testkit.NewFakeClock(time.Date(2026, 11, 27, 6, 40, 1, 123456789, time.UTC))
	for name, data := range map[string]string{
		"escaped HTML":  `{"description":"a \u003cb\u003e \u0026 c","amount":{"amount":100,"currency":{"code":"USD"}}}`,
		"plain HTML":    `{"description":"<b> & c","nested":[1,{"x":null}],"ok":true}`,
		"non-ASCII":     `{"fullName":"Zoë Ågren 李","note":"\u2028"}`,
		"empty object":  `{}`,
		"scalar string": `"x"`,
	} {
		t.Run(name, func(t *testing.T) {
			d := NewDeliverer(nil, clock, nil, nil, fixedRenderer(data), nil, nil)
			e := ports.Event{ID: "Webhook:0b7c5a4e-1f0e-4a55-9f39-7d0c4c2f7a10", Type: "OUTGOING_PAYMENT.PENDING", ResourceID: "Transaction:x"}
			got, err := d.Body(context.Background(), e)
			require.NoError(t, err)
			want := encodedEnvelope(t, Envelope{ID: e.ID, Type: e.Type, Timestamp: clock.Now().UTC(), Data: json.RawMessage(data)})
			assert.Equal(t, string(want), string(got))
			assert.True(t, json.Valid(got))
		})
	}
	d := NewDeliverer(nil, clock, nil, nil, fixedRenderer(`{"never":"rendered"}`), nil, nil)
	got, err := d.Body(context.Background(), ports.Event{ID: "Webhook:t", Type: TypeTest})
	require.NoError(t, err)
	assert.Equal(t, string(encodedEnvelope(t, Envelope{ID: "Webhook:t", Type: TypeTest, Timestamp: clock.Now().UTC()})), string(got))
	assert.NotContains(t, string(got), "data")
}

// fixedRenderer renders every event as its own JSON text.
type fixedRenderer string

func (r fixedRenderer) Render(context.Context, ports.Event) (json.RawMessage, error) {
	return json.RawMessage(r), nil
}
