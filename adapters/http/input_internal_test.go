package httpapi

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScanJSONFindsBadText(t *testing.T) {
	for _, c := range []struct {
		name, body, field, msg string
	}{
		{"NUL escape in a value", `{"customerId":"\u0000"}`, "customerId", msgNUL},
		{"raw NUL in a value", "{\"customerId\":\"a\x00b\"}", "customerId", msgNUL},
		{"nested value", `{"destination":{"accountId":"x\u0000"}}`, "destination.accountId", msgNUL},
		{"array element", `{"roles":["UBO","\u0000"]}`, "roles[1]", msgNUL},
		{"object in array", `{"a":[{"b":1},{"c":"\u0000"}]}`, "a[1].c", msgNUL},
		{"nested arrays", `{"a":[[],["x","\u0000"]]}`, "a[1][1]", msgNUL},
		{"number beyond float64", `{"fullName":1e400}`, "fullName", msgRange},
		{"negative number beyond float64", `{"a":{"b":[1,-2E+999]}}`, "a.b[1]", msgRange},
		{"400 digits", `{"amount":` + strings.Repeat("9", 400) + `}`, "amount", msgRange},
		{"root string", `"\u0000"`, "body", msgNUL},
		{"root array", `["ok","\u0000"]`, "[1]", msgNUL},
		{"invalid UTF-8 byte", "{\"fullName\":\"Ab\xff\xfeCd\"}", "fullName", msgUTF8},
		{"truncated UTF-8 sequence", "{\"fullName\":\"Ab\xc3\"}", "fullName", msgUTF8},
		{"UTF-8 encoded surrogate", "{\"fullName\":\"\xed\xa0\x80\"}", "fullName", msgUTF8},
		{"overlong encoding", "{\"fullName\":\"\xc0\xaf\"}", "fullName", msgUTF8},
		{"lone high surrogate", `{"fullName":"Ab\ud800Cd"}`, "fullName", msgSurrogate},
		{"lone low surrogate", `{"fullName":"\udc00"}`, "fullName", msgSurrogate},
		{"high surrogate then another high", `{"fullName":"\ud800\ud800"}`, "fullName", msgSurrogate},
		{"high surrogate at end", `{"fullName":"\uD83D"}`, "fullName", msgSurrogate},
		{"NUL in a key", `{"a\u0000b":1}`, `a\u0000b`, msgNUL},
		{"invalid UTF-8 in a nested key", "{\"x\":{\"k\xff\":1}}", "x.k\uFFFD", msgUTF8},
		{"duplicate key", `{"amount":100,"amount":90000}`, "amount", msgDuplicate},
		{"duplicate nested key", `{"a":{"b":1,"c":2,"b":3}}`, "a.b", msgDuplicate},
		{"duplicate key in array element", `{"a":[{"k":1},{"k":1,"k":2}]}`, "a[1].k", msgDuplicate},
		{"duplicate key spelled with an escape", `{"amount":1,"\u0061mount":2}`, "amount", msgDuplicate},
		{"duplicate key among many", manyKeysBody(40, "k07"), "k07", msgDuplicate},
		{"too deep", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), strings.TrimSuffix(strings.Repeat("a.", 64), "."), msgDepth},
		{"too deep arrays", strings.Repeat("[", 70) + strings.Repeat("]", 70), strings.Repeat("[0]", 64), msgDepth},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := scanJSON([]byte(c.body))
			require.NotNil(t, f, c.body)
			assert.Equal(t, c.field, f.Field)
			assert.Equal(t, c.msg, f.Message)
		})
	}
}

// manyKeysBody is an object with keys k00… and then extra.
func manyKeysBody(n int, extra string) string {
	var sb strings.Builder
	sb.WriteString("{")
	for i := 0; i < n; i++ {
		sb.WriteString(`"k` + string(rune('0'+i/10)) + string(rune('0'+i%10)) + `":1,`)
	}
	sb.WriteString(`"` + extra + `":2}`)
	return sb.String()
}

func TestScanJSONAcceptsGoodAndLeavesMalformedToTheDecoder(t *testing.T) {
	for _, body := range []string{
		`{}`, `[]`, `null`, `12.5e3`, `"x"`,
		`{"fullName":"Zoë \u00e9 \ud83d\ude00 😀 中文","tags":["a","b"],"n":-1.5E+10,"ok":true,"no":false,"z":null}`,
		`{"a":{"k":1},"b":{"k":1}}`,                       // equal keys in different objects
		`{"a":[{"k":1},{"k":1}]}`,                         // equal keys in sibling array elements
		strings.Repeat("[", 64) + strings.Repeat("]", 64), // exactly the limit
		manyKeysBody(60, "zz"),
		// Numbers within float64's range, however written.
		`{"max":1.7976931348623157e308,"min":-1.7976931348623157E+308,"tiny":1e-400,"long":99999999999999999999999}`,
		`{"digits":` + strings.Repeat("9", 308) + `}`,
		// Malformed JSON is the decoder's to report.
		`{"a":`, `{"a" 1}`, `{"a":1,}`, `{"a":"x\q"}`, `{"a":"\u12"}`, "{\"a\":\"tab\there\"}", `{"a":tru}`, `{'a':1}`,
		`{"a":1e}`, `{"a":1e400e}`, `{"a":--1e999}`,
	} {
		assert.Nil(t, scanJSON([]byte(body)), body)
	}
}

func TestCheckText(t *testing.T) {
	assert.Equal(t, "", checkText("Idem-Key_1 é"))
	assert.Equal(t, msgNUL, checkText("a\x00"))
	assert.Equal(t, msgUTF8, checkText("a\xff"))
	assert.Equal(t, `a\u0000b`+"\uFFFD", printable("a\x00b\xff"))
}

func TestScanJSONDoesNotAllocateOnAGoodBody(t *testing.T) {
	body := []byte(benchBody)
	scanJSON(body) // warm the pool
	allocs := testing.AllocsPerRun(100, func() { scanJSON(body) })
	assert.Zero(t, allocs)
}

const benchBody = `{"customerType":"INDIVIDUAL","platformCustomerId":"cust-0001","region":"US",` +
	`"fullName":"Zoë Ångström","birthDate":"1990-01-02","nationality":"US",` +
	`"address":{"line1":"1 Main St","line2":"Apt 2","city":"Springfield","state":"IL","postalCode":"62701","country":"US"},` +
	`"roles":["UBO","DIRECTOR"],"amount":100,"destination":{"accountId":"InternalAccount:019542f5-b3e7-1d02-0000-000000000001"},` +
	`"description":"a transfer with some text in it, long enough to be representative of a real request body"}`

// BenchmarkScanJSON measures the boundary check on a typical body (goal:
// well under a microsecond per hundred bytes, no allocation).
func BenchmarkScanJSON(b *testing.B) {
	body := []byte(benchBody)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if f := scanJSON(body); f != nil {
			b.Fatal(f)
		}
	}
}

func TestTimeFormatMessage(t *testing.T) {
	for in, want := range map[string]string{
		"invalid date/time for format 2006-01-02T15:04:05.999999999Z07:00": "must be an RFC 3339 date-time such as 2026-03-01T12:00:00Z",
		"invalid date/time for format 2006-01-02T15:04:05Z07:00":           "must be an RFC 3339 date-time such as 2026-03-01T12:00:00Z",
		"invalid date/time for format 2006-01-02":                          "must be a date such as 2026-03-01",
		"invalid date/time for format 15:04":                               "must be a time in the layout 15:04",
		"expected number >= 1":                                             "expected number >= 1",
	} {
		if got := timeFormatMessage(in); got != want {
			t.Errorf("timeFormatMessage(%q) = %q, want %q", in, got, want)
		}
	}
}
