package apischema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

// webhook is one of the reference's webhooks: its name (the key under
// `webhooks:`) and the schema of the body it is sent.
type webhook struct {
	name   string
	schema *base.Schema
}

// SpecStatuses are statuses the spec gives a resource where the
// reference's enum for that webhook's data lacks them (the spec is the
// contract, GAPS §13): a body whose only violation is data.status, with
// one of these values, conforms.
var SpecStatuses = map[string]string{
	"REFUNDED": "spec: a transaction's statuses include REFUNDED; the reference's outgoing set has six (GAPS §13)",
	"REJECTED": "spec: a transaction's statuses include REJECTED; the reference's outgoing set has six (GAPS §13)",
}

// webhookSchemas maps every type a reference webhook's body lists (its
// `type` enum, in the allOf beside the envelope) to that webhook.
func webhookSchemas(hooks *orderedmap.Map[string, *v3.PathItem]) (map[string]webhook, error) {
	out := map[string]webhook{}
	for name, item := range hooks.FromOldest() {
		if item.Post == nil || item.Post.RequestBody == nil {
			continue
		}
		media, ok := item.Post.RequestBody.Content.Get("application/json")
		if !ok || media.Schema == nil {
			continue
		}
		schema, err := media.Schema.BuildSchema()
		if err != nil {
			return nil, fmt.Errorf("webhook %s: %w", name, err)
		}
		for _, typ := range enumOfType(schema) {
			if prev, dup := out[typ]; dup {
				return nil, fmt.Errorf("type %s is in webhooks %s and %s", typ, prev.name, name)
			}
			out[typ] = webhook{name: name, schema: schema}
		}
	}
	return out, nil
}

// enumOfType is the `type` property's enum of a webhook body schema (on
// it or in one of its allOf parts).
func enumOfType(s *base.Schema) []string {
	var out []string
	parts := []*base.Schema{s}
	for _, p := range s.AllOf {
		if ps, err := p.BuildSchema(); err == nil {
			parts = append(parts, ps)
		}
	}
	for _, p := range parts {
		if p.Properties == nil {
			continue
		}
		prop, ok := p.Properties.Get("type")
		if !ok {
			continue
		}
		ts, err := prop.BuildSchema()
		if err != nil {
			continue
		}
		for _, n := range ts.Enum {
			out = append(out, n.Value)
		}
	}
	return out
}

// HasWebhook reports whether a reference webhook carries events of type
// typ, and names it.
func (c *Checker) HasWebhook(typ string) (string, bool) {
	w, ok := c.webhooks[typ]
	return w.name, ok
}

// CheckWebhook validates a webhook body the service sent against the
// reference's webhook for its type (the envelope and the data) and
// returns the violations, each a line; a type no reference webhook lists
// is one.
func (c *Checker) CheckWebhook(body []byte) []string {
	if c == nil {
		return nil
	}
	var env struct {
		Type string `json:"type"`
		Data struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return []string{fmt.Sprintf("webhook body is not a JSON envelope: %v", err)}
	}
	w, ok := c.webhooks[env.Type]
	if !ok {
		return []string{fmt.Sprintf("webhook type %q is in no webhook of the reference", env.Type)}
	}
	specStatus := SpecStatuses[env.Data.Status] != ""
	return validateBody(fmt.Sprintf("webhook %s (%s)", env.Type, w.name), w.schema, body, func(path string) bool {
		return specStatus && strings.HasSuffix(path, "data.status")
	})
}

// VerifyWebhook fails t when a webhook body does not match the reference's
// webhook for its type, or no reference webhook has its type.
func VerifyWebhook(t testing.TB, body []byte) {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatalf("apischema: %v", err)
	}
	for _, v := range c.CheckWebhook(body) {
		t.Errorf("webhook does not match the reference: %s", v)
	}
}
